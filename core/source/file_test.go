package source

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
)

// writeFile writes content to name in a fresh temporary directory, gzipped
// when gz is set, and returns its path.
func writeFile(t testing.TB, name, content string, gz bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	data := []byte(content)
	if gz {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(data)
		w.Close()
		data = buf.Bytes()
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fileSpec builds a file spec; opts is "key=value" pairs.
func testFileSpec(path string, opts ...string) Spec {
	s, _ := Parse("file:" + path)
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		switch k {
		case "format":
			s.Format = v
		case "header":
			s.Header = v
		case "key":
			s.KeyColumn = v
		case "value":
			s.ValueColumn = v
		case "skip":
			s.SkipBadRows = true
		case "values":
			s.Values = v
		case "seed":
			fmt.Sscan(v, &s.Seed)
		}
	}
	return s
}

func openU64U16(t testing.TB, spec Spec) (core.Source[uint64, uint16], error) {
	t.Helper()
	return Open[uint64, uint16](spec, core.MustType("UInt64"), core.MustType("UInt16"))
}

// openHeaded opens the file at path with opts (as testFileSpec takes them)
// and checks the header it read, its names joined by "|".
func openHeaded(t *testing.T, path, header string, opts ...string) *fileSource[uint64, uint16] {
	t.Helper()
	fs := mustOpenFile(t, testFileSpec(path, opts...))
	if got := strings.Join(fs.header, "|"); got != header {
		t.Errorf("%s: header %q, want %q", filepath.Base(path), got, header)
	}
	return fs
}

// mustNext reads the next n rows of fs into b or fails the test.
func mustNext(t *testing.T, fs *fileSource[uint64, uint16], b *core.Block[uint64, uint16], n int) {
	t.Helper()
	if err := fs.Next(b, n); err != nil {
		t.Fatal(err)
	}
}

// mustOpenFile opens the file spec as <UInt64, UInt16>, fails the test on
// an error and closes the source when the test ends.
func mustOpenFile(t *testing.T, spec Spec) *fileSource[uint64, uint16] {
	t.Helper()
	src, err := openU64U16(t, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src.(*fileSource[uint64, uint16])
}

// readAll opens the file spec as <UInt64, UInt16> and reads every row; it
// fails the test on an error.
func readAll(t *testing.T, spec Spec) ([]row[uint64, uint16], core.Source[uint64, uint16]) {
	t.Helper()
	src := mustOpenFile(t, spec)
	if src.Rows() != -1 {
		t.Errorf("file Rows() = %d, want -1", src.Rows())
	}
	return drain[uint64, uint16](t, src, 3), src
}

// readErr opens and reads the spec and returns the first error.
func readErr(t *testing.T, spec Spec) error {
	t.Helper()
	src, err := openU64U16(t, spec)
	if err != nil {
		return err
	}
	defer src.Close()
	var b core.Block[uint64, uint16]
	for {
		if err := src.Next(&b, 2); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func wantRows(t *testing.T, what string, got []row[uint64, uint16], want ...uint64) {
	t.Helper()
	if len(got) != len(want)/2 {
		t.Fatalf("%s: %d rows %v, want %d", what, len(got), got, len(want)/2)
	}
	for i := range got {
		if got[i].k != want[2*i] || uint64(got[i].v) != want[2*i+1] {
			t.Fatalf("%s: row %d = (%d, %d), want (%d, %d)", what, i, got[i].k, got[i].v, want[2*i], want[2*i+1])
		}
	}
}

func TestFileFormats(t *testing.T) {
	for _, c := range []struct {
		name, content string
		gz            bool
		opts          []string
	}{
		{"plain.tsv", "1\t10\n2\t20\n0\t30\n", false, nil},
		{"no-final-newline.tsv", "1\t10\n2\t20\n0\t30", false, nil},
		{"with-names.tsv", "key\tvalue\n1\t10\n2\t20\n0\t30\n", false, nil},
		{"crlf.tsv", "key\tvalue\r\n1\t10\r\n2\t20\r\n0\t30\r\n", false, nil},
		{"blank-lines.tsv", "\n1\t10\n\n2\t20\n0\t30\n\n\n", false, nil},
		{"bom.tsv", "\xef\xbb\xbfid\tv\n1\t10\n2\t20\n0\t30\n", false, nil},
		{"plain.csv", "1,10\n2,20\n0,30\n", false, nil},
		{"with-names.csv", "\"key\",\"value\"\n1,10\n2,20\n0,30\n", false, nil},
		{"crlf.csv", "key,value\r\n1,10\r\n2,20\r\n0,30\r\n", false, nil},
		{"quoted.csv", "\"k\",\"v\"\n\"1\",\"10\"\n \"2\" , 20 \n0,\"30\"\n", false, nil},
		{"spaces.csv", " 1 , 10\n2,20   \n0,30\n", false, nil},
		{"declared.tsv", "k\tv\n1\t10\n2\t20\n0\t30\n", false, []string{"header=yes"}},
		{"clickhouse-names.csv", "k,v\n1,10\n2,20\n0,30\n", false, []string{"format=CSVWithNames"}},
		{"data", "1,10\n2,20\n0,30\n", false, nil},                         // CSV by content
		{"data.txt", "1\t10\n2\t20\n0\t30\n", false, nil},                  // TSV by content
		{"forced", "1\t10\n2\t20\n0\t30\n", false, []string{"format=tsv"}}, // told
		{"keys.tsv.gz", "1\t10\n2\t20\n0\t30\n", true, nil},
		{"keys.csv.gz", "key,value\n1,10\n2,20\n0,30\n", true, nil},
		// gzip recognised by content under a misleading name, and a .gz
		// name on plain text.
		{"misleading.tsv", "key\tvalue\n1\t10\n2\t20\n0\t30\n", true, nil},
		{"misleading.csv", "1,10\n2,20\n0,30\n", true, nil},
		{"noext", "1,10\n2,20\n0,30\n", true, nil},
		{"plain.tsv.gz", "1\t10\n2\t20\n0\t30\n", false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _ := readAll(t, testFileSpec(writeFile(t, c.name, c.content, c.gz), c.opts...))
			wantRows(t, c.name, got, 1, 10, 2, 20, 0, 30)
		})
	}
}

func TestFileHeaderDetection(t *testing.T) {
	// A first row that parses as the key type is data.
	got, src := readAll(t, testFileSpec(writeFile(t, "a.tsv", "5\t6\n7\t8\n", false)))
	wantRows(t, "numeric first row", got, 5, 6, 7, 8)
	if fs := src.(*fileSource[uint64, uint16]); fs.header != nil {
		t.Errorf("numeric first row taken as a header %q", fs.header)
	}
	// Header "no": a name-like first row is a bad data row.
	err := readErr(t, testFileSpec(writeFile(t, "b.tsv", "key\tvalue\n1\t2\n", false), "header=no"))
	if want := `b.tsv:1: column 1: "key" is not a valid UInt64`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("header=no: %v, want %q", err, want)
	}
	// Header "yes" drops the first row even when it looks like data.
	got, _ = readAll(t, testFileSpec(writeFile(t, "c.tsv", "1\t2\n3\t4\n", false), "header=yes"))
	wantRows(t, "header=yes", got, 3, 4)
	// A first row that is neither a key nor a name is an error on line 1.
	err = readErr(t, testFileSpec(writeFile(t, "d.tsv", "-5\t2\n3\t4\n", false)))
	if want := `d.tsv:1: column 1: "-5" is out of range for UInt64 (0 to 18446744073709551615)`; err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("negative first key: %v, want %q", err, want)
	}
}

func TestFileColumns(t *testing.T) {
	tsv := writeFile(t, "three.tsv", "name\tid\tscore\nx\t1\t100\ny\t2\t200\n", false)
	for _, c := range []struct {
		what string
		opts []string
	}{
		{"by name", []string{"key=id", "value=score"}},
		{"by name, any case", []string{"key=ID", "value=Score"}},
		{"by position", []string{"key=2", "value=3"}},
		{"mixed", []string{"key=id", "value=3"}},
		{"header declared, by position", []string{"key=2", "value=3", "header=yes"}},
	} {
		got, _ := readAll(t, testFileSpec(tsv, c.opts...))
		wantRows(t, c.what, got, 1, 100, 2, 200)
	}
	// Value before key, no header.
	got, _ := readAll(t, testFileSpec(writeFile(t, "rev.csv", "10,1\n20,2\n", false), "key=2", "value=1"))
	wantRows(t, "reversed columns", got, 1, 10, 2, 20)
	// No value column: values from the key (hash) or from seed and row (random).
	got, _ = readAll(t, testFileSpec(writeFile(t, "keys.tsv", "7\n8\n7\n", false), "value=none"))
	for _, r := range got {
		if want := uint16(valueHash(r.k, 0)); r.v != want {
			t.Errorf("value=none, values=hash: key %d has value %d, want %d", r.k, r.v, want)
		}
	}
	if got[0].v != got[2].v {
		t.Errorf("value=none, values=hash: key 7 got values %d and %d", got[0].v, got[2].v)
	}
	a, _ := readAll(t, testFileSpec(writeFile(t, "keys.tsv", "7\n8\n7\n", false), "value=none", "values=random", "seed=1"))
	b, _ := readAll(t, testFileSpec(writeFile(t, "keys.tsv", "7\n8\n7\n", false), "value=none", "values=random", "seed=2"))
	if a[0].v == a[2].v && a[0].v == b[0].v && a[1].v == b[1].v {
		t.Errorf("value=none, values=random: values %v and %v do not depend on row and seed", a, b)
	}
}

func TestFileCSVQuoting(t *testing.T) {
	content := "\"the key\",\"note, with comma\",\"value\"\n" +
		"1,\"say \"\"hi\"\"\",10\n" +
		"2,\"two\nlines\",20\n" + // lines 3-4
		"3,\"\",30\n" +
		"x,y,70000\n" // line 6
	path := writeFile(t, "q.csv", content, false)
	fs := openHeaded(t, path, "the key|note, with comma|value", "key=the key", "value=value")
	var b core.Block[uint64, uint16]
	mustNext(t, fs, &b, 3)
	wantRows(t, "quoted CSV", []row[uint64, uint16]{{b.Keys[0], b.Values[0]}, {b.Keys[1], b.Values[1]}, {b.Keys[2], b.Values[2]}}, 1, 10, 2, 20, 3, 30)
	if got := string(fs.field(1)); got != "" {
		t.Errorf("empty quoted field = %q", got)
	}
	// The line number after a record that spans two lines is still right.
	err := fs.Next(&b, 3)
	if want := path + `:6: column 1 ("the key"): "x" is not a valid UInt64`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error after a two-line record: %v, want prefix %q", err, want)
	}
	// The field of the escaped quote decodes.
	fs2 := mustOpenFile(t, testFileSpec(writeFile(t, "q2.csv", "1,\"say \"\"hi\"\"\",10\n", false), "value=3"))
	if got := string(fs2.field(1)); got != `say "hi"` {
		t.Errorf(`"" in a quoted field decodes to %q, want say "hi"`, got)
	}
}

func TestFileTSVEscapes(t *testing.T) {
	content := "my\\tkey\tval\\\\ue\tnote\n" +
		"1\t10\ta\\tb\\nc\\\\d\\N\n" +
		"2\t20\tcontinued\\\nhere\n" + // escaped line feed: one record on lines 3-4
		"3\t30\tx\n"
	fs := openHeaded(t, writeFile(t, "e.tsv", content, false), "my\tkey|val\\ue|note", "key=my\tkey", "value=val\\ue")
	var b core.Block[uint64, uint16]
	mustNext(t, fs, &b, 1)
	if got := string(fs.field(2)); got != "a\tb\nc\\d\\N" {
		t.Errorf("escaped field = %q, want %q", got, "a\tb\nc\\d\\N")
	}
	mustNext(t, fs, &b, 1)
	if got := string(fs.field(2)); got != "continued\nhere" || fs.recLine != 3 {
		t.Errorf("escaped line feed: field %q on line %d, want %q on line 3", got, fs.recLine, "continued\nhere")
	}
	if err := fs.Next(&b, 5); err != nil || b.Len() != 1 || b.Keys[0] != 3 || fs.recLine != 5 {
		t.Errorf("after the escaped line feed: %v, %d rows, line %d; want key 3 on line 5", err, b.Len(), fs.recLine)
	}
	// \N (NULL) as a key is reported as such.
	err := readErr(t, testFileSpec(writeFile(t, "null.tsv", "1\t1\n\\N\t2\n", false)))
	if want := `null.tsv:2: column 1: \N is NULL, and UInt64 is not Nullable`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("NULL key: %v, want %q", err, want)
	}
}

func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		what    string
		path    string
		content string // written when not empty
		gz      bool
		opts    []string
		want    string // the whole message, with PATH for the file's path
	}{
		{"missing file", filepath.Join(dir, "nope.tsv"), "", false, nil, `source file "PATH": no such file`},
		{"directory", dir, "", false, nil, `source file "PATH": is a directory, not a file`},
		{"empty file", "empty.tsv", "\x00", false, nil, `source file "PATH": is empty (0 bytes)`},
		{"only blank lines", "blank.tsv", "\n\r\n\n", false, nil, `source file "PATH": has no rows (only blank lines or an empty stream)`},
		{"empty gzip", "empty.gz", "", true, nil, `source file "PATH": has no rows (only blank lines or an empty stream)`},
		{"only a header", "header.tsv", "key\tvalue\n", false, nil, `source file "PATH": has a header row (line 1: "key", "value") but no data rows`},
		{"only a declared header", "header2.csv", "1,2\n", false, []string{"header=yes"}, `source file "PATH": has a header row (line 1: "1", "2") but no data rows`},
		{"missing column name", "cols.tsv", "key\tvalue\n1\t2\n", false, []string{"key=id"},
			`source file "PATH": key column "id" not found in the header on line 1 (columns: "key", "value")`},
		{"column name, no header line", "nohdr.tsv", "10\t2\n11\t3\n", false, []string{"key=id"},
			`source file "PATH": key column "id" is a header name, but line 1 is data, not a header ("10", "2"): give the column by its position (1, 2, ...) or add a header line`},
		{"missing value name", "cols2.csv", "key,value\n1,2\n", false, []string{"value=price"},
			`source file "PATH": value column "price" not found in the header on line 1 (columns: "key", "value")`},
		{"ambiguous name", "amb.tsv", "Key\tKEY\n1\t2\n", false, []string{"key=key", "value=2"},
			`source file "PATH": key column "key" matches "Key" and "KEY" in the header on line 1, ignoring case; write it exactly`},
		{"repeated name", "rep.tsv", "id\tid\tvalue\n1\t2\t3\n", false, []string{"key=id", "value=value"},
			`source file "PATH": key column "id" names columns 1 and 2 of the header on line 1: give the column by its position (1 or 2)`},
		{"position beyond header", "pos.tsv", "key\tvalue\n1\t2\n", false, []string{"value=3"},
			`source file "PATH": value column 3 does not exist: the header on line 1 has 2 columns ("key", "value")`},
		{"first row too short", "short.tsv", "1\n2\t3\n", false, nil, `PATH:1: the row has 1 column, so the value column 2 is missing`},
		{"not gzip after the magic", "bad.gz", "\x1f\x8bnot gzip at all", false, nil, `source file "PATH": starts like gzip but is not valid gzip: gzip: invalid header`},
		// Compressed otherwise: named, not read as a first row of garbage.
		{"bzip2", "b.tsv.bz2", "BZh91AY&SY\xe5\xef\xbb\x81\x00\x00", false, nil, `source file "PATH": is bzip2, which packlab does not read (allowed: TSV or CSV, plain or in one gzip: decompress it first)`},
		{"xz", "x.tsv.xz", "\xfd7zXZ\x00\x00\x04", false, nil, `source file "PATH": is xz, which packlab does not read (allowed: TSV or CSV, plain or in one gzip: decompress it first)`},
		{"zstd", "z.tsv.zst", "\x28\xb5\x2f\xfd\x04\x58", false, nil, `source file "PATH": is zstd, which packlab does not read (allowed: TSV or CSV, plain or in one gzip: decompress it first)`},
		{"zip", "k.zip", "PK\x03\x04\x14\x00", false, nil, `source file "PATH": is a zip archive, which packlab does not read (allowed: TSV or CSV, plain or in one gzip: decompress it first)`},
		{"gzip twice", "g.tsv.gz.gz", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", true, nil, `source file "PATH": is gzip inside gzip, which packlab does not read (allowed: TSV or CSV, plain or in one gzip: decompress it first)`},
		{"bzip2 in gzip", "b.tsv.gz", "BZh91AY&SY", true, nil, `source file "PATH": is bzip2, which packlab does not read (allowed: TSV or CSV, plain or in one gzip: decompress it first)`},
		// Text that merely starts with such letters is text.
		{"text starting BZh", "bz.tsv", "BZh9\tvalue\n", false, nil, `source file "PATH": has a header row (line 1: "BZh9", "value") but no data rows`},
		// Lines ended by CR alone: read as one header line of fields like
		// "v\r1", then "no data rows"; or a bad value "2\r3".
		{"CR line ends, a header", "cr.csv", "id,v\r1,2\r3,4\r", false, nil, `source file "PATH": its lines end in CR alone, which is not read as a line end (allowed: LF or CR LF line ends; tr '\r' '\n' converts it)`},
		{"CR line ends", "cr2.csv", "1,2\r3,4", false, nil, `source file "PATH": its lines end in CR alone, which is not read as a line end (allowed: LF or CR LF line ends; tr '\r' '\n' converts it)`},
	} {
		path := c.path
		if !filepath.IsAbs(path) {
			if c.content == "\x00" {
				path = writeFile(t, path, "", false)
			} else {
				path = writeFile(t, path, c.content, c.gz)
			}
		}
		_, err := openU64U16(t, testFileSpec(path, c.opts...))
		want := strings.ReplaceAll(c.want, "PATH", path)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", c.what, err, want)
		}
	}
}

func TestFileRowErrors(t *testing.T) {
	// Good rows on lines 1-16 (after a header), then a bad one on line 17.
	var sb strings.Builder
	sb.WriteString("key\tvalue\n")
	for i := 2; i <= 16; i++ {
		fmt.Fprintf(&sb, "%d\t%d\n", i, i)
	}
	prefix := sb.String()
	for _, c := range []struct {
		what, line string
		csv        bool
		want       string
	}{
		{"value out of range", "17\t70000", false, `PATH:17: column 2 ("value"): "70000" is out of range for UInt16 (0 to 65535)`},
		{"key malformed", "1x\t5", false, `PATH:17: column 1 ("key"): "1x" is not a valid UInt64 (allowed: 0 to 18446744073709551615)`},
		{"empty value", "17\t", false, `PATH:17: column 2 ("value"): "" is not a valid UInt16 (allowed: 0 to 65535)`},
		{"short row", "17", false, `PATH:17: the row has 1 column, so the value column 2 ("value") is missing`},
		{"junk after quote", `"17"x,5`, true, `PATH:17: column 1: unexpected 'x' after the closing quote (want a comma or the end of the line)`},
		{"unclosed quote", "17,\"5\n18,6\n", true, `PATH:17: column 2: quoted field is not closed before the end of the file`},
	} {
		content := prefix + c.line + "\n"
		name := "data.tsv"
		if c.csv {
			content = strings.ReplaceAll(content, "\t", ",")
			name = "data.csv"
		}
		path := writeFile(t, name, content, false)
		err := readErr(t, testFileSpec(path))
		want := strings.ReplaceAll(c.want, "PATH", path)
		if err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", c.what, err, want)
		}
		// The same in a gzip file with a misleading name: the same lines.
		gzPath := writeFile(t, "data.txt", content, true)
		err = readErr(t, testFileSpec(gzPath, "format="+strings.TrimPrefix(filepath.Ext(name), ".")))
		want = strings.ReplaceAll(c.want, "PATH", gzPath)
		if err == nil || err.Error() != want {
			t.Errorf("%s (gzip):\n got %v\nwant %s", c.what, err, want)
		}
	}
	// A truncated gzip stream is an error, not a short file.
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	for i := range 20000 {
		fmt.Fprintf(w, "%d\t%d\n", i, i%65536)
	}
	w.Close()
	path := filepath.Join(t.TempDir(), "cut.tsv.gz")
	os.WriteFile(path, buf.Bytes()[:buf.Len()/2], 0o644)
	if err := readErr(t, testFileSpec(path)); err == nil || !strings.Contains(err.Error(), "reading gzip data: unexpected EOF") {
		t.Errorf("truncated gzip: %v, want a gzip read error", err)
	}
}

func TestFileSkipBadRows(t *testing.T) {
	content := "key,value\n" +
		"1,10\n" +
		"x,11\n" + // malformed key
		"2,70000\n" + // value out of range
		"3\n" + // short row
		"\"4\"junk,12\n" + // junk after a quote
		"5,50\n" +
		"-1,13\n" + // negative key
		"6,60\n"
	path := writeFile(t, "skip.csv", content, false)
	got, src := readAll(t, testFileSpec(path, "skip"))
	wantRows(t, "skip bad rows", got, 1, 10, 5, 50, 6, 60)
	if src.Skipped() != 5 {
		t.Errorf("Skipped() = %d, want 5", src.Skipped())
	}
	// Without skipping, the first bad row stops the load.
	if err := readErr(t, testFileSpec(path)); err == nil || !strings.Contains(err.Error(), ":3: column 1 (\"key\"): \"x\"") {
		t.Errorf("without skip: %v, want the error on line 3", err)
	}
	// Skipping a short first row at open time instead of refusing the file.
	got, src = readAll(t, testFileSpec(writeFile(t, "s.tsv", "1\n2\t20\n", false), "skip"))
	wantRows(t, "short first row skipped", got, 2, 20)
	if src.Skipped() != 1 {
		t.Errorf("Skipped() = %d, want 1", src.Skipped())
	}
	// Every row bad: no rows and all counted.
	got, src = readAll(t, testFileSpec(writeFile(t, "all.tsv", "1\t70000\n2\t70001\n", false), "skip"))
	if len(got) != 0 || src.Skipped() != 2 {
		t.Errorf("all rows bad: %d rows, %d skipped; want 0 and 2", len(got), src.Skipped())
	}
}

// TestFileEveryType writes random values of every type as FormatValue
// prints them, in TSV and in CSV (with every field quoted), and reads them
// back as keys and values: the bits must survive.
func TestFileEveryType(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, typ := range core.Types() {
		var tsv, csv strings.Builder
		tsv.WriteString("k\tv\n")
		csv.WriteString("\"k\",\"v\"\n")
		type pair struct{ lo, hi uint64 }
		var want []pair
		for i := range 200 {
			lo, hi := rng.Uint64(), rng.Uint64()
			if typ.Size < 16 {
				lo, hi = lo&sizeMask(typ.Size), 0
			}
			if typ.Kind == core.KindFloat { // avoid NaN payloads, which do not round-trip
				lo, _, _ = ParseValue(typ, FormatValue(typ, lo, hi))
			}
			if i == 0 {
				lo, hi = 0, 0 // key 0 too
			}
			want = append(want, pair{lo, hi})
			text := FormatValue(typ, lo, hi)
			fmt.Fprintf(&tsv, "%s\t%s\n", text, text)
			fmt.Fprintf(&csv, "%q,\"%s\"\n", text, text)
		}
		for _, f := range []struct{ name, content string }{{"t.tsv", tsv.String()}, {"c.csv", csv.String()}} {
			path := writeFile(t, f.name, f.content, false)
			check := func(klo, khi, vlo, vhi uint64, i int) {
				if klo != want[i].lo || khi != want[i].hi || vlo != want[i].lo || vhi != want[i].hi {
					t.Fatalf("%s %s row %d: key %#x %#x value %#x %#x, want %#x %#x", typ.Name, f.name, i, klo, khi, vlo, vhi, want[i].lo, want[i].hi)
				}
			}
			switch typ.Size {
			case 1:
				fileRoundTrip[uint8, uint8](t, path, typ, check)
			case 2:
				fileRoundTrip[uint16, uint16](t, path, typ, check)
			case 4:
				fileRoundTrip[uint32, uint32](t, path, typ, check)
			case 8:
				fileRoundTrip[uint64, uint64](t, path, typ, check)
			case 16:
				fileRoundTrip[core.U128, core.U128](t, path, typ, check)
			}
		}
	}
}

func fileRoundTrip[K, V core.Bits](t *testing.T, path string, typ core.Type, check func(klo, khi, vlo, vhi uint64, i int)) {
	t.Helper()
	src, err := Open[K, V](testFileSpec(path), typ, typ)
	if err != nil {
		t.Fatalf("%s: %v", typ.Name, err)
	}
	defer src.Close()
	rows := drain[K, V](t, src, 64)
	if len(rows) != 200 {
		t.Fatalf("%s %s: %d rows, want 200", typ.Name, path, len(rows))
	}
	for i, r := range rows {
		klo, khi := core.ToUint64(r.k)
		vlo, vhi := core.ToUint64(r.v)
		check(klo, khi, vlo, vhi, i)
	}
}

// TestFileStreaming reads a 100,000-row file, plain and gzip, in blocks and
// checks the count and an order-independent checksum against what was
// written. For the plain file it also pins that reading allocates nothing
// once the first block has sized the buffers. (Inflating allocates a few
// Huffman tables per deflate block inside compress/flate.) The count is the
// process's (runtime.MemStats), so a finalizer of an earlier test that runs
// meanwhile counts too: a read that allocates is read once more, and fails
// only when it allocates again.
func TestFileStreaming(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 20000
	}
	var text strings.Builder
	var want uint64
	text.WriteString("id\tvalue\n")
	for i := range n {
		k, v := uint64(i)*2654435761, uint16(i*7)
		want += core.PairChecksum(k, v)
		fmt.Fprintf(&text, "%d\t%d\n", k, v)
	}
	for _, gz := range []bool{false, true} {
		path := writeFile(t, "big", text.String(), gz)
		for try := 1; ; try++ {
			rows, got, allocs := readCounting(t, path)
			if rows != n || got != want {
				t.Fatalf("gzip %v: read %d rows, checksum %#x; wrote %d, %#x", gz, rows, got, n, want)
			}
			if gz || allocs <= 2 { // ReadMemStats may allocate
				break
			}
			if try == 2 {
				t.Errorf("reading %d rows allocated %d times after the first block, twice, want 0", rows, allocs)
				break
			}
			t.Logf("reading %d rows allocated %d times after the first block; reading again", rows, allocs)
		}
	}
}

// readCounting reads the file at path in blocks of 4096 rows: the rows, their
// checksum, and the process's allocations after the first block.
func readCounting(t *testing.T, path string) (rows int, sum, allocs uint64) {
	src, err := openU64U16(t, testFileSpec(path))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var b core.Block[uint64, uint16]
	var before, after runtime.MemStats
	for blocks := 0; ; blocks++ {
		if blocks == 1 { // the first block sized the buffers
			runtime.ReadMemStats(&before)
		}
		err := src.Next(&b, 4096)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range b.Keys {
			sum += core.PairChecksum(b.Keys[i], b.Values[i])
		}
		rows += b.Len()
	}
	runtime.ReadMemStats(&after)
	return rows, sum, after.Mallocs - before.Mallocs
}

// BenchmarkFileSource reads b.N rows of a TSV file of <UInt64, UInt16>.
func BenchmarkFileSource(b *testing.B) {
	for _, gz := range []bool{false, true} {
		b.Run(fmt.Sprintf("Format=tsv/gzip=%v/Key=UInt64/Value=UInt16", gz), func(b *testing.B) {
			var sb strings.Builder
			for i := range b.N {
				fmt.Fprintf(&sb, "%d\t%d\n", uint64(i)*0x9e3779b97f4a7c15, uint16(i))
			}
			path := writeFile(b, "bench.tsv", sb.String(), gz)
			src, err := openU64U16(b, testFileSpec(path))
			if err != nil {
				b.Fatal(err)
			}
			defer src.Close()
			var blk core.Block[uint64, uint16]
			b.SetBytes(int64(sb.Len() / max(b.N, 1)))
			b.ResetTimer()
			for {
				if err := src.Next(&blk, 65536); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestFileCells: Spec.Columns reads more columns with each row, by
// header name or position, decoded as the key's are; CheckCell's error is
// the row's, with the file, line and column, and --skip-bad-rows skips
// such a row with its cells; a row without a column names it.
func TestFileCells(t *testing.T) {
	tsv := writeFile(t, "attrs.tsv", "id\tprice\tcountry\tname\n1\t100\tFR\ta\\tb\n2\t200\tDE\tc\n3\t300\t??\td\n", false)
	check := func(i int, text []byte) error {
		if i == 0 && (len(text) != 2 || bytes.ContainsFunc(text, func(r rune) bool { return r < 'A' || r > 'Z' })) {
			return fmt.Errorf("%q is not a country code", text)
		}
		return nil
	}
	cells := func(spec Spec) (got [][]string, err error) {
		src, err := openU64U16(t, spec)
		if err != nil {
			return nil, err
		}
		defer src.Close()
		var b core.Block[uint64, uint16]
		for {
			if err := src.Next(&b, 2); err == io.EOF {
				return got, nil
			} else if err != nil {
				return got, err
			}
			for i := range b.Len() {
				row := []string{fmt.Sprint(b.Keys[i], b.Values[i])}
				for j := range spec.Columns {
					row = append(row, string(src.(core.CellSource).Cell(i, j)))
				}
				got = append(got, row)
			}
		}
	}
	spec := testFileSpec(tsv)
	spec.Columns = []string{"country", "4"}
	got, err := cells(spec)
	if want := "[[1 100 FR a\tb] [2 200 DE c] [3 300 ?? d]]"; err != nil || fmt.Sprint(got) != want {
		t.Errorf("cells %v (%v), want %s", got, err, want)
	}
	spec.CheckCell = check
	if _, err := cells(spec); err == nil || !strings.Contains(err.Error(), `attrs.tsv:4: column 3 ("country"): "??" is not a country code`) {
		t.Errorf("a bad cell: %v", err)
	}
	spec.SkipBadRows = true
	if got, err := cells(spec); err != nil || fmt.Sprint(got) != "[[1 100 FR a\tb] [2 200 DE c]]" {
		t.Errorf("a bad cell skipped: %v (%v)", got, err)
	}
	spec = testFileSpec(tsv)
	spec.Columns = []string{"city"}
	if _, err := cells(spec); err == nil || !strings.Contains(err.Error(), `column "city" not found in the header`) {
		t.Errorf("an unknown column: %v", err)
	}
	short := testFileSpec(writeFile(t, "short.tsv", "1\t100\tFR\n2\t200\n", false))
	short.Columns = []string{"3"}
	if _, err := cells(short); err == nil || !strings.Contains(err.Error(), "short.tsv:2: the row has 2 columns, so column 3 is missing") {
		t.Errorf("a short row: %v", err)
	}
}
