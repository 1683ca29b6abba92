//go:build unix

package source

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
)

var u64, u16 = core.MustType("UInt64"), core.MustType("UInt16")

// within runs f and fails the test if it has not returned within limit: a
// test of a hang that came back ends instead of hanging the suite.
func within(t *testing.T, limit time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("%s did not return within %v of the cancel", what, limit)
	}
	return nil
}

// TestFileSourceStopsWithin64KiB: a cancelled load stops within 64 KiB of
// input whatever the input is: blank lines, bad rows being skipped, or a
// gzip of blank lines (issue 14: Ctrl-C during 3 GB of gzipped blank lines
// took 27 s). The error wraps context.Canceled and names the line reached.
func TestFileSourceStopsWithin64KiB(t *testing.T) {
	const total = 4 << 20 // 4 MiB of input after the first row
	for _, c := range []struct {
		name, line string
		gz         bool
		opts       []string
	}{
		{"blank.tsv", "\n", false, nil},
		{"bad.tsv", "x\ty\n", false, []string{"skip"}},
		{"blank.tsv.gz", "\n", true, nil},
	} {
		path := writeFile(t, c.name, "1\t2\n"+strings.Repeat(c.line, total/len(c.line)), c.gz)
		ctx, cancel := context.WithCancel(context.Background())
		src, err := OpenContext[uint64, uint16](ctx, testFileSpec(path, c.opts...), u64, u16)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		var b core.Block[uint64, uint16]
		err = src.Next(&b, core.DefaultBlockRows)
		src.Close()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: Next after cancel = %v, want context.Canceled", c.name, err)
			continue
		}
		m := regexp.MustCompile(`:(\d+): reading stopped: context canceled$`).FindStringSubmatch(err.Error())
		if m == nil {
			t.Errorf("%s: %q does not name the line reached", c.name, err)
			continue
		}
		line, _ := strconv.Atoi(m[1])
		if read := (line - 2) * len(c.line); read > cancelCheckBytes+len(c.line) {
			t.Errorf("%s: stopped at line %d, %d bytes after the cancel, want at most %d", c.name, line, read, cancelCheckBytes)
		}
	}
}

// TestFIFOOpenStopsOnCancel: a FIFO with no writer blocks open(2); the
// open ends with the cancel instead of waiting forever (issue 14: only
// kill -9 ended it, after 13 minutes).
func TestFIFOOpenStopsOnCancel(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "keys.tsv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	err := within(t, 10*time.Second, "opening a FIFO with no writer", func() error {
		src, err := OpenContext[uint64, uint16](ctx, testFileSpec(fifo), u64, u16)
		if err == nil {
			src.Close()
		}
		return err
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), fifo) {
		t.Errorf("open of a FIFO with no writer, cancelled: %v, want context.Canceled naming the file", err)
	}
}

// TestFIFOReadStopsOnCancel: a writer that opened the FIFO and then stalls
// leaves a read blocked; the cancel ends it.
func TestFIFOReadStopsOnCancel(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "keys.tsv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	release := make(chan struct{})
	defer close(release)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		w.WriteString("1\t2\n") // one row, then nothing, the pipe held open
		<-release
	}()
	ctx, cancel := context.WithCancel(context.Background())
	src, err := OpenContext[uint64, uint16](ctx, testFileSpec(fifo), u64, u16)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	time.AfterFunc(50*time.Millisecond, cancel)
	var b core.Block[uint64, uint16]
	err = within(t, 10*time.Second, "reading a stalled FIFO", func() error { return src.Next(&b, core.DefaultBlockRows) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("read of a stalled FIFO, cancelled: %v, want context.Canceled", err)
	}
}

// TestFromFile: a file opened by someone else (a worker's stream from
// its parent) is read once, and messages name it as the user did.
func TestFromFile(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		w.WriteString("1\t2\n3\t4\n5\t70000\n")
		w.Close()
	}()
	src, err := FromFile[uint64, uint16](context.Background(), r, testFileSpec("/dev/stdin"), u64, u16)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var b core.Block[uint64, uint16]
	err = src.Next(&b, core.DefaultBlockRows)
	if err == nil || err.Error() != `/dev/stdin:3: column 2: "70000" is out of range for UInt16 (0 to 65535)` {
		t.Errorf("bad row from an open pipe: %v", err)
	}
	if _, err := FromFile[uint64, uint16](context.Background(), nil, testFileSpec("x"), u64, u16); err == nil {
		t.Error("FromFile with no file succeeded")
	}
	if err := src.Next(&b, 1); err == io.EOF {
		t.Error("a failed source reads on")
	}
}
