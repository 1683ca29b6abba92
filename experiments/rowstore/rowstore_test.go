package rowstore

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/packlab/packlab/core"
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

// TestCopiedBytes: what the read copies of rows all found (copyBytes) is
// every String the arena holds, a NULL's none, and each wide row; of every
// other row, less. For a row in the cell and a wide one in the array.
func TestCopiedBytes(t *testing.T) {
	const n = 5000
	str := dict.Attribute{Type: dict.StringRef, MinLen: 3, MaxLen: 40}
	nullable := str
	nullable.Nullable = true
	t.Run("in the cell", func(t *testing.T) {
		rs := New([]dict.Attribute{{Type: core.MustType("UInt16")}, nullable}, 11, 0, 0)
		defer rs.Close()
		vals := make([]core.U128, n)
		for i := range vals {
			row := unsafe.Slice((*byte)(unsafe.Pointer(&vals[i])), unsafe.Sizeof(vals[i]))
			if err := fillRow(rs, uint64(i), row, nil, i); err != nil {
				t.Fatal(err)
			}
		}
		checkCopiedBytes(t, rs, vals, 0)
	})
	t.Run("wide", func(t *testing.T) {
		rs := New([]dict.Attribute{str, nullable}, 8, 0, 0)
		defer rs.Close()
		if rs.wide == nil {
			t.Fatal("two Strings and a Nullable's flags in 8 bytes: no row array")
		}
		vals := make([]uint64, n)
		for i := range vals {
			row, num, err := rs.wide.add()
			if err == nil {
				err = fillRow(rs, uint64(i), row, nil, i)
			}
			if err != nil {
				t.Fatal(err)
			}
			vals[i] = num
		}
		checkCopiedBytes(t, rs, vals, n*rs.wide.width)
	})
}

func checkCopiedBytes[V core.Bits](t *testing.T, rs *Store, vals []V, rows int) {
	t.Helper()
	found := make([]bool, len(vals))
	for i := range found {
		found[i] = true
	}
	want := int(rs.arena.Len()) + rows
	if got := copyBytes(rs, vals, found); got != want {
		t.Errorf("every row found: %d bytes copied, want the arena's %d and the rows' %d", got, rs.arena.Len(), rows)
	}
	nulls := 0
	for i := range vals {
		row := unsafe.Slice((*byte)(unsafe.Pointer(&vals[i])), unsafe.Sizeof(vals[i]))
		if rs.wide != nil {
			num, _ := core.ToUint64(vals[i])
			row = rs.wide.row(num)
		}
		if _, ok := rs.stringRef(row, rs.strs[len(rs.strs)-1]); !ok {
			nulls++
		}
	}
	if nulls == 0 || nulls > len(vals)/dict.NullEvery*2 {
		t.Errorf("%d of %d rows NULL, want about one in %d", nulls, len(vals), dict.NullEvery)
	}
	for i := range found {
		found[i] = i%2 == 0
	}
	if got := copyBytes(rs, vals, found); got <= 0 || got >= want {
		t.Errorf("every other row found: %d bytes copied, want more than none and less than %d", got, want)
	}
	CopyRows[V](rs)(vals, found)
}
