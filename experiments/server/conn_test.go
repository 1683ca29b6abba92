//go:build !js

package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/packlab/packlab/experiments/dict"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/server/servertest"
)

func asError(err error, e **Error) bool { return errors.As(err, e) }

// TestBadURLs: each a FieldError naming the value and what is allowed,
// never showing a password.
func TestBadURLs(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"", "not a URL with a host"},
		{"localhost:9000", "localhost:9000: no scheme (allowed: clickhouse://"},
		{"ftp://host", `unknown scheme "ftp"`},
		{"clickhouse://host:99999", "port out of range"},
		{"clickhouse://alice:hunter2@host", "holds a password"},
		{"http://[::1", "not a URL with a host"},
		{"clickhouse://bob@host/db1", ""},
	} {
		_, err := Settings{URL: tc.url, User: "alice", Database: "db1"}.ParseURL()
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), `names user "bob"`) {
				t.Errorf("%q: %v, want the two users named", tc.url, err)
			}
			continue
		}
		var fe *fault.FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "allowed: clickhouse://") {
			t.Errorf("%q: %v, want a field error saying %q", tc.url, err, tc.want)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the password shows: %v", tc.url, err)
		}
	}
	// TLS asked for over plain HTTP: refused, not sent in the clear.
	if _, err := (Settings{URL: "http://host", Secure: true}).ParseURL(); err == nil || !strings.Contains(err.Error(), "http://host: secure needs https:// (TLS over HTTP)") {
		t.Errorf("http:// with Secure: %v, want refused naming https://", err)
	}
	if e, err := (Settings{URL: "https://host", Secure: true}).ParseURL(); err != nil || !e.TLS {
		t.Errorf("https:// with Secure: %+v, %v", e, err)
	}
	e, err := Settings{URL: "https://u@example.com/sales"}.ParseURL()
	if err != nil || e.Host != "example.com:8443" || !e.TLS || e.User != "u" || e.Database != "sales" || e.Protocol != "http" {
		t.Errorf("https://u@example.com/sales: %+v, %v", e, err)
	}
}

// TestCAFileNotAFile: a CA file that is a named pipe, a device or too big
// is refused at once as a FieldError on ca_file, saying what it is. A named
// pipe's open waited forever for a writer (a Ctrl-C or SIGTERM could not
// end it), and /dev/zero was read until the process ran out of memory.
func TestCAFileNotAFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ca.pem")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxCAFileBytes+1<<20); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{dir, "is a folder, not a regular file"},
		{big, "is 5.0 MiB, more than the 4.0 MiB a CA file may be"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Connect(context.Background(), Settings{URL: "https://127.0.0.1:1", CAFile: tc.file, ConnectTimeout: time.Second})
			done <- err
		}()
		select {
		case err := <-done:
			var fe *fault.FieldError
			if !errors.As(err, &fe) || fe.Field != "ca_file" || fe.Value != tc.file || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CA file %s: %v, want a field error on ca_file saying %q", tc.file, err, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("CA file %s: Connect has not returned after 10 s", tc.file)
		}
	}
}

// TestUnreachable: a closed port, something that is not ClickHouse, and
// something that accepts and never answers; each a typed error, the
// password nowhere in it.
func TestUnreachable(t *testing.T) {
	const password = "pw-never-shown-7"
	ctx := context.Background()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	check := func(name, url string, kinds ...ErrorKind) {
		t.Helper()
		start := time.Now()
		_, err := Connect(ctx, Settings{URL: url, Password: password, ConnectTimeout: time.Second, QueryTimeout: 2 * time.Second})
		var e *Error
		if !errors.As(err, &e) || !containsKind(kinds, e.Kind) {
			t.Errorf("%s (%s): %v, want one of %q", name, url, err, kinds)
			return
		}
		if strings.Contains(err.Error(), password) {
			t.Errorf("%s: the password shows: %v", name, err)
		}
		t.Logf("%s: %v (%s)", name, err, time.Since(start).Round(time.Millisecond))
	}
	check("closed native port", "clickhouse://"+closed, NotListening)
	check("closed HTTP port", "http://"+closed, NotListening)
	// A name that resolves to nothing (.invalid never does, RFC 6761): not
	// "not listening", there is no address to listen on.
	// Where no resolver answers (a machine without DNS) the lookup times
	// out instead, which is a timeout: the check needs its "no such host".
	var dns *net.DNSError
	if _, err := net.LookupHost("no-such-host.invalid"); errors.As(err, &dns) && dns.IsNotFound {
		check("unknown host, native", "clickhouse://no-such-host.invalid:9000", UnknownHost)
		check("unknown host, HTTP", "http://no-such-host.invalid:8123", UnknownHost)
	} else {
		t.Logf("unknown host not checked: the resolver says %v, not that no such host exists", err)
	}

	// Not ClickHouse: a server that answers every connection with a line
	// of text and closes it.
	junk, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer junk.Close()
	go func() {
		for {
			c, err := junk.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"))
			c.Close()
		}
	}()
	check("not ClickHouse, native", "clickhouse://"+junk.Addr().String(), NotClickHouse, Gone)
	check("not ClickHouse, HTTP", "http://"+junk.Addr().String(), NotClickHouse, Unreadable, Gone)

	// A server that accepts and never answers: a timeout.
	mute := servertest.Mute(t)
	check("a server that never answers", "clickhouse://"+mute, Timeout)
	// Over HTTP too: the client's "acquire conn timeout. you can increase
	// the number of max open conn" was called not ClickHouse.
	check("a server that never answers, HTTP", "http://"+mute, Timeout)
	check("a server that never answers, HTTPS", "https://"+mute, Timeout)
}

// TestTimeoutNamesItsSetting: a server that accepts and never answers
// ends the wait at the timeout that bounds it, and the error names that
// setting and its length: over HTTP the query timeout bounds the first
// answer, so a shorter one ended the wait (it was called the connect
// timeout's, with the connect timeout's length).
func TestTimeoutNamesItsSetting(t *testing.T) {
	mute := servertest.Mute(t)
	for _, tc := range []struct {
		url            string
		connect, query time.Duration
		want           string
	}{
		{"http://" + mute, 5 * time.Second, time.Second, "timeout: no answer in 1s (query_timeout)"},
		{"http://" + mute, time.Second, 5 * time.Second, "timeout: no answer in 1s (connect_timeout)"},
		{"clickhouse://" + mute, time.Second, 5 * time.Second, "timeout: no answer in 1s (connect_timeout)"},
	} {
		start := time.Now()
		_, err := Connect(context.Background(), Settings{URL: tc.url, ConnectTimeout: tc.connect, QueryTimeout: tc.query})
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			t.Errorf("%s, connect timeout %s, query timeout %s: %v after %s, want it to end %q", tc.url, tc.connect, tc.query, err, time.Since(start).Round(time.Millisecond), tc.want)
		}
		if waited := time.Since(start); waited > 4*time.Second {
			t.Errorf("%s: waited %s, past the shorter timeout", tc.url, waited.Round(time.Millisecond))
		}
	}
}

// TestConnectCancelled: a connection to a server that accepts and never
// answers ends when its context does (Ctrl-C), not at the connect timeout:
// the native client's handshake waited the whole timeout (10 s by default)
// and then said "timeout", and over HTTP the cancel was "not ClickHouse".
func TestConnectCancelled(t *testing.T) {
	mute := servertest.Mute(t)
	for _, url := range []string{"clickhouse://" + mute, "http://" + mute} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		_, err := Connect(ctx, Settings{URL: url, ConnectTimeout: 30 * time.Second, QueryTimeout: 30 * time.Second})
		cancel()
		if took := time.Since(start); !errors.Is(err, fault.ErrCancelled) || took > 5*time.Second {
			t.Errorf("%s, cancelled after 200ms: %v after %s; want a cancel at once", url, err, took.Round(time.Millisecond))
		}
	}
}

// TestOtherProtocol: a URL that names the protocol the port does not speak
// (the native port's answer to HTTP is a 400, the HTTP port's to the
// native handshake an unreadable packet) says which URL reaches it.
func TestOtherProtocol(t *testing.T) {
	node := servertest.Start(t)
	for _, c := range []struct{ url, want string }{
		{fmt.Sprintf("http://127.0.0.1:%d", node.TCPPort), "ClickHouse speaks the native protocol on this port, not HTTP (allowed: " + node.NativeURL() + ", or http:// at its HTTP port (8123 by default))"},
		{fmt.Sprintf("clickhouse://127.0.0.1:%d", node.HTTPPort), "ClickHouse speaks HTTP on this port, not the native protocol (allowed: " + node.HTTPURL() + ", or clickhouse:// at its native port (9000 by default))"},
	} {
		_, err := Connect(context.Background(), Settings{URL: c.url, ConnectTimeout: 5 * time.Second})
		var e *Error
		if !errors.As(err, &e) || e.Kind != OtherProtocol || e.Msg != c.want {
			t.Errorf("%s: %v\nwant %s", c.url, err, c.want)
		}
	}
}

func containsKind(kinds []ErrorKind, k ErrorKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

func TestQuoting(t *testing.T) {
	for in, want := range map[string]string{"a`b": "`a\\`b`", `x\y`: "`x\\\\y`", "plain name": "`plain name`"} {
		if got := dict.QuoteIdent(in); got != want {
			t.Errorf("dict.QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
	if got := dict.QuoteString(`it's \ here`); got != `'it\'s \\ here'` {
		t.Errorf("quoteString = %s", got)
	}
	src, p := sourceTable(`CREATE DICTIONARY x.y (id UInt64) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'we\'ird' DB 'other' WHERE 'id > 3 AND s != \'x\'')) LIFETIME(0) LAYOUT(HASHED())`, "x", "")
	if src != (sourceRef{db: "other", table: "we'ird", where: "id > 3 AND s != 'x'"}) || p != "" {
		t.Errorf("sourceTable: %+v %q", src, p)
	}
}

// TestReleases: version()'s answer, read; before 19.17 is too old (no
// server that old runs here: Debian's 18.16 does not run beside 26.7's
// library, so the rule is checked on the answer).
func TestReleases(t *testing.T) {
	for release, want := range map[string]ErrorKind{"26.7.2.1": "", "19.17.1.1": "", "19.16.14.65": TooOld, "18.16.1": TooOld, "hello": NotClickHouse, "": NotClickHouse} {
		_, err := checkRelease("h:9000", release)
		var e *Error
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", release, err)
		case want != "" && (!errors.As(err, &e) || e.Kind != want):
			t.Errorf("%q: %v, want %s", release, err, want)
		}
	}
}

// connect is a test's connection, closed when the test ends; it fails the
// test when it cannot connect.
func connect(t *testing.T, s Settings) *Conn {
	t.Helper()
	c, err := Connect(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestLoginRefused: a user or a database the server refuses is bad input
// naming the field it was given in (the user's own, else the URL) and its
// value, with ClickHouse's words and what is allowed; the password never
// shown. Over HTTP only: the test server's native listener ends the whole
// server after a refused login (docs/clickhouse-server.md).
func TestLoginRefused(t *testing.T) {
	node := servertest.Start(t)
	const password = "pw-never-shown-42"
	for _, c := range []struct {
		s                   Settings
		field, value, words string
	}{
		{Settings{URL: node.HTTPURL(), User: "nope"}, "user", "nope", "user nope: refused by ClickHouse at 127.0.0.1:"},
		{Settings{URL: strings.Replace(node.HTTPURL(), "//", "//nope@", 1)}, "url", strings.Replace(node.HTTPURL(), "//", "//nope@", 1), "code 516: Authentication failed"},
		{Settings{URL: node.HTTPURL(), Password: password}, "url", node.HTTPURL(), "(allowed: a user the server knows, with its password in password)"},
		{Settings{URL: node.HTTPURL(), Database: "nope"}, "database", "nope", "code 81: Database nope does not exist"},
	} {
		_, err := Connect(context.Background(), c.s)
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Value != c.value || !strings.Contains(err.Error(), c.words) || strings.Contains(err.Error(), password) {
			t.Errorf("%+v: %v; want a FieldError of %s %s saying %q", c.s, err, c.field, c.value, c.words)
		}
	}
	if node.Exited() {
		t.Error("the server ended")
	}
}
