package planner

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// TestPlanBeyondEightEiB: at 2^62 rows every table needs more bytes than an
// int64 counts; core's figures saturate, and the plan says "over 8 EiB",
// never 8.00 EiB as if measured, nor a serving table of 0 B from the
// difference of two saturated figures, nor 8 EiB over the rows as the
// bytes a pair ("over 2.00").
func TestPlanBeyondEightEiB(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1 << 62, MemoryBytes: 24 << 30}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WritePlan(&b, plan, "table"); err != nil {
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
