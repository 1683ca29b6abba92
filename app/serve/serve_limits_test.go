package serve

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServe runs packlab serve on a free loopback port over dir and
// returns its address; the server stops when the test ends.
func startServe(t *testing.T, dir string) string {
	t.Helper()
	t.Chdir(t.TempDir()) // serve the folder as it is: no source to rebuild from
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runContext(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--dir", dir}, &out, &errOut)
	}()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/`).FindStringSubmatch(out.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("no URL printed: %q %q", out.String(), errOut.String())
	return ""
}

// rawGet sends one keep-alive GET on c and reads the response's status.
func rawGet(t *testing.T, c net.Conn, r *bufio.Reader, path string) int {
	t.Helper()
	io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeHardening: issue 14's findings against packlab serve. Idle
// keep-alive connections are closed; no more than serveLimits.conns are
// served at once; every response forbids framing and foreign scripts; a
// symbolic link out of the site folder is not followed (one inside is).
func TestServeHardening(t *testing.T) {
	old := serveLimits
	serveLimits.idle, serveLimits.conns = 300*time.Millisecond, 3
	defer func() { serveLimits = old }()

	dir, _ := site(t)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o644)
	os.Symlink(secret, filepath.Join(dir, "out.txt"))
	os.Symlink("lab.js", filepath.Join(dir, "js", "in.js"))
	addr := startServe(t, dir)

	// Headers, on a page and on a 404.
	for _, path := range []string{"/", "/missing"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "script-src 'self' 'wasm-unsafe-eval'") ||
			resp.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("GET %s: CSP %q, X-Frame-Options %q; want frame-ancestors 'none', scripts from the site, DENY", path, csp, resp.Header.Get("X-Frame-Options"))
		}
	}
	// Links.
	for path, want := range map[string]int{"/out.txt": 404, "/js/in.js": 200} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || strings.Contains(string(body), "secret") {
			t.Errorf("GET %s: %d %q, want %d", path, resp.StatusCode, body, want)
		}
	}

	// An idle keep-alive connection is closed by the server.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	if code := rawGet(t, c, br, "/"); code != 200 {
		t.Fatalf("GET /: %d", code)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("an idle keep-alive connection: read %v, want EOF (closed by the server) well before 10 s", err)
	}

	// The connection cap: with 3 connections held (each half-way through
	// its request's header, so not idle), a 4th is not served until one of
	// them closes.
	var held []net.Conn
	for range 3 {
		h, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer h.Close()
		io.WriteString(h, "GET / HTTP/1.1\r\n")
		held = append(held, h)
	}
	extra, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	io.WriteString(extra, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
	extra.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	er := bufio.NewReader(extra)
	if _, err := er.ReadByte(); err == nil {
		t.Error("a connection beyond the cap was served while the cap was held")
	}
	held[0].Close()
	extra.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(er, nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("the waiting connection after a slot freed: %v", err)
	}
}

// TestHostGuard: requests for localhost, an address or an allowed name are
// served; a name the server was not told of (a rebinding page's) gets 403
// naming --allow-host.
func TestHostGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	h := hostGuard([]string{"lab.example.com"}, ok)
	for host, want := range map[string]int{
		"localhost:8080": 200, "127.0.0.1:8080": 200, "[::1]:8080": 200, "10.0.0.5": 200, "LOCALHOST": 200,
		"lab.example.com:8080": 200, "lab.example.com.": 200,
		"evil.example:8080": 403, "attacker.test": 403, "localhost.evil.example": 403,
	} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
		if want == 403 && !strings.Contains(rec.Body.String(), "--allow-host") {
			t.Errorf("Host %s: the refusal %q does not say how to allow it", host, rec.Body.String())
		}
	}
}

// TestServeStalledReaders: clients that ask for the WebAssembly download and
// never read it hold their connections for one stall, not the write
// timeout: with every slot taken by such clients, a new one is served once
// the stall passes.
func TestServeStalledReaders(t *testing.T) {
	old := serveLimits
	serveLimits.stall, serveLimits.conns = 300*time.Millisecond, 3
	defer func() { serveLimits = old }()
	dir, _ := site(t)
	big := make([]byte, 48<<20) // more than loopback's socket buffers hold
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startServe(t, dir)
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n") // and never read
	}
	time.Sleep(100 * time.Millisecond)
	took := getBeside(t, addr, "three stalled downloads", 10*time.Second)
	t.Logf("served after %v beside three stalled downloads (stall %v)", took.Round(time.Millisecond), serveLimits.stall)
}

// getBeside is how long a normal client waits for GET / from addr, beside
// the clients a test holds open (named by beside); it fails the test on any
// answer but 200, or none within limit.
func getBeside(t *testing.T, addr, beside string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(limit))
	if code := rawGet(t, c, bufio.NewReader(c), "/"); code != 200 {
		t.Fatalf("GET / beside %s: %d", beside, code)
	}
	return time.Since(start)
}

// TestServeChecksFirst: a port in use and a --dir that is a file are said
// at once, as bad input, before any site is built.
func TestServeChecksFirst(t *testing.T) {
	t.Chdir(t.TempDir())
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	file := filepath.Join(t.TempDir(), "site.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--addr", held.Addr().String(), "--dir", t.TempDir()}, "cannot listen"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--dir", file}, "is a file"},
	} {
		start := time.Now()
		_, _, err := packlab(t, c.args...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), c.want) || time.Since(start) > 2*time.Second {
			t.Errorf("%v: %v (exit %d) after %v, want exit 2 saying %q at once", c.args, err, exitCode(err), time.Since(start), c.want)
		}
	}
}

// TestServeUnderIdleAndSlowClients is the target: 200 clients that
// connect and send nothing, and 200 that ask for a large file and never
// read it, while a normal client's request is answered within a second.
// The slow readers take tiny receive buffers, so that the test holds
// little kernel memory.
func TestServeUnderIdleAndSlowClients(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 400 connections")
	}
	dir, _ := site(t)
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := startServe(t, dir)
	small := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	for i := range 400 {
		d := net.Dialer{}
		if i%2 == 1 {
			d = small
		}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		defer c.Close()
		if i%2 == 1 {
			io.WriteString(c, "GET /big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n") // and never read
		}
	}
	time.Sleep(200 * time.Millisecond)
	took := getBeside(t, addr, "200 idle clients and 200 stalled downloads", 30*time.Second)
	t.Logf("GET / beside 200 idle clients and 200 stalled downloads: answered in %v", took.Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("GET / beside 200 idle clients and 200 stalled downloads answered after %v, want within 1 s", took.Round(time.Millisecond))
	}
}
