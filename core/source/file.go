package source

// File sources: TSV and CSV as ClickHouse writes them (FORMAT TSV,
// TSVWithNames, CSV, CSVWithNames), optionally gzip-compressed.
//
//   - gzip is recognised by its magic bytes (1f 8b), whatever the name.
//   - The format is Spec.Format if set, else the name's extension
//     (.tsv, .tab, .csv, before any .gz), else the first line's content: tabs
//     mean TSV, commas CSV.
//   - A header row is used when declared (Header "yes", a WithNames format,
//     or a column given by name). With Header "auto" the first row is a
//     header when its key field does not parse as the key type but looks
//     like a name (starts with a letter or '_').
//   - TSV: fields split on tabs; escapes \t \n \r \\ \' \" \0 \b \f \a \v
//     are decoded, and a backslash at the end of a line continues the field
//     on the next line (an escaped line feed), as ClickHouse reads them.
//   - CSV: fields split on commas; a field in double quotes may hold commas,
//     line breaks (kept as written, CR LF too) and "" for a quote; spaces around unquoted fields are
//     trimmed (ClickHouse's input_format_csv_trim_whitespaces).
//   - CRLF and LF line endings both work; blank lines and a UTF-8 byte order
//     mark are skipped.
//
// Memory is constant: a 256 KiB read buffer, the current record, and the
// longest line seen (capped at maxLineBytes). Line numbers in errors count
// physical lines of the (decompressed) text from 1, the header included; a
// CSV record spanning lines is reported at its first line.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/packlab/packlab/core"
)

const (
	fileBufferBytes = 256 << 10
	maxLineBytes    = 16 << 20 // a longer line is an error, not an allocation
)

// fileSource implements Source for a TSV or CSV file.
type fileSource[K, V core.Bits] struct {
	path       string // as the user gave it, for messages
	f          *os.File
	gz         *gzip.Reader
	r          *bufio.Reader
	csv        bool
	key, value core.Type
	keyCol     int      // 0-based
	valCol     int      // 0-based; -1 = no value column
	header     []string // column names when the file has a header row
	valRand    bool     // no value column: values random (else hash)
	rowBytes   int      // no value column and a row's values: the low rowBytes bytes of V's, else 0
	valueBase  uint64
	skipBad    bool
	cols       []int                          // Spec.Columns, 0-based
	checkCell  func(i int, text []byte) error // Spec.CheckCell
	cells      cellChunks                     // this block's cells of cols

	line    int64  // physical lines read so far
	recLine int64  // line the current record starts on
	rec     []byte // the current record's fields, decoded, back to back
	ends    []int  // ends[i] is where field i ends in rec
	long    []byte // holds a line longer than the read buffer
	crlf    bool   // the last line read ended in CR LF
	badRow  error  // the current record is malformed (CSV quoting)
	pending bool   // the current record was read by open and not yet returned
	rows    int64  // data rows returned
	skipped int64
	err     error // sticky: once failed, every Next returns it
	done    bool
	closed  bool

	ctx       context.Context // stops opening and reading (open.go)
	stopWatch func() bool     // ends the watch that wakes a blocked read on ctx's end
	consumed  int64           // bytes of (decompressed) input read by readLine
	nextCheck int64           // consumed at which ctx is looked at next
}

// openFileSource opens spec's file (f, when the caller opened it already;
// it is closed on an error) and reads its header and first row.
func openFileSource[K, V core.Bits](ctx context.Context, f *os.File, spec Spec, key, value core.Type) (core.Source[K, V], error) {
	fl, err := spec.fileLayout()
	if err != nil {
		return nil, err
	}
	path := spec.Path
	var st fs.FileInfo
	if f != nil {
		st, err = f.Stat()
	} else {
		st, err = os.Stat(path)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fileErr(path, 0, "no such file")
	case err != nil:
		return nil, fileErr(path, 0, "%w", PathErrorReason(err))
	case st.IsDir():
		return nil, fileErr(path, 0, "is a directory, not a file")
	case st.Mode().IsRegular() && st.Size() == 0:
		return nil, fileErr(path, 0, "is empty (0 bytes)")
	}
	if f == nil {
		if f, err = OpenFile(ctx, path); err != nil {
			return nil, err
		}
	}
	s := &fileSource[K, V]{
		path: path, f: f, key: key, value: value,
		keyCol: fl.keyCol, valCol: fl.valCol, valRand: fl.valRand,
		valueBase: seedBase(spec.Seed, purposeValue), skipBad: spec.SkipBadRows,
		cols: slices.Clone(fl.cols), checkCell: spec.CheckCell,
		ctx: ctx, stopWatch: watchCancel(ctx, f), nextCheck: cancelCheckBytes,
	}
	if value.Kind == core.KindRow && value.Size < int(sizeOf[V]()) {
		s.rowBytes = value.Size // a row drawn from the key (Open allows no value column then)
	}
	if err := s.open(spec, fl); err != nil {
		if ctx.Err() != nil {
			err = s.stopped()
		}
		s.Close()
		return nil, err
	}
	return s, nil
}

// PathErrorReason is the operating system's reason for a failed file
// operation ("no such file or directory"), without the operation and the
// path, which the caller's message names in its own words.
func PathErrorReason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// open detects compression and format, reads the header if there is one
// and the first data row, and resolves the columns.
func (s *fileSource[K, V]) open(spec Spec, fl fileLayout) error {
	raw := bufio.NewReaderSize(s.f, fileBufferBytes)
	s.r = raw
	if magic, _ := raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(raw)
		if err != nil {
			return fileErr(s.path, 0, "starts like gzip but is not valid gzip: %v", err)
		}
		s.gz = gz
		s.r = bufio.NewReaderSize(gz, fileBufferBytes)
	}
	if kind := otherCompression(s.r, s.gz != nil); kind != "" {
		return fileErr(s.path, 0, "is %s, which packlab does not read (allowed: TSV or CSV, plain or in one gzip: decompress it first)", kind)
	}
	switch fl.format {
	case "csv":
		s.csv = true
	case "tsv":
	default:
		s.csv = s.detectCSV()
	}

	ok, err := s.readRecord()
	if err != nil {
		return err
	}
	if !ok {
		return fileErr(s.path, 0, "has no rows (only blank lines or an empty stream)")
	}
	hasHeader := fl.header == "yes" || fl.byName()
	if fl.header == "auto" && !hasHeader && s.keyCol < len(s.ends) {
		kf := s.field(s.keyCol)
		if _, _, perr := ParseValue(s.key, bytesString(kf)); perr != nil && looksLikeName(kf) {
			hasHeader = true
		}
	}
	if hasHeader {
		s.header = make([]string, len(s.ends))
		for i := range s.ends {
			s.header[i] = string(s.field(i))
		}
		headerLine := s.recLine
		if fl.keyCol < 0 {
			if s.keyCol, err = s.findColumn("key", fl.keyName, headerLine); err != nil {
				return err
			}
		}
		if fl.valCol < 0 && !fl.valNone {
			if s.valCol, err = s.findColumn("value", fl.valName, headerLine); err != nil {
				return err
			}
		}
		for i, name := range fl.colNames {
			if s.cols[i] < 0 {
				if s.cols[i], err = s.findColumn("attribute", name, headerLine); err != nil {
					return err
				}
			}
		}
		if err := s.checkNames(spec, headerLine); err != nil {
			return err
		}
		for _, c := range s.columnsUsed() {
			if c.col >= len(s.header) {
				return fileErr(s.path, 0, "%s %d does not exist: the header on line %d has %d %s (%s)", strings.TrimSpace(c.which+" column"), c.col+1, headerLine, len(s.header), plural(len(s.header), "column"), quoteList(s.header))
			}
		}
		if ok, err = s.readRecord(); err != nil {
			return err
		}
		if !ok {
			return fileErr(s.path, 0, "has a header row (line %d: %s) but no data rows", headerLine, quoteList(s.header))
		}
	} else if !s.skipBad {
		if len(s.ends) <= s.lastColumn() {
			return s.shortRowError()
		}
	}
	s.pending = true
	return nil
}

// checkNames maps the columns Spec.Names names (the value's, then each of
// Columns') by the header: a column whose position is the default and
// whose header is another name is the one its name heads; one given and
// headed by another name is refused, naming both: its data would load
// under the wrong name.
func (s *fileSource[K, V]) checkNames(spec Spec, headerLine int64) error {
	for i, name := range spec.Names {
		col := &s.valCol
		which, what := "value", "the value"
		if i > 0 {
			if i > len(s.cols) {
				break
			}
			col = &s.cols[i-1]
			which, what = "attribute", fmt.Sprintf("attribute %d", i+1)
		}
		if name == "" || *col < 0 {
			continue
		}
		h := ""
		if *col < len(s.header) {
			// Names are case-sensitive, as ClickHouse's: another case
			// passes only where no column has the name exactly.
			if h = s.header[*col]; h == name || (strings.EqualFold(h, name) && !slices.Contains(s.header, name)) {
				continue
			}
		}
		if i < len(spec.ByDefault) && spec.ByDefault[i] {
			c, err := s.findColumn(which, name, headerLine)
			if err != nil {
				return err
			}
			*col = c
			continue
		}
		if *col >= len(s.header) {
			continue // a column past the header's: refused as missing (open)
		}
		return fileErr(s.path, 0, "%s is named %q but its column, %d, is headed %q on line %d: the names differ (name the attribute %q, or read it from the column headed %q)", what, name, *col+1, h, headerLine, h, name)
	}
	return nil
}

// compressions are the magic bytes of the compressed and archive formats
// a file given for a TSV may be in: read as text, their bytes made a first
// "row" of garbage ("BZh91AY&SY..." is not a valid UInt64).
var compressions = []struct{ magic, kind string }{
	{"\x1f\x8b", "gzip"},    // within gzip: compressed twice
	{"BZh?1AY&SY", "bzip2"}, // ? the block size, '1' to '9'; "BZh" alone may be text
	{"\xfd7zXZ\x00", "xz"},
	{"\x28\xb5\x2f\xfd", "zstd"},
	{"\x04\x22\x4d\x18", "lz4"},
	{"PK\x03\x04", "a zip archive"},
	{"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"},
}

// otherCompression is the compression r's data starts with that packlab
// does not read ("gzip inside gzip" when within one already), or "".
// It looks only at what the first read brought: a stream that sent one
// short row and waits is not waited on (the load's reads watch for a
// cancel; this peek could not).
func otherCompression(r *bufio.Reader, inGzip bool) string {
	r.Peek(1) // the first read, which the first row waits for anyway
	buffered, _ := r.Peek(r.Buffered())
	for _, c := range compressions {
		if len(buffered) < len(c.magic) || !magicMatches(buffered[:len(c.magic)], c.magic) {
			continue
		}
		switch {
		case c.kind == "gzip" && inGzip:
			return "gzip inside gzip"
		case c.kind == "gzip":
			continue // not reached: the gzip itself is read
		}
		return c.kind
	}
	return ""
}

// magicMatches reports whether head is magic, whose ? is a digit 1 to 9.
func magicMatches(head []byte, magic string) bool {
	for i := range len(magic) {
		if magic[i] == '?' && head[i] >= '1' && head[i] <= '9' || head[i] == magic[i] {
			continue
		}
		return false
	}
	return true
}

// detectCSV looks at the first line: commas and no tabs mean CSV. The name
// wins over the content when it says .tsv/.tab or .csv.
func (s *fileSource[K, V]) detectCSV() bool {
	name := strings.ToLower(s.path)
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".gzip")
	switch {
	case strings.HasSuffix(name, ".csv"):
		return true
	case strings.HasSuffix(name, ".tsv"), strings.HasSuffix(name, ".tab"):
		return false
	}
	head, _ := s.r.Peek(fileBufferBytes)
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	return bytes.IndexByte(head, '\t') < 0 && bytes.IndexByte(head, ',') >= 0
}

func (s *fileSource[K, V]) findColumn(which, name string, headerLine int64) (int, error) {
	exact := -1
	for i, h := range s.header {
		if h != name {
			continue
		}
		if exact >= 0 {
			// A header that repeats the name: either column would be a guess.
			return 0, fileErr(s.path, 0, "%s column %q names columns %d and %d of the header on line %d: give the column by its position (%d or %d)", which, name, exact+1, i+1, headerLine, exact+1, i+1)
		}
		exact = i
	}
	if exact >= 0 {
		return exact, nil
	}
	found := -1
	for i, h := range s.header {
		if strings.EqualFold(h, name) {
			if found >= 0 {
				return 0, fileErr(s.path, 0, "%s column %q matches %q and %q in the header on line %d, ignoring case; write it exactly", which, name, s.header[found], h, headerLine)
			}
			found = i
		}
	}
	if found < 0 && !slices.ContainsFunc(s.header, func(h string) bool { return looksLikeName([]byte(h)) }) {
		// No field of the line is a name: it is data, and the file has no
		// header line to find a column name in.
		return 0, fileErr(s.path, 0, "%s column %q is a header name, but line %d is data, not a header (%s): give the column by its position (1, 2, ...) or add a header line", which, name, headerLine, quoteList(s.header))
	}
	if found < 0 {
		return 0, fileErr(s.path, 0, "%s column %q not found in the header on line %d (columns: %s)", which, name, headerLine, quoteList(s.header))
	}
	return found, nil
}

func quoteList(names []string) string {
	const limit = 20
	var parts []string
	for i, n := range names {
		if i == limit {
			parts = append(parts, fmt.Sprintf("... %d more", len(names)-limit))
			break
		}
		parts = append(parts, quoteValue(n))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// looksLikeName is the header test: a field that starts with a letter or an
// underscore and holds no control characters.
func looksLikeName(b []byte) bool {
	r, _ := utf8.DecodeRune(b)
	if len(b) == 0 || !(unicode.IsLetter(r) || r == '_') {
		return false
	}
	for _, r := range string(b) {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// bytesString views b as a string without copying. The string must not
// outlive the next read: ParseValue copies whatever it puts in an error.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (s *fileSource[K, V]) field(i int) []byte {
	start := 0
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.rec[start:s.ends[i]]
}

// readLine returns the next line without its line ending; ok is false at
// the end of the stream.
func (s *fileSource[K, V]) readLine() (line []byte, ok bool, err error) {
	b, err := s.r.ReadSlice('\n')
	if cerr := s.consume(len(b)); cerr != nil {
		return nil, false, cerr
	}
	if err == bufio.ErrBufferFull {
		s.long = append(s.long[:0], b...)
		for err == bufio.ErrBufferFull {
			if len(s.long) > maxLineBytes {
				if s.line == 0 && crOnly(s.long) {
					return nil, false, errCROnly(s.path)
				}
				return nil, false, fileErr(s.path, s.line+1, "line is longer than %d MiB", maxLineBytes>>20)
			}
			b, err = s.r.ReadSlice('\n')
			s.long = append(s.long, b...)
			if cerr := s.consume(len(b)); cerr != nil {
				return nil, false, cerr
			}
		}
		b = s.long
	}
	if err != nil && err != io.EOF && s.ctx.Err() != nil {
		return nil, false, s.stopped() // the read deadline set by watchCancel
	}
	if err != nil && err != io.EOF {
		what := "reading"
		if s.gz != nil {
			what = "reading gzip data"
		}
		return nil, false, fileErr(s.path, s.line+1, "%s: %v", what, err)
	}
	if len(b) == 0 {
		return nil, false, nil
	}
	s.line++
	s.crlf = false
	if n := len(b); b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b, s.crlf = b[:n-1], true
		}
	} else if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	if s.line == 1 && err == io.EOF && crOnly(b) {
		// The whole input one line, cut by CRs alone: read as a header
		// of fields like "v\r1", then "no data rows".
		return nil, false, errCROnly(s.path)
	}
	if s.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	return b, true, nil
}

// consume counts n more bytes of input and, every cancelCheckBytes, looks
// at the context: blank lines and bad rows count as much as good ones.
func (s *fileSource[K, V]) consume(n int) error {
	s.consumed += int64(n)
	if s.consumed < s.nextCheck {
		return nil
	}
	s.nextCheck = s.consumed + cancelCheckBytes
	if s.ctx.Err() != nil {
		return s.stopped()
	}
	return nil
}

// stopped is the error of a source whose context ended: it wraps the
// context's error and says how far the reading got.
func (s *fileSource[K, V]) stopped() error {
	return fmt.Errorf("%s:%d: reading stopped: %w", s.path, s.line+1, s.ctx.Err()) // not a FileError: the caller stopped it
}

// readRecord reads the next non-blank record into rec and ends. ok is false
// at the end of the file.
func (s *fileSource[K, V]) readRecord() (ok bool, err error) {
	var line []byte
	for {
		line, ok, err = s.readLine()
		if err != nil || !ok {
			return false, err
		}
		if len(line) > 0 {
			break
		}
	}
	s.recLine = s.line
	s.rec, s.ends, s.badRow = s.rec[:0], s.ends[:0], nil
	if s.csv {
		return true, s.splitCSV(line)
	}
	return true, s.splitTSV(line)
}

// splitTSV decodes one TSV record starting with line. Fields without a
// backslash are copied whole; an escape takes the slow path for its field.
func (s *fileSource[K, V]) splitTSV(line []byte) error {
	for {
		seg := line
		tab := bytes.IndexByte(line, '\t')
		if tab >= 0 {
			seg = line[:tab]
		}
		bs := bytes.IndexByte(seg, '\\')
		if bs < 0 {
			s.rec = append(s.rec, seg...)
			s.ends = append(s.ends, len(s.rec))
			if tab < 0 {
				return nil
			}
			line = line[tab+1:]
			continue
		}
		s.rec = append(s.rec, seg[:bs]...)
		if bs+1 < len(line) {
			s.rec = appendTSVEscape(s.rec, line[bs+1])
			line = line[bs+2:]
			continue // the same field goes on
		}
		// A backslash ending the line escapes the line feed: the field
		// goes on on the next line.
		s.rec = append(s.rec, '\n')
		next, ok, err := s.readLine()
		if err != nil {
			return err
		}
		if !ok {
			s.ends = append(s.ends, len(s.rec))
			return nil
		}
		line = next
	}
}

// appendTSVEscape decodes the character after a backslash. \N (NULL) stays
// as written, so that it fails to parse as a number with a readable message.
func appendTSVEscape(dst []byte, c byte) []byte {
	if c == 'N' {
		return append(dst, '\\', 'N')
	}
	if i := strings.IndexByte(tsvEscaped, c); i >= 0 {
		return append(dst, tsvDecoded[i])
	}
	return append(dst, c) // \\ \' \" and any other character: itself
}

// tsvEscaped lists the characters that follow a backslash in TSV's escapes;
// tsvDecoded, at the same index, the byte each stands for.
const (
	tsvEscaped = "tnr0bfav"
	tsvDecoded = "\t\n\r\x00\b\f\a\v"
)

// splitCSV decodes one CSV record starting with line; a quoted field may
// continue over the following lines.
func (s *fileSource[K, V]) splitCSV(line []byte) error {
	i := 0
	for {
		// At the start of a field.
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i < len(line) && line[i] == '"' {
			i++
			openLine := s.line
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					// A line break inside quotes is the field's, as
					// written: CR LF stays CR LF, as ClickHouse reads it.
					s.rec = append(s.rec, line[i:]...)
					if s.crlf {
						s.rec = append(s.rec, '\r')
					}
					s.rec = append(s.rec, '\n')
					next, ok, err := s.readLine()
					if err != nil {
						return err
					}
					if !ok {
						return fileErr(s.path, openLine, "column %d: quoted field is not closed before the end of the file", len(s.ends)+1)
					}
					line, i = next, 0
					continue
				}
				s.rec = append(s.rec, line[i:i+j]...)
				i += j + 1
				if i < len(line) && line[i] == '"' {
					s.rec = append(s.rec, '"')
					i++
					continue
				}
				break
			}
			for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
				i++
			}
			if i < len(line) && line[i] != ',' {
				if s.badRow == nil {
					s.badRow = fileErr(s.path, s.line, "column %d: unexpected %q after the closing quote (want a comma or the end of the line)", len(s.ends)+1, line[i])
				}
				// Skip to the next comma to keep the columns aligned.
				j := bytes.IndexByte(line[i:], ',')
				if j < 0 {
					i = len(line)
				} else {
					i += j
				}
			}
		} else {
			j := bytes.IndexByte(line[i:], ',')
			end := len(line)
			if j >= 0 {
				end = i + j
			}
			field := bytes.TrimRight(line[i:end], " \t")
			s.rec = append(s.rec, field...)
			i = end
		}
		s.ends = append(s.ends, len(s.rec))
		if i >= len(line) {
			return nil
		}
		i++ // the comma
	}
}

func (s *fileSource[K, V]) columnLabel(col int) string {
	if col < len(s.header) {
		return fmt.Sprintf("column %d (%s)", col+1, quoteValue(s.header[col]))
	}
	return fmt.Sprintf("column %d", col+1)
}

// fileColumn is a column the source reads, and what it is for.
type fileColumn struct {
	which string // key, value, or "" for one of Columns
	col   int    // 0-based; -1 for no value column
}

// columnsUsed are the columns each row must have: the key's, the value's
// and Columns.
func (s *fileSource[K, V]) columnsUsed() []fileColumn {
	used := []fileColumn{{"key", s.keyCol}, {"value", s.valCol}}
	for _, c := range s.cols {
		used = append(used, fileColumn{"", c})
	}
	return used
}

// lastColumn is the highest 0-based column a row must have.
func (s *fileSource[K, V]) lastColumn() int {
	last := max(s.keyCol, s.valCol)
	for _, c := range s.cols {
		last = max(last, c)
	}
	return last
}

func (s *fileSource[K, V]) shortRowError() error {
	n := len(s.ends)
	missing := fileColumn{"key", s.keyCol}
	for _, c := range s.columnsUsed() {
		if c.col >= n {
			missing = c // the first missing one, key first
			break
		}
	}
	what := s.columnLabel(missing.col)
	if missing.which != "" {
		what = "the " + missing.which + " " + what
	}
	return fileErr(s.path, s.recLine, "the row has %d %s, so %s is missing", n, plural(n, "column"), what)
}

// parseRow turns the current record into a key and a value.
func (s *fileSource[K, V]) parseRow() (K, V, error) {
	var k K
	var v V
	if s.badRow != nil {
		return k, v, s.badRow
	}
	if len(s.ends) <= s.lastColumn() {
		return k, v, s.shortRowError()
	}
	lo, hi, err := ParseValue(s.key, bytesString(s.field(s.keyCol)))
	if err != nil {
		return k, v, fileErr(s.path, s.recLine, "%s: %w", s.columnLabel(s.keyCol), err)
	}
	k = core.FromUint64[K](lo, hi)
	switch {
	case s.valCol >= 0:
		lo, hi, err = ParseValue(s.value, bytesString(s.field(s.valCol)))
		if err != nil {
			return k, v, fileErr(s.path, s.recLine, "%s: %w", s.columnLabel(s.valCol), err)
		}
		v = core.FromUint64[V](lo, hi)
	case s.valRand:
		v = valueBits[V](moremur(s.valueBase + uint64(s.rows)*weylGamma))
	default:
		v = valueBits[V](valueHash(lo, hi))
	}
	if s.rowBytes > 0 {
		v = cutRow(v, s.rowBytes)
	}
	return k, v, s.keepCells()
}

// keepCells checks the current record's Columns (CheckCell) and keeps
// them for Cell; a bad cell keeps none of the row's.
func (s *fileSource[K, V]) keepCells() error {
	mark := s.cells.mark()
	for i, c := range s.cols {
		text := s.field(c)
		if s.checkCell != nil {
			if err := s.checkCell(i, text); err != nil {
				s.cells.undo(mark)
				return fileErr(s.path, s.recLine, "%s: %w", s.columnLabel(c), err)
			}
		}
		s.cells.add(text)
	}
	return nil
}

// Cell implements core.CellSource.
func (s *fileSource[K, V]) Cell(row, column int) []byte {
	return s.cells.cell(row*len(s.cols) + column)
}

// Next implements Source. A bad row stops the load with its file, line,
// column and value, unless SkipBadRows is set: then it is counted in
// Skipped. On an error b is left empty.
func (s *fileSource[K, V]) Next(b *core.Block[K, V], max int) error {
	b.Reset()
	s.cells.reset()
	if s.done {
		s.cells = cellChunks{} // the pass is over: its blocks' cells go
	}
	switch {
	case s.closed:
		return errSourceClosed
	case s.err != nil:
		return s.err
	case max < 1:
		return fmt.Errorf("source: Next(max = %d): max must be at least 1", max)
	}
	for !s.done && b.Len() < max {
		if !s.pending {
			ok, err := s.readRecord()
			if err != nil {
				s.err = err
				b.Reset()
				return err
			}
			if !ok {
				s.done = true
				break
			}
		}
		s.pending = false
		k, v, err := s.parseRow()
		if err != nil {
			if s.skipBad {
				s.skipped++
				continue
			}
			s.err = err
			b.Reset()
			return err
		}
		b.Append(k, v)
		s.rows++
	}
	if b.Len() == 0 {
		return io.EOF
	}
	return nil
}

// Rows implements Source: a file's row count is known only once read.
func (s *fileSource[K, V]) Rows() int64 { return -1 }

// Skipped implements Source.
func (s *fileSource[K, V]) Skipped() int64 { return s.skipped }

// Close implements Source; it is safe to call more than once.
func (s *fileSource[K, V]) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.cells = cellChunks{}
	s.stopWatch()
	var err error
	if s.gz != nil {
		err = s.gz.Close()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// FileError is an error of a source file, at a line of it (Line >= 1) or
// of the whole file (Line 0): a caller tells the source's own errors (bad
// input) from others without reading the text. Its text is
// "PATH:LINE: ..." or `source file "PATH": ...`.
type FileError struct {
	Path string
	Line int64
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("source file %q: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// fileErr is a FileError of path at line (0: the whole file).
// crOnly reports whether a line holds a CR that does not end a CR LF:
// in a first line with no LF after it, lines ended by CR alone (as classic
// Mac OS wrote them, and some exports still do).
func crOnly(b []byte) bool {
	i := bytes.IndexByte(b, '\r')
	// Not one inside a quoted CSV field (an odd count of quotes before it).
	return i >= 0 && i+1 < len(b) && b[i+1] != '\n' && bytes.Count(b[:i], []byte{'"'})%2 == 0
}

func errCROnly(path string) error {
	return fileErr(path, 0, "its lines end in CR alone, which is not read as a line end (allowed: LF or CR LF line ends; tr '\\r' '\\n' converts it)")
}

func fileErr(path string, line int64, format string, args ...any) error {
	return &FileError{Path: path, Line: line, Err: fmt.Errorf(format, args...)}
}
