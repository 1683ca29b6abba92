package experiments

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/config"
)

// TestPreReadBounded: the pass over a file before the runs holds a bounded
// block of attribute cells however long its Strings: 20,000 rows of 2-6 KB
// Strings (80 MB) are counted in a heap of 15 MiB here (55 while the cells
// grew by appends), where it was 316 (65,536-row blocks held 970 MB for
// 100K such rows, issue 48).
func TestPreReadBounded(t *testing.T) {
	path := longStringsTSV(t)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mc, err := Check(context.Background(), config.Config{Layouts: []string{"packed_row"}, Source: path, Attributes: []string{"UInt16", "note:String"}})
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if err != nil || mc.Estimates[0].Rows != 20_000 {
		t.Fatalf("Check: %+v, %v", mc, err)
	}
	grown := int64(after.HeapSys) - int64(before.HeapSys)
	t.Logf("heap grew %d MiB over an 80 MB file of long Strings", grown>>20)
	if grown > 100<<20 {
		t.Errorf("the pre-read's heap grew %d MiB; want a bounded block (at most 100 MiB)", grown>>20)
	}
}

// longStringsTSV writes a TSV of 20,000 rows whose String column holds 2 to
// 6 KB each (80 MB), and returns its path.
func longStringsTSV(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "long.tsv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id\tvalue\tnote")
	for i := range 20_000 {
		fmt.Fprintf(w, "%d\t%d\t%s\n", i+1, i%60000, strings.Repeat("x", 2048+(i*7919)%4096))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
