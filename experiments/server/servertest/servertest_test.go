//go:build !js

package servertest

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCluster starts two nodes that declare one cluster: each answers over
// HTTP, clusterAllReplicas reads both, and once stopped a node's port no
// longer answers and its folder is removed at the end.
func TestCluster(t *testing.T) {
	start := time.Now()
	nodes := StartCluster(t, "lab", 2)
	t.Logf("two nodes answered in %s", time.Since(start))
	out := nodes[0].Exec(t, "SELECT tcpPort() FROM clusterAllReplicas('lab', system.one) ORDER BY 1 FORMAT TSV")
	ports := strings.Fields(out)
	if len(ports) != 2 || ports[0] == ports[1] {
		t.Fatalf("clusterAllReplicas saw ports %q, want the two nodes'", ports)
	}
	if v := strings.TrimSpace(nodes[1].Exec(t, "SELECT version()")); !strings.HasPrefix(v, "26.7.") {
		t.Errorf("version() = %q, want 26.7.*", v)
	}
	nodes[1].Stop()
	if _, err := nodes[1].Query("SELECT 1"); err == nil {
		t.Error("a stopped node still answers")
	}
}

// TestFolderRemoved: a server's folder is gone once its test ends, also
// when the test fails, and its process with it.
func TestFolderRemoved(t *testing.T) {
	var dir string
	var node *Node
	t.Run("server", func(t *testing.T) {
		node = Start(t)
		dir = node.Dir
		node.Exec(t, "CREATE TABLE t (x UInt8) ENGINE = MergeTree ORDER BY x", "INSERT INTO t VALUES (1)")
	})
	if dir == "" {
		t.Skip("no server started")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after its test (%v)", dir, err)
	}
	if _, err := node.Query("SELECT 1"); err == nil {
		t.Error("the server still answers after its test")
	}
}

// TestStartWhenAPortIsTaken: a port taken between freePorts and the
// server's bind (by another package's test: make test runs two at once)
// ends that server with "Address already in use"; Start tries other ports.
func TestStartWhenAPortIsTaken(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.Addr().(*net.TCPAddr).Port
	orig := freePorts
	t.Cleanup(func() { freePorts = orig })
	calls := 0
	freePorts = func(t testing.TB, count int) []int {
		calls++
		ports := orig(t, count)
		if calls == 1 {
			ports[0] = taken
		}
		return ports
	}
	node := Start(t)
	if calls != 2 || node.TCPPort == taken {
		t.Fatalf("%d attempts, the node on port %d (taken: %d); want a second attempt on another port", calls, node.TCPPort, taken)
	}
	if v := strings.TrimSpace(node.Exec(t, "SELECT 1")); v != "1" {
		t.Errorf("SELECT 1 = %q", v)
	}
}

// TestTableAndDictionary: Table makes its rows from the expressions, and
// Dictionary a dictionary over it, loaded, with the clauses given.
func TestTableAndDictionary(t *testing.T) {
	node := Start(t)
	node.Table(t, "src", "v UInt16, s String", "number * 2, number, repeat('s', number % 3)", 1000)
	node.Dictionary(t, "`a dict`", "src", "s String", "LIFETIME(MIN 60 MAX 120) LAYOUT(HASHED(SHARDS 2))")
	got := strings.TrimSpace(node.Exec(t, "SELECT status, element_count, lifetime_min, lifetime_max, type, dictGet('default.a dict', 's', toUInt64(38)) FROM system.dictionaries WHERE name = 'a dict' FORMAT TSV"))
	if want := "LOADED\t1000\t60\t120\tHashed\ts"; got != want {
		t.Errorf("the dictionary: %q, want %q", got, want)
	}
	if got := strings.TrimSpace(node.Exec(t, "SELECT count(), sum(v), max(length(s)) FROM src FORMAT TSV")); got != "1000\t499500\t2" {
		t.Errorf("the table: %q, want 1000 rows, v 0 to 999, s up to 2 bytes", got)
	}
}
