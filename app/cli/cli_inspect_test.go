package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/server/servertest"
)

// TestInspectCommand: packlab inspect on a real server, in JSON (the
// issue's fields), as a table and as Markdown; the password from the
// environment appears in none of them.
func TestInspectCommand(t *testing.T) {
	node := servertest.Start(t)
	node.Exec(t, "CREATE TABLE src (id UInt64, v UInt16, name String) ENGINE = MergeTree ORDER BY tuple()",
		"INSERT INTO src SELECT sipHash64(number), number, repeat('n', number % 20) FROM numbers(100000)",
		"CREATE DICTIONARY `sales dict` (id UInt64, v UInt16, name String) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(MIN 60 MAX 120) LAYOUT(HASHED())",
		"SYSTEM RELOAD DICTIONARY `sales dict`")
	// The test server's default user has no password: one given is refused,
	// by ClickHouse, and the message does not show it. (Over HTTP only:
	// clickhouse-local 26.7's native listener aborts the whole server after
	// a failed authentication.)
	const password = "pw-in-env-only-42"
	t.Setenv("CLICKHOUSE_PASSWORD", password)
	for _, url := range []string{node.HTTPURL()} {
		var o, e bytes.Buffer
		if code := Main([]string{"inspect", "--clickhouse", url}, &o, &e); code != 1 || !strings.Contains(e.String(), "Authentication failed") || strings.Contains(e.String()+o.String(), password) {
			t.Errorf("%s with a wrong password: exit %d, %q", url, code, e.String())
		}
	}
	t.Setenv("CLICKHOUSE_PASSWORD", "")
	stdout, stderr, err := packlab(t, "inspect", "--clickhouse", node.HTTPURL(), "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(stdout), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v: %s", err, stdout)
	}
	for _, f := range []string{"node", "database", "name", "layout", "key_types", "attribute_types", "element_count", "bytes_allocated",
		"model_bytes", "real_bytes", "reload_peak_bytes", "server_memory_limit_bytes", "findings", "advice"} {
		if _, ok := rows[0][f]; !ok {
			t.Errorf("JSON has no %q: %s", f, stdout)
		}
	}
	advice, _ := rows[0]["advice"].(map[string]any)
	for _, f := range []string{"layout", "ddl", "steady_bytes", "reload_peak_bytes", "why"} {
		if _, ok := advice[f]; !ok {
			t.Errorf("advice has no %q: %v", f, advice)
		}
	}
	if ddl, _ := advice["ddl"].(string); !strings.Contains(ddl, "`sales dict`") || !strings.Contains(ddl, "LIFETIME(MIN 60 MAX 120)") || !strings.Contains(ddl, "SPARSE_HASHED") {
		t.Errorf("advice's DDL keeps the name, source and lifetime, with SPARSE_HASHED: %q", ddl)
	}
	table, _, err := packlab(t, "inspect", "--clickhouse", node.NativeURL())
	if err != nil {
		t.Fatal(err)
	}
	mustSay(t, "the table", table, "default.sales dict", "LAYOUT(HASHED())", "100,000", "finding: SPARSE_HASHED holds the same rows", "CREATE OR REPLACE DICTIONARY")
	md, _, err := packlab(t, "inspect", "--clickhouse", node.NativeURL(), "--format", "markdown", "--no-sample")
	if err != nil {
		t.Fatal(err)
	}
	mustSay(t, "the Markdown", md, "| node |", "not modelled: the String lengths of name are unknown (not sampled)")
}

// TestInspectBadInput: a URL that does not parse is exit 2, a closed
// port exit 1, each one line without the password.
func TestInspectBadInput(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect"}, 2, "--clickhouse is required"},
		{[]string{"inspect", "--clickhouse", "localhost:9000"}, 2, "--clickhouse localhost:9000: not a URL with a host"},
		{[]string{"inspect", "--clickhouse", "clickhouse://u:topsecret@h"}, 2, "holds a password"},
		{[]string{"inspect", "--clickhouse", "clickhouse://" + closed}, 1, "not listening"},
		{[]string{"inspect", "--clickhouse", "http://h", "--format", "csv"}, 2, "--format"},
		{[]string{"inspect", "--clickhouse", "http://h", "--query-timeout", "0"}, 2, "--query-timeout 0: out of range"},
		{[]string{"inspect", "--clickhouse", "http://h", "--password", "x"}, 2, "password"},
	} {
		var o, e bytes.Buffer
		code := Main(tc.args, &o, &e)
		msg := e.String()
		if code != tc.code || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 || strings.Contains(msg, "topsecret") {
			t.Errorf("%q: exit %d, %q; want exit %d and one line saying %q", tc.args, code, msg, tc.code, tc.want)
		}
	}
}

// TestPlanVerifyOnServer: plan --verify --clickhouse builds the plan's
// answer on a test server, prints its figures beside the model's, and
// leaves nothing behind; --clickhouse without --verify is refused.
func TestPlanVerifyOnServer(t *testing.T) {
	node := servertest.Start(t)
	stdout, stderr, err := packlab(t, "plan", "--rows", "1e6", "--no-calibrate", "--results", t.TempDir(), "--verify", "--clickhouse", node.NativeURL())
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	mustSay(t, "plan --verify --clickhouse", stdout, "verified on ClickHouse 26.7", "1,000,000 rows", "dropped afterwards: true", "memory: bytes_allocated", "reload: MemoryTracking peaked")
	if left := strings.TrimSpace(node.Exec(t, "SELECT count() FROM system.databases WHERE name LIKE 'packlab_verify_%'")); left != "0" {
		t.Errorf("%s databases left behind", left)
	}
	var o, e bytes.Buffer
	if code := Main([]string{"plan", "--rows", "1e6", "--clickhouse", node.NativeURL()}, &o, &e); code != 2 || !strings.Contains(e.String(), "--clickhouse: needs --verify") {
		t.Errorf("--clickhouse without --verify: exit %d, %q", code, e.String())
	}
}
