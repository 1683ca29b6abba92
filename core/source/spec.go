package source

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
)

// Source kinds, as Spec.Kind spells them.
const (
	Sequential = "sequential" // 0, 1, 2, ... truncated to the key type, as ClickHouse's numbers()
	Random     = "random"     // uniform over the key type's bits
	Range      = "range"      // uniform in [0, M): duplicates on purpose
	Zipf       = "zipf"       // Zipf-distributed ranks: skewed
	File       = "file"       // a TSV or CSV file, optionally gzip-compressed
)

// How a synthetic source (or a file without a value column) makes values.
const (
	ValuesHash   = "hash"   // a deterministic function of the key: a repeated key gets the same value
	ValuesRandom = "random" // a deterministic function of the seed and the row number
)

// Limits of a Spec.
const (
	// MaxRows bounds Rows for a synthetic source: 2^62, core's
	// MaxPredictRows, so that a prediction and a reservation take any
	// source's count.
	MaxRows = core.MaxPredictRows
	// MaxRangeM bounds range:M at 2^53, so that M is exact in Param.
	MaxRangeM = 1 << 53
	// MaxZipfS bounds zipf:S; S must also be > 0.
	MaxZipfS = 10.0
)

// Spec describes where a load's rows come from: a synthetic generator
// (sequential, random, range:M, zipf:S) or a TSV/CSV file. Parse
// reads the short form users type; the other fields are set by the caller.
// An empty string in Values, Header, KeyColumn or ValueColumn means that
// field's default.
//
// The synthetic kinds, for a source of Rows rows numbered i = 0 .. Rows-1:
//
//	sequential  key = i, truncated to the key type (UInt8 wraps after 255).
//	random      key = a bijective mix of (seed, i): uniform over the key's
//	            bits; 16-byte keys get two independent words. Keys never
//	            repeat while i is below the count of values the key type
//	            holds (2^8, 2^16, 2^32 for 1-, 2- and 4-byte keys): the mix
//	            is a permutation of the key's own width, so a narrow key
//	            repeats only once every value has been drawn.
//	range:M     key uniform in [0, M), M an integer 1 <= M <= 2^53 that the
//	            key type can hold from 0 (UInt8: M <= 256, Int8: M <= 128,
//	            Float32: M <= 2^24). M accepts 1000000, 1e6, 1M (K, M, G, T
//	            are powers of 1000).
//	zipf:S      key = r-1 for a rank r in 1..Rows drawn with
//	            P(r) = r^-S / H(Rows, S), H the generalized harmonic number;
//	            0 < S <= 10. Key 0 is the most frequent; at S = 1.1 and 1e6
//	            rows it is 12.4 % of the rows. Ranks 1 to 1024 come from a
//	            table, the rest by rejection inversion (Hörmann and
//	            Derflinger 1996, as Apache Commons RNG's
//	            RejectionInversionZipfSampler), which takes any S > 0.
//
// For Float32 and Float64 keys, sequential, range and zipf produce the
// number as a float (0.0, 1.0, 2.0, ...), as ClickHouse's CAST would;
// random produces random bits (NaNs included). Every other type takes the
// number's low bytes.
//
// Every synthetic row is a pure function of (Seed, i), so any row can be
// computed alone (core.IndexedSource.Row) and a source uses constant memory.
type Spec struct {
	Kind  string  `json:"kind"`            // one of the Source* constants
	Param float64 `json:"param,omitempty"` // range: M; zipf: S; otherwise 0
	Rows  int64   `json:"rows,omitempty"`  // synthetic only: rows to produce, 1 to MaxRows; ignored for files
	Seed  uint64  `json:"seed"`            // every random choice derives from it

	// Values is how values are made when no column holds them: ValuesHash
	// (default) or ValuesRandom.
	Values string `json:"values,omitempty"`

	// File options.
	Path        string `json:"path,omitempty"`
	Format      string `json:"format,omitempty"`       // "tsv", "csv" (or a ClickHouse name: TSV, TabSeparated, TSVWithNames, CSV, CSVWithNames); "" = from the name, then the content
	Header      string `json:"header,omitempty"`       // "auto" (default), "yes", "no"
	KeyColumn   string `json:"key_column,omitempty"`   // 1-based position ("1") or a header name; default "1"
	ValueColumn string `json:"value_column,omitempty"` // position or name; default "2"; "none" = no column, values made as Values says
	SkipBadRows bool   `json:"skip_bad_rows,omitempty"`
	// Columns are more of the file's columns read with each row (a
	// dictionary's attributes after the value), each a 1-based position
	// or a header name; the file source reading them is a core.CellSource.
	Columns []string `json:"columns,omitempty"`
	// CheckCell, when set, checks the text of Columns[i] in every row as
	// its key and value are parsed: its error is the row's bad cell, with
	// the file, line and column, and SkipBadRows skips such a row as any.
	CheckCell func(i int, text []byte) error `json:"-"`
	// Names, when set, are the names the value's column (Names[0]) and
	// each of Columns (Names[i+1]) stand for, "" where none is given (a
	// dictionary's attributes). With a header line, a column headed by
	// another name than its own is found by its name where ByDefault says
	// its position is only the default, and refused, naming both, where it
	// was given; without a header line the positions hold.
	Names     []string `json:"names,omitempty"`
	ByDefault []bool   `json:"by_default,omitempty"` // as Names: the column's position is the default, not given
}

// ColumnLabels are Columns as a result names them: each given column as
// given, and one whose position is only the default by its name (Names)
// where it has one, the column it reads when the file has a header line.
func (s Spec) ColumnLabels() []string {
	out := slices.Clone(s.Columns)
	for i := range out {
		if i+1 < len(s.Names) && s.Names[i+1] != "" && i+1 < len(s.ByDefault) && s.ByDefault[i+1] {
			out[i] = s.Names[i+1]
		}
	}
	return out
}

// AllowedKinds is the list every unknown-kind error shows.
const AllowedKinds = "sequential, random, range:M, zipf:S, or a file"

// Parse reads a source as users type it: "sequential", "random",
// "range:M", "zipf:S", a file path, or "file:PATH" for a path that would
// otherwise read as a kind. The result has the defaults filled in (Values
// "hash"; for files Header "auto", KeyColumn "1", ValueColumn "2"); Rows and
// Seed are left for the caller.
func Parse(s string) (Spec, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return Spec{}, fmt.Errorf("source %q: empty (allowed: %s)", s, AllowedKinds)
	}
	if path, ok := strings.CutPrefix(text, "file:"); ok {
		if path == "" {
			return Spec{}, fmt.Errorf("source %q: file: needs a path", s)
		}
		return fileSpec(path), nil
	}
	word, param, hasParam := strings.Cut(text, ":")
	switch strings.ToLower(word) {
	case Sequential, Random:
		if hasParam {
			return Spec{}, fmt.Errorf("source %q: %s takes no parameter (allowed: %s)", s, strings.ToLower(word), AllowedKinds)
		}
		return Spec{Kind: strings.ToLower(word), Values: ValuesHash}, nil
	case Range:
		if !hasParam {
			return Spec{}, fmt.Errorf("source %q: range needs M, as range:M (e.g. range:1000000, range:1e6, range:1M)", s)
		}
		m, err := parseRangeM(param)
		if err != nil {
			return Spec{}, fmt.Errorf("source %q: %w", s, err)
		}
		return Spec{Kind: Range, Param: m, Values: ValuesHash}, nil
	case Zipf:
		if !hasParam {
			return Spec{}, fmt.Errorf("source %q: zipf needs an exponent, as zipf:S (e.g. zipf:1.1)", s)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(param), 64)
		if err != nil {
			return Spec{}, fmt.Errorf("source %q: S %q is not a number (allowed: 0 < S <= %g, e.g. zipf:1.1)", s, param, MaxZipfS)
		}
		if err := checkZipfS(v); err != nil {
			return Spec{}, fmt.Errorf("source %q: %w", s, err)
		}
		return Spec{Kind: Zipf, Param: v, Values: ValuesHash}, nil
	}
	// Not a kind: a file, if it exists or looks like a path.
	if _, err := os.Stat(text); err == nil || !isBareWord(word) || strings.ContainsAny(text, `/\`) {
		return fileSpec(text), nil
	}
	return Spec{}, fmt.Errorf("source %q: unknown kind (allowed: %s)", s, AllowedKinds)
}

func fileSpec(path string) Spec {
	return Spec{Kind: File, Path: path, Values: ValuesHash, Header: "auto", KeyColumn: "1", ValueColumn: "2"}
}

// isBareWord is true for letters only: "zipff" is a mistyped kind, while
// "keys.tsv" is a file name.
func isBareWord(w string) bool {
	if w == "" {
		return false
	}
	for _, c := range w {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return false
		}
	}
	return true
}

// parseRangeM reads M: an integer, possibly written 1e6 or with a K/M/G/T
// suffix (powers of 1000), from 1 to MaxRangeM.
func parseRangeM(text string) (float64, error) {
	p := strings.TrimSpace(text)
	mult := 1.0
	if n := len(p); n > 0 {
		switch p[n-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			p = p[:n-1]
		}
	}
	bad := fmt.Errorf("M %q is not allowed (allowed: an integer 1 to %d, e.g. 1000000, 1e6 or 1M)", text, int64(MaxRangeM))
	var m float64
	if u, err := strconv.ParseUint(p, 10, 64); err == nil {
		if u > MaxRangeM {
			return 0, bad
		}
		m = float64(u) * mult
	} else {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || strings.ContainsAny(p, "_xXpP") || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, bad
		}
		m = f * mult
	}
	if m != math.Trunc(m) || m < 1 || m > MaxRangeM {
		return 0, bad
	}
	return m, nil
}

func checkZipfS(v float64) error {
	if !(v > 0 && v <= MaxZipfS) {
		return fmt.Errorf("S %v is out of range (allowed: 0 < S <= %g, e.g. zipf:1.1)", v, MaxZipfS)
	}
	return nil
}

// String renders the spec the way Parse reads it: "random",
// "range:1000000", "zipf:1.1", or the file's path ("file:PATH" when the
// path alone would read as something else).
func (s Spec) String() string {
	switch s.Kind {
	case Range:
		return "range:" + strconv.FormatFloat(s.Param, 'f', -1, 64)
	case Zipf:
		return "zipf:" + strconv.FormatFloat(s.Param, 'g', -1, 64)
	case File:
		if p, err := Parse(s.Path); err != nil || p.Kind != File || p.Path != s.Path {
			return "file:" + s.Path
		}
		return s.Path
	}
	return s.Kind
}

// IsSynthetic reports whether the rows are generated rather than read.
func (s Spec) IsSynthetic() bool {
	switch s.Kind {
	case Sequential, Random, Range, Zipf:
		return true
	}
	return false
}

// NoValueColumn reports whether no column of a file holds the values
// (ValueColumn "none"): they are made as Values says.
func (s Spec) NoValueColumn() bool {
	return strings.EqualFold(strings.TrimSpace(s.ValueColumn), "none")
}

// OptionError is a file spec's option that is not allowed, in parts, so
// that a caller names its own setting without reading the text: Option is
// the Spec's field ("Header", "KeyColumn", "ValueColumn", "Columns"),
// What the option as the text names it (`key column "0"`), Problem what
// is wrong ("not allowed"), Allowed what is. Its text is
// `source "S": key column "0" is not allowed (allowed: ...)`.
type OptionError struct {
	Spec                           string // the spec, as String writes it
	Option, What, Problem, Allowed string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("source %q: %s is %s (allowed: %s)", e.Spec, e.What, e.Problem, e.Allowed)
}

// optionErr is an OptionError of s.
func (s Spec) optionErr(option, what, problem, allowed string) error {
	return &OptionError{Spec: s.String(), Option: option, What: what, Problem: problem, Allowed: allowed}
}

func (s Spec) errorf(format string, args ...any) error {
	return fmt.Errorf("source %q: "+format, append([]any{s.String()}, args...)...)
}

// Validate checks every field that does not need the key type or the file
// itself, so that a command line can refuse bad input before any work.
// Open calls it too.
func (s Spec) Validate() error {
	switch s.Kind {
	case Sequential, Random:
	case Range:
		if s.Param != math.Trunc(s.Param) || s.Param < 1 || s.Param > MaxRangeM {
			return s.errorf("M %v is not allowed (allowed: an integer 1 to %d)", s.Param, int64(MaxRangeM))
		}
	case Zipf:
		if err := checkZipfS(s.Param); err != nil {
			return s.errorf("%w", err)
		}
	case File:
		return s.validateFile()
	default:
		return fmt.Errorf("source kind %q: unknown kind (allowed: %s, %s, %s, %s, %s)",
			s.Kind, Sequential, Random, Range, Zipf, File)
	}
	if s.Rows < 1 || s.Rows > MaxRows {
		return s.errorf("rows %d is out of range (allowed: 1 to %d)", s.Rows, MaxRows)
	}
	return s.validateValues()
}

// ValidateKey checks what needs the key type too: a range's M, at most the
// count of values the key type holds from 0 up (range:300 of UInt8 keys
// would repeat keys the range promises distinct).
func (s Spec) ValidateKey(key core.Type) error {
	if s.Kind != Range {
		return nil
	}
	if m, limit := uint64(s.Param), RangeLimit(key); m > limit {
		return s.errorf("M %d is too large for key type %s (allowed: 1 to %d, the count of values %s holds from 0 up)",
			m, key.Name, limit, key.Name)
	}
	return nil
}

func (s Spec) validateValues() error {
	switch s.Values {
	case "", ValuesHash, ValuesRandom:
		return nil
	}
	return s.errorf("values %q is not allowed (allowed: %s, %s)", s.Values, ValuesHash, ValuesRandom)
}

// fileLayout is a file spec's options after defaults and ClickHouse format
// names are resolved.
type fileLayout struct {
	format   string // "tsv", "csv" or "" (detect)
	header   string // "auto", "yes", "no"
	keyCol   int    // 0-based position, or -1 when keyName is set
	keyName  string
	valCol   int // 0-based position, -1 when valName is set or there is no value column
	valName  string
	valNone  bool
	valRand  bool
	cols     []int    // Columns: 0-based positions, -1 where colNames has the name
	colNames []string // Columns given by name
}

func (s Spec) validateFile() error {
	_, err := s.fileLayout()
	return err
}

func (s Spec) fileLayout() (fileLayout, error) {
	var fl fileLayout
	if s.Path == "" {
		return fl, errors.New("source file: no path given")
	}
	header := strings.ToLower(s.Header)
	switch header {
	case "":
		header = "auto"
	case "auto", "yes", "no":
	default:
		return fl, s.optionErr("Header", fmt.Sprintf("header %q", s.Header), "not allowed", "auto, yes, no")
	}
	switch strings.ToLower(s.Format) {
	case "":
	case "tsv", "tabseparated":
		fl.format = "tsv"
	case "csv":
		fl.format = "csv"
	case "tsvwithnames", "tabseparatedwithnames", "csvwithnames":
		fl.format = "tsv"
		if strings.HasPrefix(strings.ToLower(s.Format), "csv") {
			fl.format = "csv"
		}
		if header == "no" {
			return fl, s.errorf("format %q has a header row but header is \"no\"", s.Format)
		}
		header = "yes"
	default:
		return fl, s.errorf("format %q is not allowed (allowed: tsv, csv, TSVWithNames, CSVWithNames, or empty to detect)", s.Format)
	}
	fl.header = header
	if err := s.validateValues(); err != nil {
		return fl, err
	}
	fl.valRand = s.Values == ValuesRandom
	var err error
	if fl.keyCol, fl.keyName, err = s.column("KeyColumn", "key", s.KeyColumn, "1", header); err != nil {
		return fl, err
	}
	fl.cols, fl.colNames = make([]int, len(s.Columns)), make([]string, len(s.Columns))
	for i, c := range s.Columns {
		if strings.TrimSpace(c) == "" {
			return fl, s.optionErr("Columns", fmt.Sprintf("column %d of the columns", i+1), "empty", "a position 1 or more, or a header name")
		}
		if fl.cols[i], fl.colNames[i], err = s.column("Columns", "attribute", c, "", header); err != nil {
			return fl, err
		}
	}
	if s.NoValueColumn() {
		fl.valNone, fl.valCol = true, -1
		return fl, nil
	}
	fl.valCol, fl.valName, err = s.column("ValueColumn", "value", s.ValueColumn, "2", header)
	return fl, err
}

// byName reports whether a column of fl is given by a header name.
func (fl fileLayout) byName() bool {
	return fl.keyCol < 0 || (fl.valCol < 0 && !fl.valNone) || slices.Contains(fl.cols, -1)
}

// column reads a column option: a 1-based position or a header name.
func (s Spec) column(option, which, text, def, header string) (int, string, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		t = def
	}
	if n, err := strconv.Atoi(t); err == nil || (t[0] >= '0' && t[0] <= '9') || t[0] == '-' || t[0] == '+' {
		if err != nil || n < 1 {
			return 0, "", s.optionErr(option, fmt.Sprintf("%s column %q", which, text), "not allowed", "a position 1 or more, or a header name")
		}
		return n - 1, "", nil
	}
	if header == "no" {
		return 0, "", s.optionErr(option, fmt.Sprintf("%s column %q", which, text), `a name, but header is "no"`, "a position 1 or more, or header auto/yes")
	}
	return -1, t, nil
}

// Open opens the source spec describes, producing keys of type key stored
// in K and values of type value stored in V. K and V must be the core.Bits
// types of those sizes (UInt64 in uint64, UUID in [2]uint64, ...).
// Synthetic sources also implement core.IndexedSource; a file is opened,
// its header read and its columns resolved here, so a missing file, an
// empty one or an unknown column name fails now rather than in the middle
// of a load.
//
// OpenContext and FromFile (open.go) are the same with a context that
// stops a file source's opening and reading.
func Open[K, V core.Bits](spec Spec, key, value core.Type) (core.Source[K, V], error) {
	return openSource[K, V](context.Background(), nil, spec, key, value)
}

// openSource is Open with a context, and for a file source a file
// already open (f, which it closes on an error) or nil to open spec.Path.
func openSource[K, V core.Bits](ctx context.Context, f *os.File, spec Spec, key, value core.Type) (src core.Source[K, V], err error) {
	if f != nil {
		defer func() {
			if err != nil {
				f.Close()
			}
		}()
	}
	if !knownType(key) {
		return nil, fmt.Errorf("source %q: unknown key type %q (allowed: %s)", spec.String(), key.Name, strings.Join(core.TypeNames(), ", "))
	}
	// A row's bits are made from the key (a file's too, when no column
	// holds its value: its attributes are then the file's Columns).
	row := value.Kind == core.KindRow && value.Size >= 1 && value.Size <= int(sizeOf[V]()) && (spec.Kind != File || spec.NoValueColumn())
	if !knownType(value) && !row {
		return nil, fmt.Errorf("source %q: unknown value type %q (allowed: %s)", spec.String(), value.Name, strings.Join(core.TypeNames(), ", "))
	}
	if ks := int(sizeOf[K]()); ks != key.Size {
		return nil, fmt.Errorf("source %q: key type %s is %d bytes but K (%T) holds %d", spec.String(), key.Name, key.Size, *new(K), ks)
	}
	if vs := int(sizeOf[V]()); vs != value.Size && !row {
		return nil, fmt.Errorf("source %q: value type %s is %d bytes but V (%T) holds %d", spec.String(), value.Name, value.Size, *new(V), vs)
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Kind == File {
		return openFileSource[K, V](ctx, f, spec, key, value)
	}
	s, err := newSynthSource[K, V](spec, key)
	if err == nil && row && value.Size < int(sizeOf[V]()) {
		s.rowBytes = value.Size
	}
	return s, err
}
