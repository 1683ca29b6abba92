package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
)

// FuzzFileSource reads any bytes as a TSV or CSV file, its columns by
// position or by name, with an attribute column or not, bad rows skipped
// or not: opening and reading never panics or hangs, every error of the
// file's content is a *FileError naming the file, and a row read has
// every cell it asked for. Its seeds are in testdata/fuzz/FuzzFileSource.
func FuzzFileSource(f *testing.F) {
	f.Add([]byte("id\tvalue\tnote\n1\t2\tx\n"), uint8(0))
	f.Add([]byte("\xef\xbb\xbfid,value,note\r\n1,2,\"a,b\r\nc\"\r\n2,3,\"x\"\"y\"\n"), uint8(1))
	f.Add([]byte("value\tnote\tid\n2\tx\\\n\t1\n"), uint8(2))
	f.Add([]byte("1,2\n3\n4,5,6\n\"7,8\n"), uint8(5))
	f.Add([]byte("id\tvalue\n1\t\\N\n2\t70000\n\xff\xfe\t1\n"), uint8(12))
	f.Add(append([]byte("1\t2\t"), bytes.Repeat([]byte("9"), 300<<10)...), uint8(4)) // past the read buffer
	f.Add([]byte("id,value,note\r\n1,2,\"a\r\nb\"\r\n"), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		name := "f.tsv"
		if mode&1 != 0 {
			name = "f.csv"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		spec := testFileSpec(path)
		if mode&2 != 0 {
			spec.KeyColumn, spec.ValueColumn = "id", "value"
		}
		if mode&4 != 0 {
			spec.Columns = []string{"3"}
			if mode&2 != 0 {
				spec.Columns = []string{"note"}
			}
		}
		spec.SkipBadRows = mode&8 != 0
		done := make(chan error, 1)
		go func() { done <- readCells(spec, nil) }()
		select {
		case err := <-done:
			var fe *FileError
			if err != nil && (!errors.As(err, &fe) || fe.Path != path) {
				t.Fatalf("%q (mode %d): error %v (%T), want a *FileError of the file", data, mode, err, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("%q (mode %d): reading has not ended after 20 s", data, mode)
		}
	})
}

// readCells reads spec's file as <UInt64, UInt16> to its end, each row's
// cells of spec.Columns too, handing each row to row when it is set.
func readCells(spec Spec, row func(k uint64, v uint16, cells []string)) error {
	src, err := Open[uint64, uint16](spec, core.MustType("UInt64"), core.MustType("UInt16"))
	if err != nil {
		return err
	}
	defer src.Close()
	cs, _ := src.(core.CellSource)
	if len(spec.Columns) > 0 && cs == nil {
		return fmt.Errorf("a source with columns is no CellSource")
	}
	var b core.Block[uint64, uint16]
	for n := 1; ; n = n%7 + 1 { // blocks of 1 to 7 rows: cells over block ends
		if err := src.Next(&b, n); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
		for i := range b.Len() {
			var cells []string
			for j := range spec.Columns {
				cells = append(cells, string(cs.Cell(i, j)))
			}
			if row != nil {
				row(b.Keys[i], b.Values[i], cells)
			}
		}
	}
}

// FuzzFileColumnsByName writes a table of (id, value, note) drawn from
// seed, its columns in any order under a header, as TSV or CSV (quoted
// separators and line breaks, TSV escapes, CRLF, a byte order mark, long
// notes over the source's cell chunks), and reads it back by the header's
// names: every row comes back with its own value and note, never the
// column at another's position. Its seeds are in
// testdata/fuzz/FuzzFileColumnsByName.
func FuzzFileColumnsByName(f *testing.F) {
	for seed := range uint64(8) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 48))
		csv := r.IntN(2) == 0
		crlf, bom := r.IntN(3) == 0, r.IntN(4) == 0
		order := []string{"id", "value", "note"}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		type want struct {
			v    uint16
			note string
		}
		rows := r.IntN(50)
		wants := make(map[uint64]want, rows)
		var buf bytes.Buffer
		if bom {
			buf.WriteString("\xef\xbb\xbf")
		}
		eol := "\n"
		if crlf {
			eol = "\r\n"
		}
		sep := "\t"
		if csv {
			sep = ","
		}
		buf.WriteString(strings.Join(order, sep) + eol)
		for i := range rows {
			k := uint64(i)*7919 + seed%1000
			w := want{uint16(r.Uint32()), randomNote(r)}
			wants[k] = w
			fields := map[string]string{"id": strconv.FormatUint(k, 10), "value": strconv.Itoa(int(w.v))}
			if csv {
				fields["note"] = `"` + strings.ReplaceAll(w.note, `"`, `""`) + `"`
			} else {
				fields["note"] = tsvEscape(w.note)
			}
			var line []string
			for _, c := range order {
				line = append(line, fields[c])
			}
			buf.WriteString(strings.Join(line, sep) + eol)
		}
		if rows == 0 {
			return // a header without rows: refused, as TestFileErrors has it
		}
		name := "t.tsv"
		if csv {
			name = "t.csv"
		}
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		spec := testFileSpec(path, "key=id", "value=value")
		spec.Columns = []string{"note"}
		got := 0
		err := readCells(spec, func(k uint64, v uint16, cells []string) {
			got++
			w, ok := wants[k]
			switch {
			case !ok:
				t.Fatalf("order %v: key %d was never written", order, k)
			case v != w.v || cells[0] != w.note:
				t.Fatalf("order %v: key %d read (%d, %.40q), want (%d, %.40q)", order, k, v, cells[0], w.v, w.note)
			}
		})
		if err != nil || got != rows {
			t.Fatalf("order %v, csv %v: %d rows of %d, %v", order, csv, got, rows, err)
		}
	})
}

// randomNote is a String a user's file may hold: empty, short, with
// separators, quotes, tabs, backslashes and line breaks, or longer than
// the source's first cell chunk.
func randomNote(r *rand.Rand) string {
	switch r.IntN(8) {
	case 0:
		return ""
	case 1:
		return strings.Repeat("x", cellChunkFirst+r.IntN(cellChunkFirst))
	}
	const alphabet = "ab,\"\t\\\n\r é"
	n := r.IntN(40)
	var b strings.Builder
	for range n {
		c := []rune(alphabet)
		b.WriteRune(c[r.IntN(len(c))])
	}
	s := b.String()
	// A CR before the end of a line is a CRLF's: the source takes it as
	// the line's ending, as ClickHouse does; a note never ends in one.
	return strings.TrimRight(s, "\r")
}

// tsvEscape writes s as a TSV field (ClickHouse's escapes).
func tsvEscape(s string) string {
	return strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(s)
}

// TestFileCSVQuotedCRLF: a line break inside a quoted CSV field is the
// field's as written, CR LF too (it had lost its CR: a CRLF file's
// multi-line notes loaded changed).
func TestFileCSVQuotedCRLF(t *testing.T) {
	path := writeFile(t, "n.csv", "id,value,note\r\n1,2,\"a\r\nb\nc\"\r\n", false)
	spec := testFileSpec(path)
	spec.Columns = []string{"note"}
	var got []string
	if err := readCells(spec, func(_ uint64, _ uint16, cells []string) { got = append(got, cells[0]) }); err != nil || len(got) != 1 || got[0] != "a\r\nb\nc" {
		t.Errorf("notes %q, %v; want [\"a\\r\\nb\\nc\"]", got, err)
	}
}

// TestFileNullWhereNotNullable: a key's or a value's \N (NULL) is refused
// naming the file, line, column, that it is NULL and what is allowed; it
// was `"\\N" is not a valid UInt16`, the backslash doubled by the quoting.
func TestFileNullWhereNotNullable(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"id\tvalue\n1\t\\N\n", `n.tsv:2: column 2 ("value"): \N is NULL, and UInt16 is not Nullable (allowed: 0 to 65535)`},
		{"id,value\n\\N,2\n", `n.csv:2: column 1 ("id"): \N is NULL, and UInt64 is not Nullable (allowed: 0 to 18446744073709551615)`},
	} {
		name := "n.tsv"
		if strings.Contains(c.file, ",") {
			name = "n.csv"
		}
		err := readCells(testFileSpec(writeFile(t, name, c.file, false)), nil)
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%q: %v, want ...%s", c.file, err, c.want)
		}
	}
}
