//go:build !js

package app_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/server/servertest"
)

// checkClickHouseTab is the phase "clickhouse": the Your ClickHouse tab
// inspects a real test server (servertest, ClickHouse 26.7 from the fetched
// library) holding one dictionary, and shows its row, its advice with Copy
// and the chart; a bad URL is the url field's error. The screenshot of the
// tab goes to PACKLAB_CH_SCREENSHOT when set.
func checkClickHouseTab(t *testing.T, bin, display, tmp string, script []byte, results, exports string) {
	t.Helper()
	if _, problem, skip := servertest.Program(); skip {
		t.Logf("the Your ClickHouse tab is not driven: %s", problem)
		return
	}
	node := servertest.Start(t)
	node.Exec(t, "CREATE TABLE src (id UInt64, name String, visits UInt32) ENGINE = MergeTree ORDER BY id",
		"INSERT INTO src SELECT number, concat('name-', toString(number)), number FROM numbers(20000)",
		// The Plan tab's table: random ids (dense ones are FLAT's, which
		// a verification does not build).
		"CREATE TABLE visits (user UInt64, name String, visits UInt32) ENGINE = MergeTree ORDER BY user",
		"INSERT INTO visits SELECT sipHash64(number), concat('name-', toString(number)), number FROM numbers(20000)",
		"CREATE DICTIONARY shop_names (id UInt64, name String) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED_ARRAY())",
		"SYSTEM RELOAD DICTIONARY shop_names")
	shot := filepath.Join(tmp, "clickhouse.png")
	r, _ := runApp(t, bin, display, tmp, "clickhouse", []string{node.NativeURL()}, script, results, exports, shot)
	if !r.OK {
		t.Fatalf("the Your ClickHouse tab: %s (steps %+v)", r.Error, r.Steps)
	}
	c := r.CH
	if !strings.HasPrefix(c.URLError, "localhost: ") || strings.Contains(c.URLError, "$") || c.URLErrorAfter != "" {
		t.Errorf("a bad URL's error beside the url field: %q (after a good one: %q)", c.URLError, c.URLErrorAfter)
	}
	if len(c.Rows) != 1 || len(c.Rows[0]) != len(c.Header) || c.Rows[0][0] != "default.shop_names" ||
		!strings.Contains(c.Rows[0][1], "HASHED_ARRAY") || c.Rows[0][4] != "20,000" {
		t.Errorf("the dictionaries' table: %q %q; want default.shop_names, HASHED_ARRAY, 20,000 elements", c.Header, c.Rows)
	}
	if len(c.Advice) != 1 || !strings.Contains(c.Advice[0], "DICTIONARY default.shop_names") ||
		!slices.Equal(c.Copy, []string{"Copy"}) {
		t.Errorf("the advice: %q with buttons %q; want shop_names's CREATE DICTIONARY and Copy", c.Advice, c.Copy)
	}
	if len(c.Nodes) != 1 || !strings.Contains(c.Nodes[0], "26.7") || c.ChartInk < 1000 || len(c.Wide) > 0 {
		t.Errorf("the tab: nodes %q, a chart of %d inked pixels, wider than the window: %q", c.Nodes, c.ChartInk, c.Wide)
	}
	// The advice built on the server from the tab: its verification's
	// lines under it; the saved inspection has them, and no button.
	if !slices.Equal(c.VerifyButtons, []string{"Build it on the server and measure"}) || len(c.Verified) < 4 ||
		!strings.HasPrefix(c.Verified[0], "verified on ClickHouse 26.7") || !strings.Contains(c.Verified[3], "beside default.shop_names as it serves") || len(c.VerifiedWide) > 0 {
		t.Errorf("the advice built on the server: buttons %q, lines %q, wider than the window: %q", c.VerifyButtons, c.Verified, c.VerifiedWide)
	}
	// The Plan tab over the server's table visits: its CREATE DICTIONARY
	// reads it; the rows, types and largest key are the table's (off);
	// built on the server over visits.
	pf := c.PlanFrom
	if !strings.Contains(pf.Headline, "20K rows") || len(pf.SQL) != 1 || !strings.Contains(pf.SQL[0], "SOURCE(CLICKHOUSE(DB 'default' TABLE 'visits'))") ||
		!strings.Contains(pf.SQL[0], "name String") || len(pf.Off) != 4 || len(pf.Wide) > 0 || pf.Verify != "Build it on the server and measure" {
		t.Errorf("the Plan tab over visits: %+v", pf)
	}
	if v := strings.Join(pf.Verified, "\n"); !strings.Contains(v, "rows, built on "+node.NativeURL()+" over visits") || !strings.Contains(v, "verified on ClickHouse 26.7") ||
		!strings.Contains(v, "20,000 rows") || !strings.Contains(v, "memory: bytes_allocated") {
		t.Errorf("the plan over visits built on the server: %q", pf.Verified)
	}
	if c.OpenedVerified != len(c.Verified) || c.OpenedVerifyButtons != 0 {
		t.Errorf("the saved inspection opened: %d verified lines (want %d), %d buttons to build (want 0)", c.OpenedVerified, len(c.Verified), c.OpenedVerifyButtons)
	}
	if left, _ := node.Query("SELECT count() FROM system.databases WHERE name LIKE 'packlab_verify_%'"); strings.TrimSpace(left) != "0" {
		t.Errorf("%s databases of packlab's left behind", left)
	}
	// The inspection is kept as a job: History lists it, and opening it
	// shows the same table from the saved file.
	if !strings.HasPrefix(c.Kept, "Kept in the history as job ") {
		t.Errorf("the tab does not say the inspection was kept: %q", c.Kept)
	}
	if len(c.HistoryRow) < 6 || !strings.Contains(c.HistoryRow[3], "inspect "+node.NativeURL()+" (1 dictionary, 1 advice built)") || c.HistoryRow[5] != "inspection" || len(c.HistoryWide) > 0 {
		t.Errorf("History's row of the inspection: %q (wider than the window: %q)", c.HistoryRow, c.HistoryWide)
	}
	if !strings.HasPrefix(c.OpenedKept, "Saved inspection of ") || !slices.EqualFunc(c.OpenedRows, c.Rows, slices.Equal) {
		t.Errorf("the saved inspection opened from History: %q, rows %q; want the rows %q", c.OpenedKept, c.OpenedRows, c.Rows)
	}
	if out := os.Getenv("PACKLAB_CH_SCREENSHOT"); out != "" {
		if b, err := os.ReadFile(shot); err == nil {
			os.WriteFile(out, b, 0o644)
		}
	}
}
