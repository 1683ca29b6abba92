package serve

// What packlab serve does to stay up and keep the page to itself: timeouts
// on every phase of a connection, a cap on connections, response headers
// that forbid framing and any script or connection not from the site, and a
// site folder opened as an os.Root, so that no symbolic link leads out of it.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// serveLimits are the server's timeouts and connection cap; tests shorten
// them.
var serveLimits = struct {
	readHeader, read, write, idle time.Duration
	stall                         time.Duration
	conns                         int
}{
	readHeader: 10 * time.Second,
	read:       30 * time.Second, // requests are GETs with no body
	// write: the whole response of one request, however slow its reader,
	// as long as it keeps reading: packlab.wasm is 28 MB (6 MB gzipped).
	write: 30 * time.Minute,
	// stall: the longest one write may block. A client that stops reading
	// (or never starts) loses its connection after it, so that a handful
	// of them cannot hold every connection slot for the write timeout.
	stall: 20 * time.Second,
	idle:  30 * time.Second, // a keep-alive connection with no request
	// conns: open connections at once, a bound on the file descriptors,
	// not on clients: a browser opens up to 6 per host, and clients that
	// send nothing or stop reading are shed by the header and stall
	// timeouts above, so that hundreds of them leave room for the rest
	// (TestServeUnderIdleAndSlowClients: 200 of each, a normal request
	// answered at once). Beyond it, connections wait in the kernel's queue
	// until one closes.
	conns: 1024,
}

// contentSecurityPolicy lets the page run its own scripts, the wasm core
// ('wasm-unsafe-eval' allows WebAssembly compilation, not eval) and its Web
// Worker, fetch from the site only, and be framed by no one. Styles allow
// inline attributes (the page's layout uses a few).
const contentSecurityPolicy = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self'; " +
	"style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// securityHeaders are set on every response of the site.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// newSiteServer is the http.Server of packlab serve, with serveLimits.
func newSiteServer(root http.FileSystem, allowHosts []string) *http.Server {
	return &http.Server{
		Handler:           hostGuard(allowHosts, stallGuard(siteHandler(root))),
		ReadHeaderTimeout: serveLimits.readHeader,
		ReadTimeout:       serveLimits.read,
		WriteTimeout:      serveLimits.write,
		IdleTimeout:       serveLimits.idle,
		MaxHeaderBytes:    64 << 10,
	}
}

// siteFolder opens dir as an os.Root: a file is served only if it and every
// link on the way to it stay inside dir.
func siteFolder(dir string) (http.FileSystem, func(), error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	return http.FS(r.FS()), func() { r.Close() }, nil
}

// limitListener accepts at most n connections at once; Accept waits for
// one to close (the waiting ones queue in the kernel's backlog).
type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back when closed.
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// hostGuard answers only requests whose Host is this machine by address (an
// IP literal: DNS rebinding needs a name), localhost, or a name given with
// --allow-host; any other gets 403 and one line saying how to allow it. A
// page of another site that rebinds its own name to 127.0.0.1 sends that
// name as Host, and is refused.
func hostGuard(allow []string, next http.Handler) http.Handler {
	names := map[string]bool{"localhost": true}
	for _, h := range allow {
		names[h] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.ToLower(strings.Trim(host, "[]"))
		if net.ParseIP(host) == nil && !names[strings.TrimSuffix(host, ".")] {
			securityHeaders(w.Header())
			http.Error(w, fmt.Sprintf("packlab serve answers to localhost and this machine's addresses; start it with --allow-host %s to answer to %q", host, host), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// stallGuard gives every write of a response serveLimits.stall to go
// through: the deadline moves on with each 64 KiB written, so a slow reader
// that keeps reading gets its whole download (at 3.2 KB/s or more), and a
// connection whose reader stopped is closed after one stall. It replaces
// the server's write timeout, which it resets.
func stallGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Now().Add(serveLimits.stall))
		next.ServeHTTP(&stallWriter{ResponseWriter: w, rc: rc}, r)
	})
}

type stallWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (s *stallWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 { // in 64 KiB steps, each with its own stall deadline
		chunk := p[:min(len(p), 64<<10)]
		_ = s.rc.SetWriteDeadline(time.Now().Add(serveLimits.stall))
		m, err := s.ResponseWriter.Write(chunk)
		n += m
		if err != nil {
			return n, err
		}
		p = p[len(chunk):]
	}
	return n, nil
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
