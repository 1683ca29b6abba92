package store

// Files packlab reads from a folder or writes where a user points, by rules
// that a hostile or odd folder cannot turn into a hang, a crash or the loss
// of a system file:
//
//   - a result file is read only when it is a regular file (after symbolic
//     links) of at most MaxResultBytes; anything else (a named pipe, a
//     device, /dev/zero behind a link) is skipped with a line saying what it
//     is, and is never opened in a way that can block;
//   - an output (report --out) is written whole through a temporary file in
//     the target's folder and renamed over it, so a reader or a crash sees
//     the old file or the new one; a symbolic link is written through (the
//     file it names is replaced, the link stays); a character device or a
//     named pipe (/dev/stdout, /dev/null, a terminal, >(cmd)) is written
//     directly and never replaced; a folder, socket or block device is
//     refused. A new file gets mode 0644, a replaced one keeps its mode.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/regular"
)

// MaxResultBytes is the largest result file the store reads: a result with
// its timeline is a few hundred KiB even for a 1e8-row load of several
// minutes (one point every 100 ms), so 16 MiB is generous and still keeps a
// hostile file from filling memory.
const MaxResultBytes = 16 << 20

// Output is a file being written by the rules above: Write to it, then
// Commit, or Abort to leave the target as it was.
type Output struct {
	Path   string       // as the user gave it
	target string       // Path after symbolic links
	f      *os.File     // what Write writes: the device, or r's temporary file
	r      *replacement // nil when the device is written directly
	done   bool
}

// CreateOutput checks path and opens what will be written: a temporary file
// beside the target, or the device itself. Its errors are *FieldError on
// flag.
func CreateOutput(flag, path string, replace bool) (*Output, error) {
	bad := func(problem, allowed string) error { return fault.New(flag, path, problem, allowed) }
	const allowed = "a file path, or a device such as /dev/stdout"
	if strings.HasSuffix(path, "/") || strings.HasSuffix(path, string(filepath.Separator)) {
		return nil, bad("names a folder", allowed)
	}
	o := &Output{Path: path, target: path}
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&fs.ModeSymlink != 0 {
		t, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, bad("is a symbolic link that leads nowhere: "+source.PathErrorReason(err).Error(), allowed)
		}
		o.target = t
	}
	mode := fs.FileMode(0o644)
	st, err := os.Stat(o.target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, bad("cannot be written: "+source.PathErrorReason(err).Error(), allowed)
	case st.Mode()&(fs.ModeCharDevice|fs.ModeNamedPipe) != 0:
		// Written directly, never replaced. A named pipe with no reader
		// would block the open: O_NONBLOCK makes that ENXIO instead.
		f, err := os.OpenFile(o.target, os.O_WRONLY|regular.OpenNonblock, 0)
		if errors.Is(err, syscall.ENXIO) {
			return nil, bad("is a named pipe that no program is reading", allowed)
		}
		if err != nil {
			return nil, bad("cannot be written: "+source.PathErrorReason(err).Error(), allowed)
		}
		o.f = f
		return o, nil
	case !st.Mode().IsRegular():
		return nil, bad("is "+regular.Kind(st.Mode())+", which a report would replace", allowed)
	case isSavedResult(o.target):
		return nil, bad("is a saved result of the history, which a report never replaces", "a new file")
	case !replace:
		return nil, bad("exists already", "a new file, or {force} to replace it")
	default:
		mode = st.Mode().Perm()
	}
	r, err := newReplacement(o.target, mode)
	if err != nil {
		return nil, bad("cannot write in its folder: "+source.PathErrorReason(err).Error(), allowed)
	}
	o.r, o.f = r, r.File
	return o, nil
}

// Write writes p; its error names the output's path as the user gave it,
// not the temporary file's.
func (o *Output) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = &fs.PathError{Op: pe.Op, Path: o.Path, Err: pe.Err}
	}
	return n, err
}

// Direct reports whether the output is written directly (a device or a
// named pipe), where a write cut short has been read in part.
func (o *Output) Direct() bool { return o.r == nil }

// StopWith makes a write that waits on the reader of a named pipe (one
// that does not read) return when ctx ends, its error
// os.ErrDeadlineExceeded; a file's writes do not wait. release lets ctx go.
func (o *Output) StopWith(ctx context.Context) (release func()) {
	stop := context.AfterFunc(ctx, func() { _ = o.f.SetWriteDeadline(time.Now()) })
	return func() { stop() }
}

// Commit makes what was written the target's content: the temporary file
// is synced and renamed over the target; a device is closed.
func (o *Output) Commit() error {
	if o.done {
		return errors.New("output " + o.Path + ": already finished")
	}
	o.done = true
	if o.r == nil {
		return o.f.Close()
	}
	if err := o.r.commit(); err != nil {
		return fmt.Errorf("writing %s: %w", o.Path, err)
	}
	return nil
}

// Abort drops what was written, leaving the target as it was; it does
// nothing after Commit.
func (o *Output) Abort() {
	if o.done {
		return
	}
	o.done = true
	if o.r == nil {
		o.f.Close()
	} else {
		o.r.abort()
	}
}

// replacement is a file written beside target and renamed over it, so
// that a reader or a crash sees the old file or the new one, never a part
// of the new one. Output, WriteFile and the saving of results write
// through it.
type replacement struct {
	*os.File
	target string
}

// newReplacement creates the temporary file, hidden and named after the
// target, with mode.
func newReplacement(target string, mode fs.FileMode) (*replacement, error) {
	f, err := os.CreateTemp(filepath.Dir(target), tempPrefix+filepath.Base(target)+"-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &replacement{f, target}, nil
}

// commit syncs what was written, renames it over the target and syncs the
// folder so that the rename itself lasts (some file systems cannot sync a
// folder; the file is whole either way); on an error the temporary file is
// gone and the target is as it was.
func (r *replacement) commit() error {
	err := r.Sync()
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(r.Name(), r.target)
	}
	if err != nil {
		os.Remove(r.Name())
		return err
	}
	if d, err := os.Open(filepath.Dir(r.target)); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// abort drops the temporary file.
func (r *replacement) abort() {
	r.Close()
	os.Remove(r.Name())
}

// WriteFile replaces path with data, through a temporary file of the given
// mode beside it (a replacement).
func WriteFile(path string, data []byte, mode fs.FileMode) error {
	r, err := newReplacement(path, mode)
	if err != nil {
		return err
	}
	if _, err := r.Write(data); err != nil {
		r.abort()
		return err
	}
	return r.commit()
}
