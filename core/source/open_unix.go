//go:build unix

package source

import (
	"context"
	"io/fs"
	"os"
	"syscall"
)

// openWait opens a stream for reading in a goroutine, and gives up when ctx
// ends. A FIFO's open waits for a writer; to end that wait, openWait opens
// the FIFO for writing itself for a moment (O_NONBLOCK: it succeeds at once
// because a reader is waiting), which lets the abandoned open return, and
// the file it returns is closed.
func openWait(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
	}
	if st, err := os.Stat(path); err == nil && st.Mode()&fs.ModeNamedPipe != 0 {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	go func() {
		if o := <-done; o.f != nil {
			o.f.Close()
		}
	}()
	return nil, ctx.Err()
}
