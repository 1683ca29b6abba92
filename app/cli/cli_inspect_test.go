package cli

import (
	"bytes"
	"encoding/json"
	htmlpkg "html"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/server/servertest"
)

// salesDict makes the table src of rows rows and the dictionary `sales
// dict` over all its columns (HASHED, LIFETIME(MIN 60 MAX 120)), loaded.
func salesDict(t *testing.T, node *servertest.Node, rows int) {
	t.Helper()
	node.Table(t, "src", "v UInt16, name String", "sipHash64(number), number, repeat('n', number % 20)", rows)
	node.Dictionary(t, "`sales dict`", "src", "v UInt16, name String", "LIFETIME(MIN 60 MAX 120) LAYOUT(HASHED())")
}

// TestInspectCommand: packlab inspect on a real server, in JSON (the
// issue's fields), as a table and as Markdown; the password from the
// environment appears in none of them.
func TestInspectCommand(t *testing.T) {
	node := servertest.Start(t)
	salesDict(t, node, 100000)
	// The test server's default user has no password: one given is refused,
	// by ClickHouse, as bad input naming the URL (exit 2), and the message
	// does not show it. (Over HTTP only:
	// clickhouse-local 26.7's native listener aborts the whole server after
	// a failed authentication.)
	const password = "pw-in-env-only-42"
	t.Setenv("CLICKHOUSE_PASSWORD", password)
	for _, url := range []string{node.HTTPURL()} {
		var o, e bytes.Buffer
		if code := Main([]string{"inspect", "--clickhouse", url, "--no-save"}, &o, &e); code != 2 || !strings.Contains(e.String(), "Authentication failed") || strings.Contains(e.String()+o.String(), password) {
			t.Errorf("%s with a wrong password: exit %d, %q", url, code, e.String())
		}
	}
	t.Setenv("CLICKHOUSE_PASSWORD", "")
	// A user the server does not know: named by its flag, exit 2.
	var uo, ue bytes.Buffer
	if code := Main([]string{"inspect", "--clickhouse", node.HTTPURL(), "--user", "nope", "--no-save"}, &uo, &ue); code != 2 ||
		!strings.HasPrefix(ue.String(), "packlab: --user nope: refused by ClickHouse at 127.0.0.1:") || !strings.Contains(ue.String(), "code 516: Authentication failed") ||
		!strings.Contains(ue.String(), "(allowed: a user the server knows, with its password in $CLICKHOUSE_PASSWORD)") {
		t.Errorf("--user nope: exit %d, %q", code, ue.String())
	}
	stdout, stderr, err := packlab(t, "inspect", "--clickhouse", node.HTTPURL(), "--format", "json", "--no-save")
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
	table, _, err := packlab(t, "inspect", "--clickhouse", node.NativeURL(), "--no-save")
	if err != nil {
		t.Fatal(err)
	}
	mustSay(t, "the table", table, "default.sales dict", "LAYOUT(HASHED())", "100,000", "finding: SPARSE_HASHED holds the same rows", "CREATE OR REPLACE DICTIONARY")
	md, _, err := packlab(t, "inspect", "--clickhouse", node.NativeURL(), "--format", "markdown", "--no-sample", "--no-save")
	if err != nil {
		t.Fatal(err)
	}
	mustSay(t, "the Markdown", md, "| node |", "not modelled: the String lengths of name are unknown (not sampled)")

	// --verify: the advice built on the server beside the dictionary, in
	// the output and in the kept job; a name that is not there is exit 2
	// naming the flag, the inspection still printed.
	dir := t.TempDir()
	verified, stderr, err := packlab(t, "inspect", "--clickhouse", node.NativeURL(), "--verify", "sales dict", "--results", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	mustSay(t, "--verify", verified, "verified: verified on ClickHouse", "LAYOUT(SPARSE_HASHED())", "beside default.sales dict as it serves (LAYOUT(HASHED()))", "dropped afterwards: true")
	report, _, err := packlab(t, "report", "--list", "--results", dir)
	if err != nil || !strings.Contains(report, "inspection  inspect "+node.NativeURL()+" (1 dictionary, 1 advice built)") {
		t.Errorf("the verified inspection is not kept: %v %s", err, report)
	}
	var o, e bytes.Buffer
	if code := Main([]string{"inspect", "--clickhouse", node.NativeURL(), "--verify", "nope", "--no-save"}, &o, &e); code != 2 ||
		!strings.Contains(e.String(), "--verify nope: no dictionary of that name") || !strings.Contains(e.String(), "default.sales dict") || !strings.Contains(o.String(), "sales dict") {
		t.Errorf("--verify nope: exit %d, %q, stdout %d bytes; want exit 2 naming --verify and the dictionaries, the inspection printed", code, e.String(), o.Len())
	}
	all, stderr, err := packlab(t, "inspect", "--clickhouse", node.NativeURL(), "--verify-all", "--no-save")
	if err != nil || !strings.Contains(stderr, "packlab: 1 advice built on the server and measured") ||
		!strings.Contains(stderr, "packlab: building default.sales dict's advice on the server: LAYOUT(SPARSE_HASHED()) at 100,000 rows (a load and a reload, then dropped)") {
		t.Fatalf("--verify-all: %v\n%s", err, stderr)
	}
	mustSay(t, "--verify-all", all, "verified: beside default.sales dict as it serves (LAYOUT(HASHED()))")
	if left, _ := node.Query("SELECT count() FROM system.databases WHERE name LIKE 'packlab_verify_%'"); strings.TrimSpace(left) != "0" {
		t.Errorf("%s databases of packlab's left behind", left)
	}
}

// TestInspectBadInput: a URL that does not parse is exit 2, a closed
// port exit 1, each one line without the password.
func TestInspectBadInput(t *testing.T) {
	// Port 1 (tcpmux): a port another test's listener cannot be handed,
	// as one just let go from the ephemeral range can (make test runs two
	// packages at once, each starting servers on ports the kernel picks).
	closed := "127.0.0.1:1"
	if c, err := net.Dial("tcp", closed); err == nil {
		c.Close() // something listens there: a port just let go, then
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed = l.Addr().String()
		l.Close()
	}
	// A server that accepts and never answers: the timeout that ended the
	// wait, by its flag (over HTTP the query timeout bounds the first
	// answer; it was called the connect timeout's 10s, after 1 s).
	silent := servertest.Mute(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"inspect"}, 2, "--clickhouse is required"},
		{[]string{"inspect", "--clickhouse", "http://" + silent, "--query-timeout", "1s", "--results", t.TempDir()}, 1, "timeout: no answer in 1s (--query-timeout)"},
		{[]string{"inspect", "--clickhouse", "clickhouse://" + silent, "--connect-timeout", "1s", "--results", t.TempDir()}, 1, "timeout: no answer in 1s (--connect-timeout)"},
		{[]string{"plan", "--clickhouse", "http://" + silent, "--from", "db.t", "--query-timeout", "1s", "--results", t.TempDir()}, 1, "timeout: no answer in 1s (--query-timeout)"},
		// plan's connect timeout is a flag of its own too, as the error names it.
		{[]string{"plan", "--clickhouse", "clickhouse://" + silent, "--from", "db.t", "--connect-timeout", "1s", "--results", t.TempDir()}, 1, "timeout: no answer in 1s (--connect-timeout)"},
		{[]string{"plan", "--rows", "1e6", "--connect-timeout", "1s"}, 2, "--connect-timeout: needs --clickhouse"},
		{[]string{"inspect", "--clickhouse", "localhost:9000"}, 2, "--clickhouse localhost:9000: no scheme"},
		{[]string{"inspect", "--clickhouse", "clickhouse://u:topsecret@h"}, 2, "holds a password"},
		{[]string{"inspect", "--clickhouse", "clickhouse://" + closed, "--results", t.TempDir()}, 1, "not listening"},
		{[]string{"inspect", "--clickhouse", "http://h", "--results", t.TempDir(), "--no-save"}, 2, "--no-save"},
		{[]string{"inspect", "--clickhouse", "http://h", "--format", "csv"}, 2, "--format"},
		{[]string{"inspect", "--clickhouse", "http://h", "--query-timeout", "0"}, 2, "--query-timeout 0: out of range"},
		{[]string{"inspect", "--clickhouse", "http://h", "--password", "x"}, 2, "password"},
		{[]string{"inspect", "--clickhouse", "http://h", "--verify", "d", "--verify-all"}, 2, "--verify d: cannot be combined with --verify-all"},
		{[]string{"inspect", "--clickhouse", "http://h", "--secure"}, 2, "--clickhouse http://h: --secure needs https:// (TLS over HTTP) (allowed: clickhouse://"},
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
// leaves nothing behind; --clickhouse without --verify or --from is
// refused; plan --from plans the dictionary over a table of the server and
// --verify builds it there.
func TestPlanVerifyOnServer(t *testing.T) {
	node := servertest.Start(t)
	stdout, stderr, err := packlab(t, "plan", "--rows", "1e6", "--no-calibrate", "--results", t.TempDir(), "--verify", "--clickhouse", node.NativeURL())
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	mustSay(t, "plan --verify --clickhouse", stdout, "verified on ClickHouse 26.7", "1,000,000 rows", "dropped afterwards: true", "memory: bytes_allocated", "reload: MemoryTracking peaked")
	// Several attributes: it refused them ("--value \"\": the value is the
	// first of --attributes").
	stdout, stderr, err = packlab(t, "plan", "--rows", "2e5", "--attributes", "UInt16,Nullable(String)", "--no-calibrate", "--results", t.TempDir(), "--verify", "--clickhouse", node.NativeURL())
	if err != nil {
		t.Fatalf("--attributes: %v\n%s", err, stderr)
	}
	mustSay(t, "plan --verify --clickhouse --attributes", stdout, "verified on ClickHouse 26.7", "200,000 rows", "memory: bytes_allocated")
	if left := strings.TrimSpace(node.Exec(t, "SELECT count() FROM system.databases WHERE name LIKE 'packlab_verify_%'")); left != "0" {
		t.Errorf("%s databases left behind", left)
	}
	var o, e bytes.Buffer
	if code := Main([]string{"plan", "--rows", "1e6", "--clickhouse", node.NativeURL()}, &o, &e); code != 2 || !strings.Contains(e.String(), "--clickhouse: needs --verify or --from") {
		t.Errorf("--clickhouse without --verify: exit %d, %q", code, e.String())
	}

	// --from: the plan is for the dictionary over a table of the server,
	// its figures read there; --verify then builds that dictionary there,
	// over that table.
	node.Exec(t, "CREATE TABLE users (id UInt64, plan LowCardinality(String), visits UInt32) ENGINE = MergeTree ORDER BY id",
		"INSERT INTO users SELECT sipHash64(number), ['free', 'pro'][number % 2 + 1], number FROM numbers(100000)")
	stdout, stderr, err = packlab(t, "plan", "--clickhouse", node.NativeURL(), "--from", "users", "--growth", "0", "--no-calibrate", "--results", t.TempDir(), "--verify", "--query-timeout", "2m")
	if err != nil {
		t.Fatalf("--from: %v\n%s", err, stderr)
	}
	mustSay(t, "plan --from users (stderr)", stderr, "packlab: read default.users on 127.0.0.1:", "100,000 rows; key id UInt64", "attributes plan LowCardinality(String) (3.5 bytes), visits UInt32")
	mustSay(t, "plan --from users", stdout, "plan: 100K rows of <UInt64, visits:UInt32, plan:String>", "PRIMARY KEY id", "SOURCE(CLICKHOUSE(DB 'default' TABLE 'users'))",
		"verified on ClickHouse 26.7", "100,000 rows", "memory: bytes_allocated")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--from", "users"}, "--from: needs --clickhouse"},
		{[]string{"plan", "--rows", "1e6", "--query-timeout", "5s"}, "--query-timeout: needs --clickhouse"},
		{[]string{"plan", "--clickhouse", node.NativeURL(), "--from", "users", "--query-timeout", "0"}, "--query-timeout 0: out of range (allowed: 1s to 1h)"},
		{[]string{"plan", "--rows", "1e6", "--key-column", "id"}, "--key-column and --columns: need --from"},
		{[]string{"plan", "--clickhouse", node.NativeURL(), "--from", "users", "--rows", "5"}, "--from users: cannot be combined with --rows 5"},
		{[]string{"plan", "--clickhouse", node.NativeURL(), "--from", "users", "--attributes", "UInt8"}, "--from users: cannot be combined with --attributes"},
		{[]string{"plan", "--clickhouse", node.NativeURL(), "--from", "users", "--verify", "--cluster", "lab"}, "--from users: cannot be combined with --cluster lab"},
		{[]string{"plan", "--clickhouse", node.NativeURL(), "--from", "users", "--key-column", "uid", "--results", t.TempDir()}, "--key-column uid: not a column of default.users (allowed: id, plan, visits)"},
		{[]string{"plan", "--clickhouse", node.NativeURL(), "--from", "nope", "--results", t.TempDir()}, "--from default.nope: no such table"},
	} {
		o.Reset()
		e.Reset()
		if code := Main(tc.args, &o, &e); code != 2 || !strings.Contains(e.String(), tc.want) || strings.Count(e.String(), "\n") != 1 {
			t.Errorf("%q: exit %d, %q; want exit 2 and one line saying %q", tc.args, code, e.String(), tc.want)
		}
	}
}

// TestInspectionInHistory: an inspection is kept as a job: report --list
// lists it, the default report is of it (the last job asked for), report
// --job renders it in HTML and Markdown with every dictionary's figures,
// findings and advice and the server's chart; a report of several jobs has
// it as a section; a corrupt inspection file is a skipped line; history
// clear removes it.
func TestInspectionInHistory(t *testing.T) {
	node := servertest.Start(t)
	salesDict(t, node, 20000)
	node.Dictionary(t, "`<b>odd</b>`", "src", "v UInt16", "LIFETIME(0) LAYOUT(HASHED(SHARDS 2))")
	dir := t.TempDir()
	packlabResults(t, 1, "run", "--layout", "packed", "--rows", "1e4", "--results", dir, "--format", "json")
	text, stderr, err := packlab(t, "inspect", "--clickhouse", node.NativeURL(), "--results", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	m := regexp.MustCompile(`kept as job (\S+) in`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("inspect did not say the job it kept: %q", stderr)
	}
	id := m[1]
	for _, args := range [][]string{{"report", "--list"}, {"history", "list"}} {
		list, _, err := packlab(t, append(args, "--results", dir)...)
		if err != nil || !strings.Contains(list, id) || !strings.Contains(list, "inspection  inspect "+node.NativeURL()+" (2 dictionaries)") || !strings.Contains(list, "1 result ") {
			t.Errorf("%s: %v\n%s", args, err, list)
		}
	}

	// The default report is the inspection's; its words are the command's.
	html, stderr, err := packlab(t, "report", "--results", dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// <wbr> (a layout's break opportunities in the table) is no text.
	mustSay(t, "the report of the last job", strings.ReplaceAll(html, "<wbr>", ""), "<h2>inspect "+node.NativeURL(), "job "+id, "default.sales dict", "LAYOUT(HASHED())", "LAYOUT(HASHED(SHARDS 2))",
		"20,000", "finding: SPARSE_HASHED holds the same rows", "CREATE OR REPLACE DICTIONARY default.`sales dict`", `id="packlab-server-dictionaries`, "default.&lt;b&gt;odd&lt;/b&gt;",
		"bytes_allocated", "reload peak", "server&#39;s limit")
	if strings.Contains(html, "<b>odd</b>") || strings.Contains(html, "<h2>Results</h2>") {
		t.Error("the report of an inspection pastes the server's name unescaped, or has a results table")
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "  finding: ") && !strings.Contains(html, htmlpkg.EscapeString(strings.TrimSpace(strings.TrimPrefix(line, "  ")))) {
			t.Errorf("the HTML report lacks the command's %q", line)
		}
	}
	md, _, err := packlab(t, "report", "--results", dir, "--job", id, "--format", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	mustSay(t, "the Markdown report", md, "## inspect "+node.NativeURL(), "| node |", "finding: SPARSE_HASHED", "```sql")

	// Every job: the run's results and the inspection's section.
	all, _, err := packlab(t, "report", "--results", dir, "--all")
	if err != nil {
		t.Fatal(err)
	}
	mustSay(t, "the report of every job", all, "<h2>Results</h2>", "packed", "<h2>inspect "+node.NativeURL(), "inspected "+node.NativeURL())

	// A corrupt inspection beside it: skipped, named, not a failure.
	if err := os.WriteFile(filepath.Join(dir, "inspections", "torn.json"), []byte(`{"kind":"inspection","job":`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = packlab(t, "report", "--list", "--results", dir)
	if err != nil || !strings.Contains(stderr, "packlab: skipped inspection "+filepath.Join(dir, "inspections", "torn.json")) {
		t.Errorf("a corrupt inspection: %v, %q", err, stderr)
	}

	_, stderr, err = packlab(t, "history", "clear", "--results", dir, "--yes")
	if err != nil || !strings.Contains(stderr, "deleted 1 result(s) and 1 inspection(s), 2 job(s)") {
		t.Errorf("history clear: %v, %q", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "inspections", id+".json")); !os.IsNotExist(err) {
		t.Errorf("the inspection is left after history clear: %v", err)
	}
}
