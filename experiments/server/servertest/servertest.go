//go:build !js

// Package servertest starts real ClickHouse servers for tests: ClickHouse
// 26.7's clickhouse-local from the library `make chdb` fetches, listening
// on 127.0.0.1 (bin/packlab-chserver, reference/chdb/server.c), one node
// or a cluster of nodes that share one <remote_servers>. Each server has
// its own folder and free ports; it is killed and its folder removed when
// the test ends, also when it fails, and it dies with the test's process.
package servertest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The library and the server program, as the Makefile names them.
const (
	// ServerEnv, when set, is the server program to use.
	ServerEnv     = "PACKLAB_CH_SERVER"
	chdbVersion   = "26.7.3-stable.1"
	serverProgram = "bin/packlab-chserver"
	buildCommand  = "make chdb"
	startTimeout  = 90 * time.Second
)

// Node is one running server.
type Node struct {
	TCPPort, HTTPPort int
	Dir               string // its data folder
	cmd               *exec.Cmd
	stderr            *bytes.Buffer
	done              chan struct{}
	stopped           bool // Stop was called
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// PID is the server's process id: a test reads the server's memory from
// /proc (VmRSS, and VmHWM after a reset through clear_refs).
func (n *Node) PID() int { return n.cmd.Process.Pid }

// Exited reports whether the server has ended, by itself or by Stop.
func (n *Node) Exited() bool {
	select {
	case <-n.done:
		return true
	default:
		return false
	}
}

// NativeURL is the node's address for the native protocol.
func (n *Node) NativeURL() string { return fmt.Sprintf("clickhouse://127.0.0.1:%d", n.TCPPort) }

// HTTPURL is the node's address for HTTP.
func (n *Node) HTTPURL() string { return fmt.Sprintf("http://127.0.0.1:%d", n.HTTPPort) }

// Name is how inspect names the node: its host and native port.
func (n *Node) Name() string { return fmt.Sprintf("127.0.0.1:%d", n.TCPPort) }

// Exec runs statements on the node over HTTP, one after another, failing
// the test on an error; it returns the last one's output (TSV).
func (n *Node) Exec(t testing.TB, statements ...string) string {
	t.Helper()
	var out string
	for _, q := range statements {
		var err error
		if out, err = n.Query(q); err != nil {
			t.Fatalf("%s: %v", firstLine(q), err)
		}
	}
	return out
}

// Table makes a test's table name, a MergeTree without a sorting key
// (ORDER BY tuple()): the key id UInt64, then columns ("v UInt16, s
// String"); its rows are values, the SELECT's expressions of id and each
// column ("sipHash64(number), number, repeat('s', 8)"), over
// numbers(rows).
func (n *Node) Table(t testing.TB, name, columns, values string, rows int) {
	t.Helper()
	n.Exec(t, "CREATE TABLE "+name+" (id UInt64, "+columns+") ENGINE = MergeTree ORDER BY tuple()",
		fmt.Sprintf("INSERT INTO %s SELECT %s FROM numbers(%d)", name, values, rows))
}

// Dictionary makes the dictionary name (as SQL writes it: d, `sales
// dict`) of id and columns over the table, with its LIFETIME and LAYOUT
// clauses ("LIFETIME(0) LAYOUT(HASHED())"), and loads it.
func (n *Node) Dictionary(t testing.TB, name, table, columns, clauses string) {
	t.Helper()
	n.Exec(t, "CREATE DICTIONARY "+name+" (id UInt64, "+columns+") PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE '"+table+"')) "+clauses,
		"SYSTEM RELOAD DICTIONARY "+name)
}

// Query runs one statement over HTTP and returns its output.
func (n *Node) Query(q string) (string, error) {
	resp, err := http.Post(n.HTTPURL()+"/?"+url.Values{"query": {q}}.Encode(), "text/plain", nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
	}
	return string(b), nil
}

// Stop kills the node now (tests of a server that goes away); the
// cleanup does it otherwise.
func (n *Node) Stop() {
	n.stopped = true
	if n.cmd.Process != nil {
		n.cmd.Process.Kill()
		<-n.done
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Program is the server program, or why there is none: skip is true when
// the library is not fetched here (the tests then skip, saying so), false
// when it is but the program is not built (a failure: make chdb builds
// both).
func Program() (path, problem string, skip bool) {
	if p := os.Getenv(ServerEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("$%s=%s: %v", ServerEnv, p, err), false
		}
		return p, "", false
	}
	root, err := repoRoot()
	if err != nil {
		return "", err.Error(), true
	}
	lib := filepath.Join(root, "build", "chdb", chdbVersion, "libchdb.so")
	if _, err := os.Stat(lib); err != nil {
		return "", fmt.Sprintf("ClickHouse's library is not fetched (%s; %s fetches it)", lib, buildCommand), true
	}
	p := filepath.Join(root, serverProgram)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Sprintf("%s is not built (%s builds it beside the library)", p, buildCommand), false
	}
	return p, "", false
}

// repoRoot is the folder above the working directory that holds go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = up
	}
}

// Start starts one server, or skips the test when ClickHouse's library
// is not fetched here.
func Start(t testing.TB) *Node {
	t.Helper()
	return StartCluster(t, "", 1)[0]
}

// StartWithConfig starts one server whose configuration holds extra
// (server settings: <max_server_memory_usage>300000000</max_server_memory_usage>).
func StartWithConfig(t testing.TB, extra string) *Node {
	t.Helper()
	return start(t, "", 1, extra)[0]
}

// StartCluster starts n servers at once that each declare the cluster
// name (one shard, every node a replica of it), so that
// clusterAllReplicas(name, ...) on any of them reads them all.
func StartCluster(t testing.TB, name string, n int) []*Node {
	t.Helper()
	return start(t, name, n, "")
}

func start(t testing.TB, name string, n int, extra string) []*Node {
	t.Helper()
	prog, problem, skip := Program()
	if problem != "" {
		if skip {
			t.Skip(problem)
		}
		t.Fatal(problem)
	}
	for attempt := 1; ; attempt++ {
		nodes, err := launch(t, prog, name, n, extra)
		if err == nil {
			return nodes
		}
		// The ports were free when freePorts let them go, and another
		// process (make test runs two packages at once, each with its
		// servers and clients) may take one before the server binds it:
		// ClickHouse then ends at once with "Address already in use".
		// Other ports then; any other failure is the test's.
		if attempt == 3 || !strings.Contains(err.Error(), addressInUse) {
			t.Fatal(err)
		}
		t.Logf("attempt %d: %v; again on other ports", attempt, err)
		for _, node := range nodes {
			node.Stop()
		}
	}
}

// addressInUse is how ClickHouse's bind error ends (errno 98, EADDRINUSE).
const addressInUse = "Address already in use"

// launch starts n nodes on ports freePorts finds and waits until each
// answers; its error is the first node's that did not.
func launch(t testing.TB, prog, name string, n int, extra string) ([]*Node, error) {
	t.Helper()
	nodes := make([]*Node, n)
	ports := freePorts(t, 2*n)
	for i := range nodes {
		nodes[i] = &Node{TCPPort: ports[2*i], HTTPPort: ports[2*i+1], Dir: t.TempDir()}
	}
	var b strings.Builder
	b.WriteString("<clickhouse>\n" + extra)
	if name != "" {
		fmt.Fprintf(&b, "  <remote_servers>\n    <%s>\n      <shard>\n", name)
		for _, node := range nodes {
			fmt.Fprintf(&b, "        <replica><host>127.0.0.1</host><port>%d</port></replica>\n", node.TCPPort)
		}
		fmt.Fprintf(&b, "      </shard>\n    </%s>\n  </remote_servers>\n", name)
	}
	b.WriteString("</clickhouse>\n")
	config := b.String()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, node := range nodes {
		cfg := filepath.Join(node.Dir, "config.xml")
		if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
			t.Fatal(err)
		}
		node.stderr = new(bytes.Buffer)
		node.cmd = exec.Command(prog, filepath.Join(node.Dir, "data"), fmt.Sprint(node.TCPPort), fmt.Sprint(node.HTTPPort), cfg)
		node.cmd.Stdout, node.cmd.Stderr = io.Discard, node.stderr
		if err := node.cmd.Start(); err != nil {
			t.Fatalf("%s: %v", prog, err)
		}
		node.done = make(chan struct{})
		go func() { node.cmd.Wait(); close(node.done) }()
		t.Cleanup(func() { // before t.TempDir's removal (cleanups run last first)
			select {
			case <-node.done:
				if !node.stopped {
					t.Logf("the ClickHouse server on port %d ended by itself (%v): %s", node.TCPPort, node.cmd.ProcessState, tail(node.stderr.String(), 2000))
				}
			default:
			}
			node.Stop()
		})
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = node.wait() }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nodes, err
		}
	}
	return nodes, nil
}

// wait waits until the node answers a query over HTTP and accepts a
// connection on its native port.
func (n *Node) wait() error {
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-n.done:
			return fmt.Errorf("the ClickHouse server on port %d ended before it listened: %s", n.TCPPort, strings.TrimSpace(n.stderr.String()))
		default:
		}
		if out, err := n.Query("SELECT 1"); err == nil && strings.TrimSpace(out) == "1" {
			if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", n.TCPPort), time.Second); err == nil {
				c.Close()
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the ClickHouse server on port %d did not answer in %s", n.TCPPort, startTimeout)
}

// freePorts finds count ports free on 127.0.0.1 now (held open together,
// so they differ). A test sets it to hand out a port in use.
var freePorts = func(t testing.TB, count int) []int {
	t.Helper()
	ports := make([]int, count)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports
}

// Mute is the address of a server that accepts every connection
// and never answers, until the test ends.
func Mute(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	return l.Addr().String()
}
