package write

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/planner"
)

// TestPlanJSONContract: `plan --format json` is an array of candidates
// with (at least) the fields issue 12 lists.
func TestPlanJSONContract(t *testing.T) {
	plan, err := planner.MakePlan(planner.PlanRequest{Rows: 1e6}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Plan(&buf, plan, "json"); err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not a JSON array: %v", err)
	}
	if len(got) != len(plan.Candidates) {
		t.Fatalf("%d candidates in JSON, %d in the plan", len(got), len(plan.Candidates))
	}
	for _, k := range strings.Fields(`layout key_type value_type rows shards max_load_factor steady_bytes peak_bytes
		bytes_per_pair load_seconds read_rows_per_second fits rank why clickhouse_layout`) {
		if _, ok := got[0][k]; !ok {
			t.Errorf("JSON candidate has no %q", k)
		}
	}
	// The two answers are marked, the ClickHouse one with its dictionary,
	// the Go one with its code; no other setup is.
	answers := map[string]map[string]any{}
	for _, c := range got {
		if a, _ := c["answer"].(string); a != "" {
			answers[a] = c
		} else if c["create_dictionary"] != "" || c["go_code"] != "" {
			t.Errorf("setup #%v, not an answer, has a snippet", c["rank"])
		}
	}
	if ch, g := answers["clickhouse"], answers["go"]; len(answers) != 2 || ch["engine"] != "clickhouse" || g["engine"] != "go" ||
		!strings.Contains(ch["create_dictionary"].(string), "LAYOUT(") || !strings.Contains(g["go_code"].(string), "core.Load(") || got[0]["rank"] != 1.0 {
		t.Errorf("answers %v: want one of each, ClickHouse's with its CREATE DICTIONARY, Go's with its code", answers)
	}
	if ch := plan.BestClickHouse(); plan.Best().PacklabOnly && (ch == nil || ch.CreateDictionary == "") {
		t.Errorf("rank 1 is packlab-only and no ClickHouse setup has a CREATE DICTIONARY: %+v", ch)
	}
	for _, f := range []string{"table", "markdown", "csv"} {
		buf.Reset()
		if err := Plan(&buf, plan, f); err != nil || !strings.Contains(buf.String(), plan.Best().Layout) {
			t.Errorf("format %s: %v\n%s", f, err, buf.String())
		}
	}
}

// TestPlanBeyondEightEiB: at 2^62 rows every table needs more bytes than an
// int64 counts; core's figures saturate, and the plan says "over 8 EiB",
// never 8.00 EiB as if measured, nor a serving table of 0 B from the
// difference of two saturated figures, nor 8 EiB over the rows as the
// bytes a pair ("over 2.00").
func TestPlanBeyondEightEiB(t *testing.T) {
	plan, err := planner.MakePlan(planner.PlanRequest{Rows: 1 << 62, MemoryBytes: 24 << 30}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Plan(&b, plan, "table"); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.Contains(text, "over 8 EiB") || strings.Contains(text, "8.00 EiB") || strings.Contains(text, "8.0 EiB") ||
		strings.Contains(text, "serving table (0 B)") || strings.Contains(text, "serving table, 0 B") ||
		// 8 EiB over the rows is not the bytes a pair, only a floor.
		regexp.MustCompile(`[^r] [0-9.]+ bytes/pair`).MatchString(text) || !strings.Contains(text, "over 2.00 bytes/pair") {
		t.Errorf("plan at 2^62 rows:\n%s", text)
	}
}

// TestPlanLargestCountsReadable: the keys after the growth at 2^62 rows (the
// cap) and at 4e18 (4.4e18, not 4400000000000000512 from a float's
// product) are written as every other figure of the plan is, short, never
// as a run of digits.
func TestPlanLargestCountsReadable(t *testing.T) {
	for _, c := range []struct {
		rows int64
		want string
	}{
		{1 << 62, "2^62 rows (2^62 keys after 10 % growth)"},
		{4e18, "4e18 rows (4.4e18 keys after 10 % growth)"},
		{1e18, "1e18 rows (1.1e18 keys after 10 % growth)"},
	} {
		g := 10.0
		plan, err := planner.MakePlan(planner.PlanRequest{Rows: c.rows, MemoryBytes: 24 << 30, GrowthPercent: &g}, nil, machine24)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Plan(&b, plan, "table"); err != nil {
			t.Fatal(err)
		}
		text := planner.PlanHeadline(plan) + "\n" + b.String()
		if !strings.Contains(text, c.want) {
			t.Errorf("%d rows: the headline does not say %q:\n%s", c.rows, c.want, text)
		}
		if raw := regexp.MustCompile(`[0-9]{10,}`).FindString(text); raw != "" {
			t.Errorf("%d rows: the plan writes %s as raw digits:\n%s", c.rows, raw, text)
		}
	}
}

// machine24 is a 24 GiB, 2-core machine: this lab's.
var machine24 = planner.PlanMachine{AvailableBytes: 24 << 30, TotalBytes: 24 << 30, Cores: 2}
