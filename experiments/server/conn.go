//go:build !js

// Package server is packlab's side of a user's own ClickHouse: it
// connects to a server (or a cluster, through one of its nodes), reads
// what ClickHouse says of every dictionary, models each with the memory
// model ClickHouse's dictionaries are checked against
// (experiments/dict), and advises (Inspect).
//
// It reads only: system tables, SHOW CREATE-equivalent DDL from
// system.tables, and one bounded query per dictionary with String parts
// (the mean length of its values, from its source table). Every name it
// puts in SQL is quoted (quoteIdent, quoteString); nothing a server
// returns is pasted in unquoted. The password is held in Settings and
// never printed: errors are scrubbed of it (Conn.scrub).
package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/regular"
	"github.com/packlab/packlab/experiments/text"
)

// PasswordEnv is where the password comes from on the command line (or a
// prompt): never a flag, never the URL.
const PasswordEnv = "CLICKHOUSE_PASSWORD"

// Defaults of Settings' timeouts.
const (
	DefaultConnectTimeout = 10 * time.Second
	DefaultQueryTimeout   = 60 * time.Second
)

// maxCAFileBytes is the largest CA file read: a system's whole bundle of
// CAs is about 200 KiB.
const maxCAFileBytes = 4 << 20

// Settings is how to reach a server.
type Settings struct {
	// URL is clickhouse://host[:9000][/database] for the native protocol,
	// http://host[:8123] or https://host[:8443] for HTTP; a user may be in
	// it (clickhouse://alice@host), a password may not.
	URL      string `json:"url"`
	User     string `json:"user"`     // else the URL's, else "default"
	Database string `json:"database"` // else the URL's path, else "default"
	Password string `json:"-"`        // never printed, never saved; its errors name it "password"
	CAFile   string `json:"ca_file"`  // a PEM file of the CAs that sign the server's certificate (turns TLS on)
	// Secure asks for TLS on the native protocol without a CA file (the
	// system's CAs); https:// always has it.
	Secure         bool          `json:"secure"`
	ConnectTimeout time.Duration `json:"connect_timeout"` // 0: DefaultConnectTimeout
	QueryTimeout   time.Duration `json:"query_timeout"`   // each query's; 0: DefaultQueryTimeout
}

// Endpoint is a parsed URL: what a report may show of it (no password).
type Endpoint struct {
	Protocol string `json:"protocol"` // native or http
	Host     string `json:"host"`     // host:port
	User     string `json:"user"`
	Database string `json:"database"`
	TLS      bool   `json:"tls"`
}

func (e Endpoint) String() string {
	scheme := "clickhouse"
	if e.Protocol == "http" {
		scheme = "http"
		if e.TLS {
			scheme = "https"
		}
	}
	return scheme + "://" + e.Host
}

// ErrorKind classes a failure to reach or read a server.
type ErrorKind string

const (
	NotListening  ErrorKind = "not listening"    // nothing accepts a connection there
	UnknownHost   ErrorKind = "unknown host"     // the host's name does not resolve
	NotClickHouse ErrorKind = "not ClickHouse"   // something answers, not ClickHouse's protocol
	OtherProtocol ErrorKind = "other protocol"   // ClickHouse answers there in the protocol the URL does not name
	TooOld        ErrorKind = "too old"          // before DDL dictionaries (19.17)
	Gone          ErrorKind = "connection lost"  // the server went away mid-inspect
	Timeout       ErrorKind = "timeout"          // a connect or query timeout
	Refused       ErrorKind = "refused"          // ClickHouse answered with an error (auth, rights, ...)
	Unreadable    ErrorKind = "unexpected reply" // an answer packlab could not read
)

// Error is a failure to reach or read a server: its kind, where, and
// ClickHouse's or the network's words (the password scrubbed out).
type Error struct {
	Kind ErrorKind
	Host string // host:port
	Msg  string
	// Setting is the field of Settings that bounded a Timeout's wait
	// ("connect_timeout", "query_timeout"), which a face names as the user
	// sets it; "" for the other kinds.
	Setting string
}

func (e *Error) Error() string { return e.Words(fault.Plain) }

// Words is the error with its Setting named by name (fault.Render).
func (e *Error) Words(name fault.Namer) string {
	msg := "ClickHouse at " + e.Host + ": " + string(e.Kind) + ": " + e.Msg
	if e.Setting != "" {
		msg += fault.Fields(" ({"+e.Setting+"})", name)
	}
	return msg
}

// timeoutError is the Timeout of a wait that setting (a field of
// Settings) bounded to d.
func (c *Conn) timeoutError(what, setting string, d time.Duration) *Error {
	return &Error{Kind: Timeout, Host: c.Endpoint.Host, Msg: fmt.Sprintf("%s %s", what, d), Setting: setting}
}

// firstAnswerTimeout is the Timeout of the wait for a server's first
// answer, after waited: the connect timeout bounds the native handshake and
// an HTTP connection's taking, the query timeout the HTTP answer's header,
// so the one that ended the wait is the one nearer to waited.
func (c *Conn) firstAnswerTimeout(waited time.Duration) *Error {
	setting, d := "connect_timeout", c.settings.ConnectTimeout
	if q := c.settings.QueryTimeout; (waited - q).Abs() < (waited - d).Abs() {
		setting, d = "query_timeout", q
	}
	return c.timeoutError("no answer in", setting, d)
}

// MinDDLVersion is the first release with CREATE DICTIONARY (ClickHouse
// #7360, 19.17).
var MinDDLVersion = dict.Release{Major: 19, Minor: 17}

// ParseURL reads s's URL and fields into an endpoint, or a FieldError
// naming what is wrong (the password never shown).
func (s Settings) ParseURL() (Endpoint, error) {
	bad := func(problem string) error {
		return fault.New("url", text.RedactURL(s.URL), problem,
			"clickhouse://host[:9000][/database] (native), http://host[:8123] or https://host[:8443] (HTTP); a user may be in it, the password only in {password}")
	}
	if t := strings.TrimSpace(s.URL); t != "" && !strings.Contains(t, "://") {
		return Endpoint{}, bad("no scheme")
	}
	u, err := url.Parse(strings.TrimSpace(s.URL))
	if err != nil || u.Host == "" || u.Opaque != "" {
		return Endpoint{}, bad("not a URL with a host")
	}
	e := Endpoint{}
	port := ""
	switch strings.ToLower(u.Scheme) {
	case "clickhouse", "tcp":
		e.Protocol, port = "native", "9000"
		e.TLS = s.Secure || s.CAFile != "" || u.Query().Get("secure") == "true"
		if e.TLS {
			port = "9440"
		}
	case "http":
		e.Protocol, port = "http", "8123"
		if s.CAFile != "" {
			return Endpoint{}, bad("a CA file needs https://")
		}
		if s.Secure { // TLS asked for: not plain HTTP, a password in the clear
			return Endpoint{}, bad("{secure} needs https:// (TLS over HTTP)")
		}
	case "https":
		e.Protocol, port, e.TLS = "http", "8443", true
	default:
		return Endpoint{}, bad(fmt.Sprintf("unknown scheme %q", u.Scheme))
	}
	if _, ok := u.User.Password(); ok {
		return Endpoint{}, bad("holds a password (it would show in the process list and the shell's history)")
	}
	host := u.Hostname()
	if host == "" {
		return Endpoint{}, bad("no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Endpoint{}, bad("port out of range")
		}
		port = p
	}
	e.Host = net.JoinHostPort(host, port)
	if e.User, err = oneOf("user", u.User.Username(), s.User, "default"); err != nil {
		return Endpoint{}, bad(err.Error())
	}
	if e.Database, err = oneOf("database", strings.Trim(u.Path, "/"), s.Database, "default"); err != nil {
		return Endpoint{}, bad(err.Error())
	}
	return e, nil
}

// oneOf is what the URL and the settings say of one thing (a user, a
// database): either, both if they agree, else def.
func oneOf(what, inURL, given, def string) (string, error) {
	switch {
	case inURL != "" && given != "" && inURL != given:
		return "", fmt.Errorf("names %s %q, and the %s given is %q", what, inURL, what, given)
	case given != "":
		return given, nil
	case inURL != "":
		return inURL, nil
	}
	return def, nil
}

// Conn is an open connection to one server.
type Conn struct {
	Endpoint Endpoint
	Version  dict.Release
	Release  string // version()'s answer: 26.7.2.1
	// ReadOnly: the user may neither write nor change a setting (readonly
	// = 1, as a monitoring account often is).
	ReadOnly bool
	conn     clickhouse.Conn
	settings Settings
}

// sessionSettings are sent with every query: none, but a test's (a
// read-only user's session, which the test servers cannot define).
var sessionSettings clickhouse.Settings

// Connect opens a connection and reads the server's version: an *Error
// when nothing listens there, it is not ClickHouse, it is too old for DDL
// dictionaries, or it does not answer in time; a FieldError for a bad URL
// or CA file.
func Connect(ctx context.Context, s Settings) (*Conn, error) {
	e, err := s.ParseURL()
	if err != nil {
		return nil, err
	}
	if s.ConnectTimeout <= 0 {
		s.ConnectTimeout = DefaultConnectTimeout
	}
	if s.QueryTimeout <= 0 {
		s.QueryTimeout = DefaultQueryTimeout
	}
	opt := &clickhouse.Options{
		Addr:         []string{e.Host},
		Auth:         clickhouse.Auth{Database: e.Database, Username: e.User, Password: s.Password},
		Protocol:     clickhouse.Native,
		DialTimeout:  s.ConnectTimeout,
		ReadTimeout:  s.QueryTimeout,
		ClientInfo:   clickhouse.ClientInfo{Products: []struct{ Name, Version string }{{Name: "packlab-inspect", Version: "1"}}},
		MaxOpenConns: 4,
		Settings:     sessionSettings,
	}
	if e.Protocol == "http" {
		opt.Protocol = clickhouse.HTTP
	}
	if e.TLS {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if s.CAFile != "" {
			pem, err := regular.Read(s.CAFile, maxCAFileBytes, "a CA file")
			if err != nil {
				return nil, fault.New("ca_file", s.CAFile, "cannot be read: "+text.OneLine(err.Error()), "a PEM file of CA certificates")
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fault.New("ca_file", s.CAFile, "holds no PEM certificate", "a PEM file of CA certificates")
			}
			cfg.RootCAs = pool
		}
		opt.TLS = cfg
	}
	c := &Conn{Endpoint: e, settings: s}
	// Nothing listening is told apart from something that is not
	// ClickHouse by a plain connect first.
	d := net.Dialer{Timeout: s.ConnectTimeout}
	raw, err := d.DialContext(ctx, "tcp", e.Host)
	if err != nil {
		return nil, c.classify(err, NotListening)
	}
	raw.Close()
	c.conn, err = clickhouse.Open(opt)
	if err != nil {
		return nil, c.classify(err, NotClickHouse)
	}
	qctx, cancel := context.WithTimeout(ctx, s.ConnectTimeout+s.QueryTimeout)
	defer cancel()
	asked := time.Now()
	release, err := c.version(ctx, qctx)
	if err != nil {
		c.conn.Close()
		if ctx.Err() != nil { // Ctrl-C: not a timeout, nor "not ClickHouse"
			return nil, fmt.Errorf("%w: connecting to ClickHouse at %s (%v)", fault.ErrCancelled, e.Host, context.Cause(ctx))
		}
		if refused := c.loginRefused(err); refused != nil {
			return nil, refused
		}
		err = c.classify(err, NotClickHouse)
		if e, ok := err.(*Error); ok && e.Kind == Timeout {
			return nil, c.firstAnswerTimeout(time.Since(asked))
		}
		if e, ok := err.(*Error); ok && e.Kind == NotClickHouse {
			if other, ok := otherProtocol(ctx, c.Endpoint, *opt); ok {
				return nil, other
			}
		}
		return nil, err
	}
	if c.Version, err = checkRelease(e.Host, release); err != nil {
		c.conn.Close()
		return nil, err
	}
	c.Release = release
	var readonly string
	if err := c.conn.QueryRow(qctx, "SELECT value FROM system.settings WHERE name = 'readonly'").Scan(&readonly); err == nil {
		c.ReadOnly = readonly == "1"
	}
	return c, nil
}

// version asks the server's release, which makes the connection: the
// native client dials and shakes hands under the connect timeout whatever
// ctx says, so ctx's end (Ctrl-C) is waited for beside it (a connection
// the client makes after Close is closed as it comes back).
func (c *Conn) version(ctx, qctx context.Context) (string, error) {
	var release string
	done := make(chan error, 1)
	go func() { done <- c.conn.QueryRow(qctx, "SELECT version()").Scan(&release) }()
	select {
	case err := <-done:
		return release, err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// ClickHouse's codes of a login it refuses: the user (or its password,
// which it does not tell apart), or the database.
const (
	codeUnknownDatabase      = 81
	codeUnknownUser          = 192
	codeWrongPassword        = 193
	codeRequiredPassword     = 194
	codeIPAddressNotAllowed  = 195
	codeAuthenticationFailed = 516
)

// loginRefused is the FieldError of a connection ClickHouse refused for its
// user or its database, or nil: the field the user gave it in ({user},
// {database}, else the URL, which names it or leaves the default), its
// value, and ClickHouse's words as the cause.
func (c *Conn) loginRefused(err error) error {
	var ex *clickhouse.Exception
	if !errors.As(err, &ex) {
		return nil
	}
	field, value, given := "user", c.Endpoint.User, c.settings.User
	allowed := "a user the server knows, with its password in {password}"
	switch ex.Code {
	case codeUnknownUser, codeWrongPassword, codeRequiredPassword, codeIPAddressNotAllowed, codeAuthenticationFailed:
	case codeUnknownDatabase:
		field, value, given = "database", c.Endpoint.Database, c.settings.Database
		allowed = "a database of that server (SHOW DATABASES lists them)"
	default:
		return nil
	}
	if given == "" { // the URL's, or the default
		field, value = "url", text.RedactURL(c.settings.URL)
	}
	// ClickHouse starts its words with the user's name ("nope:
	// Authentication failed"): said already.
	msg := strings.TrimPrefix(ex.Message, c.Endpoint.User+": ")
	cause := errors.New(c.scrub(fmt.Sprintf("code %d: %s", ex.Code, msg)))
	return fault.Wrap(field, value, "refused by ClickHouse at "+c.Endpoint.Host, cause, allowed)
}

// otherProtocol is the error for a URL that names ClickHouse's other
// protocol than its port speaks (http:// at the native port 9000, which
// answers HTTP with a 400, or clickhouse:// at the HTTP port 8123, whose
// answer the native handshake cannot read): a ping in the other protocol
// that ClickHouse answers, or refuses in its own words, says so.
func otherProtocol(ctx context.Context, e Endpoint, opt clickhouse.Options) (*Error, bool) {
	other := e
	if e.Protocol == "http" {
		other.Protocol, opt.Protocol = "native", clickhouse.Native
	} else {
		other.Protocol, opt.Protocol = "http", clickhouse.HTTP
	}
	opt.DialTimeout, opt.ReadTimeout = min(opt.DialTimeout, 5*time.Second), min(opt.ReadTimeout, 5*time.Second)
	conn, err := clickhouse.Open(&opt)
	if err != nil {
		return nil, false
	}
	defer conn.Close()
	pctx, cancel := context.WithTimeout(ctx, opt.DialTimeout+opt.ReadTimeout)
	defer cancel()
	var ex *clickhouse.Exception
	if err := conn.Ping(pctx); err != nil && !errors.As(err, &ex) {
		return nil, false
	}
	names := map[string]string{"native": "the native protocol", "http": "HTTP"}
	ports := map[string]string{"native": "clickhouse:// at its native port (9000 by default)", "http": "http:// at its HTTP port (8123 by default)"}
	return &Error{Kind: OtherProtocol, Host: e.Host, Msg: fmt.Sprintf("ClickHouse speaks %s on this port, not %s (allowed: %s, or %s)",
		names[other.Protocol], names[e.Protocol], other, ports[e.Protocol])}, true
}

// checkRelease reads version()'s answer: not ClickHouse's form, or a
// release before DDL dictionaries, is an *Error.
func checkRelease(host, release string) (dict.Release, error) {
	v, ok := dict.ParseRelease(release)
	if !ok {
		return v, &Error{Kind: NotClickHouse, Host: host, Msg: fmt.Sprintf("version() answered %q", release)}
	}
	if !v.AtLeast(MinDDLVersion) {
		return v, &Error{Kind: TooOld, Host: host, Msg: fmt.Sprintf("ClickHouse %s has no DDL dictionaries (CREATE DICTIONARY is from %s on, #7360); packlab inspects %s and newer", release, MinDDLVersion, MinDDLVersion)}
	}
	return v, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.conn.Close() }

// Query runs one read-only query under the query timeout and calls scan
// for each row.
func (c *Conn) Query(ctx context.Context, sql string, scan func(Rows) error) error {
	qctx, cancel := context.WithTimeout(ctx, c.settings.QueryTimeout)
	defer cancel()
	rows, err := c.conn.Query(qctx, sql)
	if err != nil {
		return c.queryError(ctx, qctx, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return c.queryError(ctx, qctx, err)
		}
	}
	if err := rows.Err(); err != nil {
		return c.queryError(ctx, qctx, err)
	}
	return nil
}

// Exec runs one statement under the query timeout.
func (c *Conn) Exec(ctx context.Context, sql string) error {
	qctx, cancel := context.WithTimeout(ctx, c.settings.QueryTimeout)
	defer cancel()
	if err := c.conn.Exec(qctx, sql); err != nil {
		return c.queryError(ctx, qctx, err)
	}
	return nil
}

// Rows is what a scan function (Query) reads a row from.
type Rows interface{ Scan(dest ...any) error }

func (c *Conn) queryError(ctx, qctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: a query to ClickHouse at %s (%v)", fault.ErrCancelled, c.Endpoint.Host, context.Cause(ctx))
	}
	// The client's read deadline (ReadTimeout, the query timeout too) can
	// fire a moment before qctx's: either is the query's timeout.
	var ne net.Error
	if errors.Is(qctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return c.timeoutError("a query took longer than", "query_timeout", c.settings.QueryTimeout)
	}
	return c.classify(err, Unreadable)
}

// classify turns a client's error into an *Error: a timeout, nothing
// listening, a connection that broke, ClickHouse's own exception (Refused),
// else fallback.
func (c *Conn) classify(err error, fallback ErrorKind) error {
	kind := fallback
	var ex *clickhouse.Exception
	var ne net.Error
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns) && !dns.IsTimeout:
		kind = UnknownHost // nothing to listen: no address at all
	case errors.As(err, &ex):
		kind = Refused
		return &Error{Kind: kind, Host: c.Endpoint.Host, Msg: c.scrub(fmt.Sprintf("code %d: %s", ex.Code, ex.Message))}
	case errors.Is(err, syscall.ECONNREFUSED):
		if fallback == Unreadable {
			kind = Gone
		} else {
			kind = NotListening
		}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout(),
		errors.Is(err, clickhouse.ErrAcquireConnTimeout): // over HTTP, a server that never answers
		return c.timeoutError("no answer in", "connect_timeout", c.settings.ConnectTimeout)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		if fallback == Unreadable {
			kind = Gone
		}
	}
	msg := text.OneLine(err.Error())
	if kind == Unreadable && looksGone(msg) {
		kind = Gone
	}
	if kind == NotClickHouse && strings.Contains(msg, "code: ") {
		kind = Refused // ClickHouse's own words over HTTP: authentication, rights
	}
	return &Error{Kind: kind, Host: c.Endpoint.Host, Msg: c.scrub(msg)}
}

func looksGone(msg string) bool {
	for _, w := range []string{"connection refused", "connection reset", "broken pipe", "EOF", "bad connection", "use of closed network connection"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// scrub takes the password out of a message (one of fewer than 4 bytes
// would also match the message's own words: it is not looked for).
func (c *Conn) scrub(msg string) string {
	if p := c.settings.Password; len(p) >= 4 {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
		msg = strings.ReplaceAll(msg, url.QueryEscape(p), "xxxxx")
	}
	return text.OneLine(msg)
}
