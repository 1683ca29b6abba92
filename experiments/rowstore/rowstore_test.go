package rowstore

import (
	"encoding/binary"
	"testing"

	"github.com/packlab/packlab/experiments/dict"
)

// TestRowArray: rows numbered in the order they were added are found by
// number in the arena's first, small chunks and in its 4 MiB ones.
func TestRowArray(t *testing.T) {
	for _, width := range []int{17, 28, 1000} {
		a := newRowArray(width, 4)
		n := 3*a.geoRows + 2*a.per + 5
		for i := range n {
			row, num, err := a.add()
			if err != nil || num != uint64(i) {
				t.Fatalf("width %d: row %d numbered %d, %v", width, i, num, err)
			}
			binary.LittleEndian.PutUint64(row, uint64(i)*0x9E3779B97F4A7C15)
			row[width-1] = byte(i)
		}
		for i := range n {
			row := a.row(uint64(i))
			if binary.LittleEndian.Uint64(row) != uint64(i)*0x9E3779B97F4A7C15 || row[width-1] != byte(i) {
				t.Fatalf("width %d: row %d of %d does not hold what was written", width, i, n)
			}
		}
		if want := dict.RowArrayBytes(width, n); a.Size() != want {
			t.Errorf("width %d: %d rows in %d bytes, dict.RowArrayBytes says %d", width, n, a.Size(), want)
		}
		a.Close()
	}
}
