package result

import (
	"fmt"
	"strings"
	"testing"
)

// TestProcessNotesWords: the note on a worker that outlived its load says
// what the process did besides (reading the file for a file's run, not
// "generating the keys") and stays a line for a sweep's 1,350 runs (it was
// one of 40 KB).
func TestProcessNotesWords(t *testing.T) {
	var runs []Result
	for i := range 1350 {
		runs = append(runs, Result{Layout: "hashed", Shards: 1 + i%128, MaxLoadFactor: 0.5 + float64(i)/10000, Rows: int64(1000 + i),
			Source: "/data/keys.tsv", LoadSeconds: 0.01, ProcessSeconds: 1})
	}
	notes := ProcessNotes(runs)
	if len(notes) != 1 || len(notes[0]) > 1000 || !strings.Contains(notes[0], "reading the file") || strings.Contains(notes[0], "generating") ||
		!strings.Contains(notes[0], fmt.Sprintf("and %d more", 1345)) {
		t.Errorf("ProcessNotes of 1,350 file runs: %d notes, the first of %d bytes: %.300q", len(notes), len(notes[0]), notes[0])
	}
	runs[0].Source = "random"
	if n := ProcessNotes(runs[:1]); len(n) != 1 || !strings.Contains(n[0], "generating the keys") {
		t.Errorf("ProcessNotes of a generated run: %q", n)
	}
}
