package source

// Opening and reading a key file so that a cancel always ends it.
//
// A regular file is opened at once and read in bounded time. A stream (a
// named pipe, a character device, /dev/stdin, a shell's <(process
// substitution)) can block: open(2) of a FIFO waits for a writer, and a read
// waits for data. OpenFile waits for the open in a goroutine it can abandon
// (openWait, per platform), and a file source started with a context sets a
// read deadline on the file when the context ends, which wakes a read
// blocked on a pipe or a terminal (Go's poller serves those). Besides, the
// file source looks at the context at least every cancelCheckBytes of
// input, good rows or bad or blank, so a gzip of gigabytes of blank lines
// stops as soon as asked, not at its end.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/packlab/packlab/core"
)

// cancelCheckBytes is how much (decompressed) input a file source reads at
// most between two looks at its context.
const cancelCheckBytes = 64 << 10

// IsStream reports whether path names something that can be read only once,
// as it comes: a named pipe, a character device, a socket (anything that
// exists and is neither a regular file nor a folder). It follows symbolic
// links, so /dev/stdin and /dev/fd/N answer for what they lead to.
func IsStream(path string) (kind string, stream bool) {
	st, err := os.Stat(path)
	if err != nil || st.Mode().IsRegular() || st.IsDir() {
		return "", false
	}
	m := st.Mode()
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a pipe", true
	case m&fs.ModeCharDevice != 0:
		return "a character device", true
	case m&fs.ModeSocket != 0:
		return "a socket", true
	}
	return "not a regular file", true
}

// OpenFile opens path for reading as a file source does: a regular file at
// once; a stream so that the end of ctx ends the wait for its other end
// (the error is then ctx's). Errors name the path.
func OpenFile(ctx context.Context, path string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, fileErr(path, 0, "not opened: %w", err)
	}
	var f *os.File
	var err error
	if _, stream := IsStream(path); stream {
		f, err = openWait(ctx, path)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fileErr(path, 0, "stopped while waiting for it to open: %w", ctx.Err())
		}
		return nil, fileErr(path, 0, "%w", PathErrorReason(err))
	}
	return f, nil
}

// OpenContext is Open for a source that ctx can stop: a file
// source opens its file with OpenFile, and its Next returns an error
// wrapping ctx's (context.Canceled) within cancelCheckBytes of input, or at
// once when it waits on a stream, after ctx ends.
func OpenContext[K, V core.Bits](ctx context.Context, spec Spec, key, value core.Type) (core.Source[K, V], error) {
	return openSource[K, V](ctx, nil, spec, key, value)
}

// FromFile is OpenContext for a file source whose file f the
// caller has opened already (a stream handed over from another process):
// spec.Path names it in messages. The source owns f and closes it, also
// when it returns an error.
func FromFile[K, V core.Bits](ctx context.Context, f *os.File, spec Spec, key, value core.Type) (core.Source[K, V], error) {
	if f == nil {
		return nil, errors.New("source file: no file given")
	}
	if spec.Kind != File {
		f.Close()
		return nil, fmt.Errorf("source %q: an open file needs a file source spec", spec.String())
	}
	return openSource[K, V](ctx, f, spec, key, value)
}

// watchCancel sets a read deadline in the past on f once ctx ends, waking a
// read blocked on a pipe or a terminal. The returned stop undoes the watch.
func watchCancel(ctx context.Context, f *os.File) (stop func() bool) {
	return context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
}
