package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlagRules: issue 14's cases of flags that were accepted silently or
// answered with a message that lost the user's value. Each is one line,
// naming both flags of a conflict and the value exactly as given, exit 2,
// and no work done (the results folder is not created).
func TestFlagRules(t *testing.T) {
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	src := filepath.Join(dir, "big.tsv")
	if err := os.WriteFile(src, []byte("1\t2\n3\t4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := "--results=" + results
	for _, c := range []struct {
		args []string
		want string
	}{
		// Conflicts, naming both.
		{[]string{"run", "--rows", "5", "--source", src, r}, "--rows 5: cannot be combined with --source " + src + " (a file gives all its rows; allowed: one of the two)"},
		{[]string{"run", "--max-load-factor", "0.9", "--layout", "gomap", r}, "--max-load-factor 0.9: --layout gomap ignores it (hashed_array, gomap and the C++ reference maps grow by their own rule; allowed: with hashed, packed, sparse, compact or iceberg)"},
		{[]string{"run", "--max-load-factor", "0.9", "--layout", "hashed_array,gomap", r}, "--max-load-factor 0.9: --layout hashed_array,gomap ignores it"},
		{[]string{"run", "--results", results, "--no-save"}, "--results " + results + ": cannot be combined with --no-save"},
		{[]string{"sweep", "growth", "--rows", "5", "--source", src, r}, "--rows 5: cannot be combined with --source " + src},
		{[]string{"report", "--list", "--out", filepath.Join(dir, "r.html"), r}, "--out " + filepath.Join(dir, "r.html") + ": cannot be combined with --list"},
		{[]string{"serve", "--build", "--open"}, "--open: cannot be combined with --build"},
		// A repeated flag.
		{[]string{"run", "--rows", "1e5", "--rows", "2e5", r}, "--rows 2e5: given twice, first as --rows 1e5 (allowed: each flag once)"},
		{[]string{"run", "--force", "--force", r}, "--force: given twice (allowed: each flag once)"},
		{[]string{"report", "--ids", "a", "--ids", "b", r}, "--ids b: given twice, first as --ids a"},
		// Empty values, and a value that is the next flag.
		{[]string{"run", "--results", ""}, `--results "": empty (allowed: a value; run 'packlab help run', or leave the flag out for its default)`},
		{[]string{"report", "--results", ""}, `--results "": empty`},
		{[]string{"run", "--format", "", r}, `--format "": empty`},
		{[]string{"run", "--key-column", "", "--source", src, r}, `--key-column "": empty`},
		{[]string{"report", "--ids", " ", r}, `--ids " ": empty`},
		{[]string{"report", "--ids", ",", r}, `--ids ,: result id 1 of 2 is empty: a comma at the start (allowed: ids listed by 'packlab report --list --all', comma-separated)`},
		{[]string{"report", "--job", ",", r}, `--job ,: job id 1 of 2 is empty: a comma at the start (allowed: ids listed by 'packlab report --list', comma-separated)`},
		// An empty item of a comma-separated list is refused, never
		// dropped: "hashed," named a layout it did not give.
		{[]string{"run", "--layout", "hashed,", r}, "--layout hashed,: layout 2 of 2 is empty: a comma at the end (allowed: a comma-separated list of hashed, packed,"},
		{[]string{"run", "--layout", "hashed,,packed", r}, "--layout hashed,,packed: layout 2 of 3 is empty: nothing between two commas"},
		{[]string{"sweep", "growth", "--layout", ",packed", r}, "--layout ,packed: layout 1 of 2 is empty: a comma at the start"},
		{[]string{"report", "--ids", "20200101T000000.000Z-hashed-0000,", r}, "--ids 20200101T000000.000Z-hashed-0000,: result id 2 of 2 is empty: a comma at the end"},
		{[]string{"report", "--job", "x,,y", r}, "--job x,,y: job id 2 of 3 is empty: nothing between two commas"},
		{[]string{"run", "--source", src, "--attributes", "UInt16,UInt32", "--columns", "3,", r}, "--columns 3,: column 2 of 2 is empty: a comma at the end (allowed: one column for each attribute after the first (a position or a header name), e.g. --columns 3,4, or none)"},
		{[]string{"run", "--source", src, "--attributes", "UInt16,UInt32,UInt8", "--columns", "3, ,4", r}, "--columns 3, ,4: column 2 of 3 is empty: nothing between two commas"},
		{[]string{"plan", "--clickhouse", "http://127.0.0.1:1", "--from", "t", "--columns", "v,", r}, "--columns v,: column 2 of 2 is empty: a comma at the end (allowed: the table's column names, comma-separated (default: every column but the key))"},
		{[]string{"run", "--attributes", "UInt16,", r}, "--attributes UInt16,: attribute 2 is empty (allowed: types, comma-separated"},
		{[]string{"report", "--job", "x", "--all", r}, `--job x: cannot be combined with --all (each picks the jobs or results to report; allowed: one of the two)`},
		{[]string{"report", "--since", "yesterday", r}, `--since yesterday: not a time (allowed: a duration back from now like 90m, 2h or 3d, up to 99999d; a date 2026-12-01; a time 2026-12-01T10:00)`},
		{[]string{"report", "--since", "99999999d", r}, `--since 99999999d: out of range (allowed: a duration back from now like 90m, 2h or 3d, up to 99999d;`},
		{[]string{"report", "--since", "-3d", r}, `--since -3d: negative (allowed: `},
		{[]string{"report", "--since", "-2h", r}, `--since -2h: negative (allowed: `},
		{[]string{"run", "--rows", "--results", results}, "--rows: needs a value, but the next argument is the flag --results (run 'packlab help run')"},
		{[]string{"run", "--layout=--rows", r}, "--layout: needs a value, but the next argument is the flag --rows"},
		// The user's exact value.
		{[]string{"run", "--header", "maybe", "--source", src, r}, "--header maybe: not allowed (allowed: auto, yes, no)"},
		{[]string{"run", "--key-column", "0", "--source", src, r}, "--key-column 0: not allowed (allowed: a position 1 or more, or a header name)"},
		{[]string{"run", "--shards", " 4x", r}, `--shards " 4x": not a whole number (allowed: 1 to 128)`},
		{[]string{"run", "--header", "yes", r}, "--header yes: applies only to a file (allowed: with --source FILE)"},
		{[]string{"run", "--skip-bad-rows", r}, "--skip-bad-rows: applies only to a file (allowed: with --source FILE)"},
	} {
		stdout, stderr, err := packlab(t, c.args...)
		if err == nil {
			t.Errorf("packlab %q: no error, want %q", c.args, c.want)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("packlab %q\n got %q\nwant %q", c.args, err, c.want)
		}
		if code := exitCode(err); code != 2 {
			t.Errorf("packlab %q: exit code %d, want 2", c.args, code)
		}
		if stdout != "" || stderr != "" {
			t.Errorf("packlab %q printed %q / %q besides the error", c.args, stdout, stderr)
		}
	}
	if _, err := os.Stat(results); err == nil {
		t.Error("refused flags created the results folder")
	}
	// The rules and the exit codes are in every command's help.
	for _, cmd := range []string{"run", "sweep", "report", "serve", "plan"} {
		out, _, _ := packlab(t, "help", cmd)
		mustSay(t, "help "+cmd, out, "each flag at most once", "2 bad input (a flag, a file's content, or the memory guard's", "128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP", "1 a failure while running")
	}
}

// TestIntFlagWritten: a count flag takes what the window's form takes: 1e2
// and 4.0 where whole, 1_000 with its underscores, spaces around it.
func TestIntFlagWritten(t *testing.T) {
	for s, want := range map[string]int{"1e2": 100, "4.0": 4, "1_0": 10, " 64 ": 64, "128": 128} {
		var got int
		if err := intFlag("--shards", s, 1, 128, &got); err != nil || got != want {
			t.Errorf("--shards %q: %d, %v; want %d", s, got, err, want)
		}
	}
}
