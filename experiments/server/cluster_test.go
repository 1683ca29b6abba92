//go:build !js

package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/server/servertest"
	"github.com/packlab/packlab/experiments/text"
)

// TestClusterReplicasDisagree: two nodes of one cluster hold the same
// dictionary over different rows; inspecting through one of them shows
// both nodes, and a finding names the difference.
func TestClusterReplicasDisagree(t *testing.T) {
	nodes := servertest.StartCluster(t, "lab", 2)
	for i, n := range nodes {
		rows := []int{100000, 150000}[i]
		// Each node's Strings its own length: 4 to 8 bytes on one, 40 to 44
		// on the other (a sharded table's shards hold other rows).
		length := []string{"4", "40"}[i]
		n.Table(t, "src", "v UInt16, s String", "sipHash64(number), number, repeat('s', "+length+" + number % 5)", rows)
		n.Dictionary(t, "d", "src", "v UInt16", "LIFETIME(0) LAYOUT(HASHED())")
		n.Dictionary(t, "ds", "src", "s String", "LIFETIME(0) LAYOUT(HASHED())")
	}
	// A source table whose column another replica's does not have: the
	// read of every replica's fails, and the connected node's table stands
	// for it, said. (A replica without the table is left out of the read,
	// as skip_unavailable_shards does.)
	nodes[1].Exec(t, "CREATE TABLE only_here (id UInt64) ENGINE = MergeTree ORDER BY tuple()")
	nodes[0].Exec(t, "CREATE TABLE only_here (id UInt64, s String) ENGINE = MergeTree ORDER BY tuple()",
		"INSERT INTO only_here SELECT number, repeat('h', 10) FROM numbers(1000)",
		"CREATE DICTIONARY dh (id UInt64, s String) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'only_here')) LIFETIME(0) LAYOUT(HASHED())",
		"SYSTEM RELOAD DICTIONARY dh")
	ins, err := Inspect(context.Background(), Settings{URL: nodes[0].NativeURL()}, Options{Cluster: "lab"})
	if err != nil {
		t.Fatal(err)
	}
	var dh []Dictionary
	ins.Dictionaries = slices.DeleteFunc(ins.Dictionaries, func(d Dictionary) bool {
		if d.Name == "dh" {
			dh = append(dh, d)
		}
		return d.Name == "dh"
	})
	if len(dh) != 1 || !dh[0].Modelled || len(dh[0].Notes) == 0 || !strings.Contains(strings.Join(dh[0].Notes, " "), "of the connected node's table (the replicas' own could not be read") {
		t.Errorf("a source table on one replica only: %+v", dh)
	}
	if len(ins.Nodes) != 2 || len(ins.Dictionaries) != 4 {
		t.Fatalf("%d nodes and %d dictionary rows, want 2 and 4: %+v", len(ins.Nodes), len(ins.Dictionaries), ins.Nodes)
	}
	seen := map[int64]bool{}
	for _, d := range ins.Dictionaries {
		if d.Name == "ds" {
			// Each node's model from its own lengths: with the connected
			// node's 4 to 8 bytes, the other's was 35 % under.
			if !d.Modelled || abs(d.ModelBytes-d.BytesAllocated) > d.BytesAllocated/50 {
				t.Errorf("ds on %s: model %d, bytes_allocated %d (%s; %q): want within 2 %%", d.Node, d.ModelBytes, d.BytesAllocated, d.NotModelled, d.Notes)
			}
			continue
		}
		seen[d.ElementCount] = true
		if !d.Modelled || d.ModelBytes != d.BytesAllocated && abs(d.ModelBytes-d.BytesAllocated) > d.BytesAllocated/1000 {
			t.Errorf("%s on %s: model %d, bytes_allocated %d (%s)", d.Name, d.Node, d.ModelBytes, d.BytesAllocated, d.NotModelled)
		}
		found := false
		for _, f := range d.Findings {
			found = found || strings.Contains(f, "replicas disagree") && strings.Contains(f, "100,000") && strings.Contains(f, "150,000")
		}
		if !found {
			t.Errorf("%s on %s: no finding names the rows' difference: %q", d.Name, d.Node, d.Findings)
		}
	}
	if !seen[100000] || !seen[150000] {
		t.Errorf("element counts %v, want 100,000 and 150,000", seen)
	}
	for _, n := range ins.Nodes {
		if n.MemoryLimitBytes <= 0 || n.TrackedBytes <= 0 || n.Release != ins.Release {
			t.Errorf("node %s: limit %d, holds %d, release %q (connected to %q)", n.Name, n.MemoryLimitBytes, n.TrackedBytes, n.Release, ins.Release)
		}
	}
	if f := releases(ins.Nodes); f != nil {
		t.Errorf("nodes of one release: %q", f)
	}
	mixed := []Node{{Name: "a:9000", Release: "26.7.2.1"}, {Name: "b:9000", Release: "24.8.1.1"}}
	if f := releases(mixed); len(f) != 1 || !strings.Contains(f[0], "a:9000 26.7.2.1, b:9000 24.8.1.1") {
		t.Errorf("nodes of two releases: %q", f)
	}
	if _, err := Inspect(context.Background(), Settings{URL: nodes[1].HTTPURL()}, Options{Cluster: "no_such"}); err == nil || !strings.Contains(err.Error(), "lab") {
		t.Errorf("an unknown cluster: %v, want an error naming the cluster there is", err)
	}

	// The advice built on every replica that holds it, each over its own
	// rows: one name, then every advised change.
	if n, err := VerifyAdvice(context.Background(), Settings{URL: nodes[0].HTTPURL()}, ins, "ds", nil); err != nil || n != 2 {
		t.Errorf("VerifyAdvice of ds on the cluster: %d built, %v; want 2", n, err)
	}
	if n, err := VerifyAdvice(context.Background(), Settings{URL: nodes[0].NativeURL()}, ins, "nowhere", nil); err == nil || n != 0 || !strings.Contains(err.Error(), "on any replica of lab") {
		t.Errorf("VerifyAdvice of a name no replica has: %d built, %v", n, err)
	}
	var started []string
	built, err := VerifyEveryAdvice(context.Background(), Settings{URL: nodes[0].NativeURL()}, ins, func(of, layout string, rows int64) {
		started = append(started, of+" "+text.Thousands(rows))
	})
	t.Logf("every advice on the cluster: %d built: %q", built, started)
	if err != nil || built != len(started) || built < 2 {
		t.Errorf("VerifyEveryAdvice on the cluster: %d built, %v", built, err)
	}
	for _, d := range ins.Dictionaries {
		if v := d.Verification; v != nil && (v.Node != d.Node || v.ElementCount != d.ElementCount || !v.Dropped) {
			t.Errorf("%s on %s: built on %s, %d rows (its own %d), dropped %v", d.Name, d.Node, v.Node, v.ElementCount, d.ElementCount, v.Dropped)
		}
	}

	// A verification on each node of the cluster, through one node's HTTP.
	vs, err := VerifyCluster(context.Background(), Settings{URL: nodes[0].HTTPURL()}, "lab",
		VerifyRequest{Layout: "HASHED_ARRAY", Attributes: dict.Fixed(core.MustType("UInt32")), Rows: 200_000})
	if err != nil || len(vs) != 2 || vs[0].Node == vs[1].Node {
		t.Fatalf("VerifyCluster: %d verifications, %v", len(vs), err)
	}
	for _, v := range vs {
		if !v.Dropped || v.ElementCount != 200_000 || abs(v.ModelBytes-v.BytesAllocated) > v.BytesAllocated/1000 {
			t.Errorf("on %s: dropped %v, %d rows, model %d, bytes_allocated %d", v.Node, v.Dropped, v.ElementCount, v.ModelBytes, v.BytesAllocated)
		}
	}

	// A query longer than the query timeout.
	slow := connect(t, Settings{URL: nodes[1].HTTPURL(), QueryTimeout: time.Second})
	err = slow.Exec(context.Background(), "SELECT sleep(2)")
	var te *Error
	if !asError(err, &te) || te.Kind != Timeout || !strings.Contains(err.Error(), "1s") {
		t.Errorf("SELECT sleep(2) under a 1 s query timeout: %v", err)
	}

	// A server that goes away mid-inspect: the connection is open, the
	// server killed, the next query is a clear error.
	c := connect(t, Settings{URL: nodes[1].NativeURL(), QueryTimeout: 5 * time.Second})
	nodes[1].Stop()
	_, err = c.dictionaries(context.Background(), "")
	var e *Error
	if !asError(err, &e) || e.Kind != Gone && e.Kind != NotListening {
		t.Errorf("after the server went away: %v, want a lost connection", err)
	}

	// The cluster with that replica down: the other is inspected, and a
	// finding says one was left out (it failed whole: "code 279: All
	// connection tries failed").
	ins, err = Inspect(context.Background(), Settings{URL: nodes[0].NativeURL()}, Options{Cluster: "lab"})
	if err != nil {
		t.Fatalf("a replica down: %v", err)
	}
	if len(ins.Nodes) != 1 || len(ins.Dictionaries) != 3 || len(ins.Findings) == 0 || ins.Findings[0] != "1 of the 2 replicas of cluster lab answered; the others are left out of this inspection" {
		t.Errorf("a replica down: %d nodes, %d dictionaries, findings %q", len(ins.Nodes), len(ins.Dictionaries), ins.Findings)
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
