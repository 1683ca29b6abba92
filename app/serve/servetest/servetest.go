// Package servetest starts a built packlab's `serve` in a test, as a shell
// would start it, and waits for the line that names the browser lab's URL:
// what the command line's and the browser's end-to-end tests share.
package servetest

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"
)

// Server is a running packlab serve.
type Server struct {
	Cmd    *exec.Cmd
	URL    string        // http://127.0.0.1:PORT/
	Line   string        // the line of its standard output that names URL
	Stderr *bytes.Buffer // what it has written on its standard error
}

var urlPattern = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)

// Start starts cmd, a packlab serve listening on 127.0.0.1, and waits up
// to within for the line naming its URL; the test fails, the server
// stopped, when none comes by then or serve ends before printing one.
// Standard output is read to its end after that line, so serve never
// blocks on it.
func Start(t testing.TB, cmd *exec.Cmd, within time.Duration) *Server {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Cmd: cmd, Stderr: new(bytes.Buffer)}
	cmd.Stderr = s.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if urlPattern.MatchString(sc.Text()) {
				lines <- sc.Text()
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			cmd.Wait()
			t.Fatalf("packlab serve ended without printing its URL (%v): %s", cmd.ProcessState, s.Stderr)
		}
		s.Line, s.URL = line, urlPattern.FindString(line)
		return s
	case <-time.After(within):
		s.Stop()
		t.Fatalf("packlab serve printed no URL within %v: %s", within, s.Stderr)
	}
	return nil
}

// Stop interrupts the server, as Ctrl-C does, and waits for it to end:
// at most 5 s, then it is killed.
func (s *Server) Stop() {
	_ = s.Cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.Cmd.Process.Kill()
		<-done
	}
}
