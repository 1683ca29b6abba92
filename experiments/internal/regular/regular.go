// Package regular reads a small file a user names (a saved result, a CA
// file) by rules that a hostile or odd path cannot turn into a hang or a
// crash: only a regular file (after symbolic links) of at most a given
// size is read; anything else (a named pipe, a device, /dev/zero behind a
// link, a folder) is refused with what it is, and is never opened in a way
// that can block.
package regular

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/packlab/packlab/experiments/text"
)

// Kind names what a file that is not a regular file is: "a named pipe
// (FIFO)", "a character device", "a folder".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a regular file"
}

// Read reads path whole when it is a regular file of at most max bytes;
// otherwise the error says what it is instead, and what (such as "a result
// file") may be at most max bytes. The open cannot block (O_NONBLOCK), and
// the opened file is checked again, so a named pipe swapped in after the
// first look is refused too.
func Read(path string, max int64, what string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	check := func(st fs.FileInfo) error {
		if !st.Mode().IsRegular() {
			return fmt.Errorf("is %s, not a regular file", Kind(st.Mode()))
		}
		if st.Size() > max {
			return fmt.Errorf("is %s, more than the %s %s may be", text.Bytes(st.Size()), text.Bytes(max), what)
		}
		return nil
	}
	if err := check(st); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|OpenNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := check(st); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("grew past the %s %s may be while read", text.Bytes(max), what)
	}
	return data, err
}
