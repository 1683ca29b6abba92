//go:build !js

package server

import (
	"cmp"
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/dict/reload"
	"github.com/packlab/packlab/experiments/text"
)

// typeWords maps system.dictionaries.type to the LAYOUT word, for a
// dictionary whose DDL SQL does not show (XML).
var typeWords = map[string]string{
	"Hashed": "HASHED", "SparseHashed": "SPARSE_HASHED", "HashedArray": "HASHED_ARRAY", "Flat": "FLAT",
	"ComplexKeyHashed": "COMPLEX_KEY_HASHED", "ComplexKeySparseHashed": "COMPLEX_KEY_SPARSE_HASHED",
	"ComplexHashedArray": "COMPLEX_KEY_HASHED_ARRAY", "ComplexKeyHashedArray": "COMPLEX_KEY_HASHED_ARRAY",
	"Cache": "CACHE", "ComplexKeyCache": "COMPLEX_KEY_CACHE", "SSDCache": "SSD_CACHE", "SSDComplexKeyCache": "COMPLEX_KEY_SSD_CACHE",
	"Direct": "DIRECT", "ComplexKeyDirect": "COMPLEX_KEY_DIRECT", "IPTrie": "IP_TRIE", "RangeHashed": "RANGE_HASHED",
	"ComplexKeyRangeHashed": "COMPLEX_KEY_RANGE_HASHED", "PolygonSimple": "POLYGON_SIMPLE", "RegExpTree": "REGEXP_TREE",
}

// readDDL takes the layout's word and parameters from the dictionary's
// CREATE DICTIONARY, or, for one defined in XML, from its type.
func (d *Dictionary) readDDL(ddl string) {
	d.DDL, d.shards, d.exprs = ddl, 1, dict.ColumnExpressions(ddl)
	sp, word, params, ok := dict.ClauseCall(ddl, "LAYOUT")
	if !ok {
		// An XML dictionary's origin is its file; a DDL one's its name or
		// UUID, whose statement a user without the SHOW right reads empty.
		d.XML = ddl == "" && (strings.Contains(d.Origin, "/") || strings.HasSuffix(strings.ToLower(d.Origin), ".xml"))
		d.word = typeWords[d.Type]
		if d.word == "" {
			d.word = strings.ToUpper(d.Type)
		}
		if d.word != "" {
			d.Layout = "LAYOUT(" + d.word + "())"
		}
		const fallback = "the layout is read from system.dictionaries.type, which drops its parameters (SHARDS taken as 1)"
		switch {
		case d.XML:
			d.Notes = append(d.Notes, "defined in "+d.Origin+" (not DDL): "+fallback)
		case ddl == "":
			d.Notes = append(d.Notes, "its CREATE DICTIONARY is not readable here (system.tables.create_table_query is empty: the user may lack the SHOW right on it): "+fallback)
		default:
			d.Notes = append(d.Notes, "no LAYOUT clause could be read in its CREATE DICTIONARY: "+fallback)
		}
		return
	}
	d.word, d.Layout = word, ddl[sp.Start:sp.End]
	for i := 0; i+1 < len(params); i += 2 {
		switch strings.ToUpper(params[i]) {
		case "SHARDS":
			if n, err := strconv.Atoi(params[i+1]); err == nil && n > 0 {
				d.shards = n
			}
		case "MAX_LOAD_FACTOR":
			if x, err := strconv.ParseFloat(params[i+1], 64); err == nil {
				d.mlf = x
			}
		case "INITIAL_ARRAY_SIZE": // FLAT's: its arrays hold at least this many keys
			if n, err := strconv.ParseInt(params[i+1], 10, 64); err == nil && n > 0 {
				d.flatInitial = n
			}
		case "MAX_ARRAY_SIZE": // FLAT's: no memory of its own, but a key past it fails the load
			if n, err := strconv.ParseInt(params[i+1], 10, 64); err == nil && n > 0 {
				d.flatMax = n
			}
		}
	}
}

// stringColumns are the key parts and attributes of type String (or
// Nullable(String)).
func (d *Dictionary) stringColumns() []string {
	var out []string
	for i, t := range d.KeyTypes {
		if isString(t) && d.word != "" && strings.HasPrefix(d.word, "COMPLEX_KEY") && i < len(d.KeyNames) {
			out = append(out, d.KeyNames[i])
		}
	}
	for i, t := range d.AttributeTypes {
		if isString(t) && i < len(d.AttributeNames) {
			out = append(out, d.AttributeNames[i])
		}
	}
	return out
}

func isString(t string) bool { return t == "String" || t == "Nullable(String)" }

// nullableColumns are the attributes of a Nullable fixed-size type, whose
// NULL share the model needs (a String's comes with its lengths).
func (d *Dictionary) nullableColumns() []string {
	var out []string
	for i, t := range d.AttributeTypes {
		if strings.HasPrefix(t, "Nullable(") && !isString(t) && i < len(d.AttributeNames) {
			out = append(out, d.AttributeNames[i])
		}
	}
	return out
}

// needsSample: a modelled layout that holds rows. The sample counts the
// rows its source gives, which are more than its keys where a key repeats
// (a table of versions, a ReplacingMergeTree not yet merged): a table is
// reserved, and FLAT's Strings kept, for every row read (rowsRead). It
// also reads the String parts' lengths, the Nullable attributes' NULLs and
// FLAT's largest key, which sizes its arrays.
func (d *Dictionary) needsSample() bool {
	_, ok := modelledLayout(d.word)
	return ok && d.ElementCount > 0
}

// rowsRead is how many rows the dictionary's load reads, by the sample:
// its keys where not known.
func (d *Dictionary) rowsRead() int64 {
	if d.sample == nil || d.sample.Problem != "" {
		return d.ElementCount
	}
	return max(d.sample.Rows, d.ElementCount)
}

func modelledLayout(word string) (dict.ClickHouseDictionary, bool) {
	for _, cd := range dict.ClickHouseDictionaries() {
		if cd.Layout == word {
			return cd, true
		}
	}
	return dict.ClickHouseDictionary{}, false
}

// attributes are the dictionary's attributes as the model takes them, a
// String's mean length and a Nullable's share of NULLs from the sample.
func (d *Dictionary) attributes() ([]dict.Attribute, string) {
	out := make([]dict.Attribute, len(d.AttributeTypes))
	for i, t := range d.AttributeTypes {
		a := dict.Attribute{}
		inner, nullable := strings.CutPrefix(t, "Nullable(")
		if nullable {
			inner = strings.TrimSuffix(inner, ")")
			a.Nullable = true
		}
		if inner == "String" {
			a.Type = dict.StringRef
			name := ""
			if i < len(d.AttributeNames) {
				name = d.AttributeNames[i]
			}
			mean, ok := d.sampled(name)
			if !ok {
				return nil, "the String lengths of " + name + " are unknown (" + d.sampleProblem() + ")"
			}
			a.File = &dict.FileColumn{MeanLen: mean, NullShare: d.sample.Nulls[name]}
		} else {
			ct, err := dict.FixedType(inner)
			if err != nil {
				return nil, "attribute type " + t + " is not one packlab models"
			}
			a.Type = ct
		}
		if a.Nullable && a.File == nil {
			name := at(d.AttributeNames, i)
			if d.sample == nil || d.sample.Problem != "" {
				return nil, "the NULL share of " + name + " is unknown (" + d.sampleProblem() + ")"
			}
			a.File = &dict.FileColumn{NullShare: d.sample.Nulls[name]}
		}
		out[i] = a
	}
	if len(out) == 0 {
		return nil, "no attributes"
	}
	return out, ""
}

func (d *Dictionary) sampled(col string) (float64, bool) {
	if d.sample == nil || d.sample.Problem != "" {
		return 0, false
	}
	m, ok := d.sample.MeanLen[col]
	return m, ok
}

func (d *Dictionary) sampleProblem() string {
	if d.sample == nil {
		return "not sampled"
	}
	if d.sample.Problem != "" {
		return d.sample.Problem
	}
	return "not in the sample"
}

// keyBytes is a complex key's serialized bytes a row, its String parts at
// their sampled mean length.
func (d *Dictionary) keyBytes() (float64, string) {
	var b float64
	for i, t := range d.KeyTypes {
		if t == "String" {
			mean, ok := d.sampled(d.KeyNames[i])
			if !ok {
				return 0, "the String lengths of the key part " + d.KeyNames[i] + " are unknown (" + d.sampleProblem() + ")"
			}
			b += dict.StringKeyOverhead + mean // its length and its bytes
			continue
		}
		ct, err := dict.FixedType(t)
		if err != nil {
			return 0, "key part type " + t + " is not one packlab models"
		}
		b += float64(ct.Size)
	}
	return b, ""
}

// reserve is what one table of cd holding the dictionary's keys is
// reserved for as its rows load (dict.SourceReserve). Not HASHED_ARRAY's:
// its arrays grow by the keys, and its index, which ClickHouse reserves
// for the rows read, is not measured so (reserved for every row, the
// model was 3.2x its bytes_allocated at 200,000 rows of 50,000 keys).
func (d *Dictionary) reserve(cd dict.ClickHouseDictionary) int64 {
	switch {
	case cd.Model == core.LayoutHashedArray:
		return d.ElementCount
	case d.updateField():
		return d.rowsRead() // resize(the loaded block's rows), once
	}
	return dict.SourceReserve(cd, d.ElementCount, d.rowsRead(), dict.SourceBlockRows)
}

// updateField: its source has an UPDATE_FIELD. ClickHouse then keeps the
// rows it loaded (update_field_loaded_block, to merge the next update
// into) beside its tables, and bytes_allocated counts them: HASHED of a
// UInt64 key and a UInt16 at 20,000 rows said 1,376,488 where its table
// is 1,048,808 (the block's two columns, 262,144 and 65,536 bytes).
func (d *Dictionary) updateField() bool {
	_, params, ok := sourceParams(d.DDL)
	return ok && params["UPDATE_FIELD"] != ""
}

// loadedBlockBytes is the block of every row read that a dictionary with
// an UPDATE_FIELD keeps: a column of each key part and attribute, each
// grown by doubling as the source's blocks were appended (a PODArray of
// its bytes and 31 of padding, rounded up to a power of two), a String as
// its offsets and its bytes, a Nullable with its byte of null map.
func (d *Dictionary) loadedBlockBytes(cd dict.ClickHouseDictionary, attrs []dict.Attribute) (int64, string) {
	rows := d.rowsRead()
	pod := func(b float64) int64 {
		need := uint64(b) + 31
		return int64(1) << bits.Len64(need-1)
	}
	var total int64
	if !cd.ComplexKey {
		total += pod(8 * float64(rows)) // a simple key, a UInt64
	}
	for i, t := range d.KeyTypes {
		switch {
		case !cd.ComplexKey:
		case t == "String":
			mean, ok := d.sampled(d.KeyNames[i])
			if !ok {
				return 0, "the String lengths of the key part " + d.KeyNames[i] + " are unknown (" + d.sampleProblem() + ")"
			}
			total += pod(8*float64(rows)) + pod(mean*float64(rows))
		default:
			ct, err := dict.FixedType(t)
			if err != nil {
				return 0, "key part type " + t + " is not one packlab models"
			}
			total += pod(float64(ct.Size) * float64(rows))
		}
	}
	for _, a := range attrs {
		if a.IsString() {
			values := float64(rows)
			if a.File != nil {
				values *= 1 - a.File.NullShare
			}
			total += pod(8*float64(rows)) + pod(a.MeanLen()*values)
		} else {
			total += pod(float64(a.Size) * float64(rows))
		}
		if a.Nullable {
			total += pod(float64(rows))
		}
	}
	return total, ""
}

// withLoadedBlock is f with the loaded block of a dictionary with an
// UPDATE_FIELD: in what bytes_allocated counts and what it holds, and
// twice in a reload's peak (the serving copy's, and the new one's, the
// old merged with the update; not measured).
func (d *Dictionary) withLoadedBlock(cd dict.ClickHouseDictionary, attrs []dict.Attribute, f figures, problem string) (figures, string) {
	if problem != "" || !d.updateField() {
		return f, problem
	}
	b, problem := d.loadedBlockBytes(cd, attrs)
	if problem != "" {
		return f, problem
	}
	f.model, f.real, f.reloadPeak = f.model+b, f.real+b, f.reloadPeak+2*b
	return f, ""
}

// figures is one layout's model of the dictionary's rows.
type figures struct {
	clause                  string
	model, real, reloadPeak int64
	note                    string
}

// modelAs models the dictionary's rows in layout cd with shards: what
// bytes_allocated counts, the real bytes, the reload's peak.
func (d *Dictionary) modelAs(cd dict.ClickHouseDictionary, attrs []dict.Attribute, shards int, mlf float64) (figures, string) {
	f, problem := d.modelTables(cd, attrs, shards, mlf)
	return d.withLoadedBlock(cd, attrs, f, problem)
}

// modelTables is modelAs for the dictionary's tables alone.
func (d *Dictionary) modelTables(cd dict.ClickHouseDictionary, attrs []dict.Attribute, shards int, mlf float64) (figures, string) {
	n := d.ElementCount
	opt := core.Options{MaxLoadFactor: mlf}
	if !cd.TakesMaxLoadFactor() {
		opt.MaxLoadFactor, mlf = 0, 0
	}
	f := figures{clause: dict.LayoutClause(cd.Layout, shards, mlf, cd.TakesMaxLoadFactor())}
	if cd.Flat() {
		return d.flatAs(attrs, cmp.Or(d.flatInitial, dict.FlatInitialArraySize))
	}
	simple := cd
	if cd.ComplexKey {
		for _, s := range dict.ClickHouseDictionaries() {
			if !s.ComplexKey && s.Model == cd.Model || cd.Model == core.LayoutSparse && s.Layout == "SPARSE_HASHED" {
				simple = s
				break
			}
		}
	}
	// One table is reserved block by block for the rows read and the
	// keys held (dict.SourceReserve): where keys repeat, for more than
	// the keys (200,000 rows of 50,000 keys: 2^18 cells, the model of
	// 50,000 rows half of HASHED's and SPARSE_HASHED's bytes_allocated).
	sopt := opt
	if shards <= 1 {
		sopt.Reserve = d.reserve(simple)
	}
	pr, err := dict.Predict(simple, attrs, n, 0, sopt, shards)
	if err != nil {
		return f, "the model refused it: " + err.Error()
	}
	simpleFull := pr.FinalBytes
	keyBytes := 8.0 // a simple key, read as UInt64
	if cd.ComplexKey {
		kb, problem := d.keyBytes()
		if problem != "" {
			return f, problem
		}
		keyBytes = kb
		copt := opt
		if shards <= 1 {
			copt.Reserve = d.reserve(cd)
		}
		f.real = dict.ComplexKeyPartsBytes(cd, kb, attrs, n, 0, copt, shards)
		f.model = f.real
		if cd.Model == core.LayoutHashedArray {
			f.model = f.real - pr.BucketCount*dict.ComplexKeyIndexCellBytes + n
			f.note = "bytes_allocated counts the key index as a byte a row (ClickHouse #118641): real_bytes counts it whole"
		}
		if cd.Model == core.LayoutSparse {
			f.real += dict.ComplexKeySparseRealGap(attrs, n, copt, shards)
			f.note = "sparse_hash_map's bytes_allocated is ClickHouse's estimate of the pairs alone (#22867): real_bytes counts its groups' vectors in jemalloc's size classes"
		}
	} else {
		f.real = simpleFull + dict.SparseRealGap(cd, attrs, n, sopt, shards)
		f.model = simpleFull - dict.SparseUncounted(cd, attrs, n, opt, shards)
		if cd.Model == core.LayoutHashedArray {
			f.model = simpleFull - pr.BucketCount*16 + n // measured: 8,584,608 bytes_allocated at 200,000 rows with a String
			f.note = "bytes_allocated counts the key-to-row index as a byte a row (ClickHouse #118641): real_bytes counts it whole"
		}
	}
	if cd.Model == core.LayoutHashedArray {
		// A Nullable attribute's is_index_null is a bit a row, which
		// bytes_allocated counts as a byte (its size, not its capacity's
		// bytes): 6,687,456 at 200,000 rows of one Nullable(String),
		// 175,000 over the bits.
		for _, a := range attrs {
			if a.Nullable {
				f.model += n - (n+63)/64*8
			}
		}
	}
	// The reload, as the server's memory tracker sees it (reload.TrackedReload).
	realAt := func(m int64) int64 {
		if cd.ComplexKey {
			return dict.ComplexKeyPartsBytes(cd, keyBytes, attrs, m, m, opt, shards)
		}
		p, err := dict.PredictEven(simple, attrs, m, m, sopt, shards)
		if err != nil {
			return 0
		}
		return p.FinalBytes
	}
	f.reloadPeak = reload.TrackedReload(f.real, reload.LoadGrowths(cd, attrs, n, pr.BucketCount, mlf, shards), realAt) + sourceReadBytes(keyBytes, attrs)
	return f, ""
}

// flatAs models the dictionary's rows in FLAT arrays first allocated for
// initial keys (INITIAL_ARRAY_SIZE): 50,000 of them with 20,000 keys hold
// 50,000 (bytes_allocated 100,288 with a UInt16, where a model of the
// largest key's 20,000 said 65,696). Its clause keeps the dictionary's
// MAX_ARRAY_SIZE, which costs no memory and lets its keys grow.
func (d *Dictionary) flatAs(attrs []dict.Attribute, initial int64) (figures, string) {
	if d.sample == nil || d.sample.Problem != "" {
		return figures{}, "FLAT's largest key is unknown (" + d.sampleProblem() + ")"
	}
	span := d.sample.MaxKey + 1
	f := figures{clause: dict.FlatClause(span)}
	var params []string
	if initial != dict.FlatInitialArraySize {
		params = append(params, "INITIAL_ARRAY_SIZE "+strconv.FormatInt(initial, 10))
	}
	if d.flatMax >= span {
		params = append(params, "MAX_ARRAY_SIZE "+strconv.FormatInt(d.flatMax, 10))
	}
	if len(params) > 0 {
		f.clause = "LAYOUT(FLAT(" + strings.Join(params, " ") + "))"
	}
	// A String of every row read is in its arena, a repeated key's too
	// (200,000 rows of 50,000 keys: bytes_allocated 5,238,944, where
	// 50,000 Strings model 2,093,216).
	rows := d.rowsRead()
	f.model = dict.FlatBytesFrom(attrs, span, rows, initial)
	m := dict.FlatMemoryFrom(attrs, span, rows, initial)
	f.real, f.reloadPeak = m.SteadyBytes, m.ReloadPeakBytes+sourceReadBytes(8, attrs)
	return f, ""
}

// What a load's read of its source holds beside the tables (the reload's
// part that is neither copy), as MemoryTracking counts it: buffers of its
// own and a block of max_block_size rows on its way to the tables.
// Measured on the test server, the first load's tracked peak above its
// tables at 1e6 rows: 3.5 MB with a UInt16, 4.1 with a String of 4 to 32
// bytes (HASHED_ARRAY, whose growths stay under its final tables).
const (
	sourceReadBufferBytes = 3 << 20
	sourceReadBlocks      = 1
)

// sourceReadBytes is a load's read of rows of keyBytes key bytes and
// attrs: its buffers and sourceReadBlocks blocks of them (a String as its
// offset and its bytes, 26.7's ColumnString keeping no zero; a Nullable
// with its byte of null map).
func sourceReadBytes(keyBytes float64, attrs []dict.Attribute) int64 {
	row := keyBytes
	for _, a := range attrs {
		switch {
		case a.IsString():
			row += 8 + a.MeanLen()
		default:
			row += float64(a.Size)
		}
		if a.Nullable {
			row++
		}
	}
	return sourceReadBufferBytes + int64(sourceReadBlocks*dict.SourceBlockRows*row)
}

// model fills the figures, findings and advice.
func (d *Dictionary) model(v dict.Release) {
	if d.Findings == nil {
		d.Findings = []string{}
	}
	switch d.Status {
	case "FAILED", "FAILED_AND_RELOADING":
		d.Findings = append(d.Findings, "failed to load: "+text.Short(text.OneLine(d.LastException), 200))
	}
	cd, ok := modelledLayout(d.word)
	if !ok {
		d.NotModelled = "ClickHouse's " + text.OrDash(d.word) + ": not modelled (packlab models HASHED, SPARSE_HASHED, HASHED_ARRAY, their COMPLEX_KEY_ forms and FLAT)"
		return
	}
	if d.ElementCount == 0 {
		d.NotModelled = "holds no rows (" + strings.ToLower(d.Status) + "): nothing to model"
		switch d.Status {
		case "NOT_LOADED":
			// dictionaries_lazy_load, or a dictionary never asked for.
			d.NotModelled = "not loaded yet (ClickHouse loads it at its first use, or at SYSTEM RELOAD DICTIONARY): nothing to model"
		case "LOADING":
			d.NotModelled = "loading now, its first load: nothing to model yet (inspect again when it has loaded)"
		}
		return
	}
	attrs, problem := d.attributes()
	if problem != "" {
		d.NotModelled = problem
		return
	}
	if r := d.rowsRead(); r > d.ElementCount {
		for i, a := range attrs {
			if a.Nullable {
				// A key's NULL row goes to the set of NULL keys, its
				// other rows to the table: 3 rows a key, the first NULL,
				// modelled 67 % over bytes_allocated by its rows' share.
				d.NotModelled = fmt.Sprintf("its source gives %s rows for its %s keys (keys repeat), and which of a key's rows are NULL in its Nullable attribute %s is not known",
					text.Thousands(r), text.Thousands(d.ElementCount), at(d.AttributeNames, i))
				return
			}
		}
	}
	cur, problem := d.modelAs(cd, attrs, d.shards, d.mlf)
	if problem != "" {
		d.NotModelled = problem
		return
	}
	d.Modelled = true
	d.ModelBytes, d.RealBytes, d.ReloadPeakBytes = cur.model, cur.real, cur.reloadPeak
	if d.updateField() {
		d.Notes = append(d.Notes, "its source has an UPDATE_FIELD: it keeps the rows it loaded beside its tables (to merge the next update into), which the figures count; a reload's peak counts them twice (not measured)")
	}
	if r := d.rowsRead(); r > d.ElementCount {
		how := ""
		switch {
		case cd.Flat():
			how = ": FLAT keeps a String of every row read, as modelled"
		case d.updateField():
			how = ": with its UPDATE_FIELD it keeps every row read and reserves its table for them, as modelled"
		case d.shards <= 1 && cd.Model != core.LayoutHashedArray:
			how = ": its table is reserved block by block for the rows read, as modelled"
		}
		d.Notes = append(d.Notes, fmt.Sprintf("its source gives %s rows for its %s keys (keys repeat)%s", text.Thousands(r), text.Thousands(d.ElementCount), how))
	}
	if cur.note != "" {
		d.Notes = append(d.Notes, cur.note)
	}
	if d.sample != nil && d.sample.Problem == "" && d.sample.Rows < d.ElementCount {
		d.Notes = append(d.Notes, fmt.Sprintf("its source gives %s rows now, fewer than the %s keys it loaded: it changed since, and its figures are of the source as it is now",
			text.Thousands(d.sample.Rows), text.Thousands(d.ElementCount)))
	}
	if d.sample != nil && d.sample.Problem == "" && len(d.sample.MeanLen) > 0 {
		var parts []string
		for _, c := range d.stringColumns() {
			parts = append(parts, fmt.Sprintf("%s %.1f", c, d.sample.MeanLen[c]))
		}
		from := ""
		if d.sample.From != "" {
			from = " of " + d.sample.From
		}
		d.Notes = append(d.Notes, fmt.Sprintf("String mean lengths from %s source rows%s: %s bytes", text.Thousands(d.sample.Rows), from, strings.Join(parts, ", ")))
	}
	// The reload beside what the server holds: the serving copy is in it.
	if lim := d.ServerMemoryLimitBytes; lim > 0 {
		extra := d.ReloadPeakBytes - d.RealBytes
		if need := d.ServerTrackedBytes + extra; need > lim {
			d.Findings = append(d.Findings, fmt.Sprintf("a reload will not fit: it takes %s more at its peak (%s in all) beside the %s the server holds, over its limit of %s",
				text.Bytes(extra), text.Bytes(d.ReloadPeakBytes), text.Bytes(d.ServerTrackedBytes), text.Bytes(lim)))
		}
	}
	if d.shards > 1 && !cd.Flat() {
		if one, p := d.modelAs(cd, attrs, 1, d.mlf); p == "" && float64(cur.real) >= 1.5*float64(one.real) {
			d.Findings = append(d.Findings, fmt.Sprintf("SHARDS %d: its tables hold %s against %s in one reserved table (%.1fx): sharded tables are not reserved ahead of the load, each grew past its rows (load factor %.2f)",
				d.shards, text.Bytes(cur.real), text.Bytes(one.real), float64(cur.real)/float64(one.real), d.LoadFactor))
		}
	}
	d.advise(v, cd, attrs, cur)
}

// advise picks, among the layouts of the key's kind that the server's
// version builds, the one that holds the rows in the least memory, keeping
// the current one unless another saves a quarter.
func (d *Dictionary) advise(v dict.Release, cd dict.ClickHouseDictionary, attrs []dict.Attribute, cur figures) {
	best, bestWord := cur, cd.Layout
	why := ""
	if cd.Flat() && d.flatInitial > dict.FlatInitialArraySize {
		// Its arrays held for INITIAL_ARRAY_SIZE keys, more than it has.
		f, p := d.flatAs(attrs, dict.FlatInitialArraySize)
		if f, p = d.withLoadedBlock(cd, attrs, f, p); p == "" && float64(f.real) <= 0.75*float64(cur.real) {
			best = f
			d.Findings = append(d.Findings, fmt.Sprintf("INITIAL_ARRAY_SIZE %s holds its arrays for more keys than its largest (%s): %s without it, %.0f %% less than its %s",
				text.Thousands(d.flatInitial), text.Thousands(d.sample.MaxKey), text.Bytes(f.real), 100*(1-float64(f.real)/float64(cur.real)), text.Bytes(cur.real)))
			why = fmt.Sprintf("%s holds these %s rows in %s where %s takes %s; a reload peaks at %s instead of %s",
				f.clause, text.Thousands(d.ElementCount), text.Bytes(f.real), d.Layout, text.Bytes(cur.real), text.Bytes(f.reloadPeak), text.Bytes(cur.reloadPeak))
		}
	}
	if !cd.Flat() {
		for _, c := range dict.ClickHouseDictionaries() {
			if c.Flat() || c.ComplexKey != cd.ComplexKey || c.Layout == cd.Layout || !builds(v, c, d.shards) {
				continue
			}
			f, p := d.modelAs(c, attrs, d.shards, d.mlf)
			if p != "" || f.real <= 0 {
				continue
			}
			if float64(f.real) <= 0.75*float64(cur.real) && f.real < best.real {
				best, bestWord = f, c.Layout
			}
		}
	}
	switch {
	case bestWord != cd.Layout:
		d.Findings = append(d.Findings, fmt.Sprintf("%s holds the same rows in %s, %.0f %% less than %s's %s",
			bestWord, text.Bytes(best.real), 100*(1-float64(best.real)/float64(cur.real)), cd.Layout, text.Bytes(cur.real)))
		why = fmt.Sprintf("%s holds these %s rows in %s where %s takes %s; a reload peaks at %s instead of %s",
			bestWord, text.Thousands(d.ElementCount), text.Bytes(best.real), cd.Layout, text.Bytes(cur.real), text.Bytes(best.reloadPeak), text.Bytes(cur.reloadPeak))
	case why == "":
		why = fmt.Sprintf("%s is already the smallest layout for these rows that ClickHouse %s builds (another saves less than a quarter); a reload peaks at %s", cd.Layout, v, text.Bytes(cur.reloadPeak))
		// The dictionary's own clause, every parameter kept: written
		// again from the model's few (LAYOUT(SPARSE_HASHED(SHARDS 2))),
		// SHARD_LOAD_QUEUE_BACKLOG and FLAT's MAX_ARRAY_SIZE were dropped,
		// and every advice to change nothing was built as a change.
		if d.Layout != "" {
			best.clause = d.Layout
		}
	}
	if d.ServerMemoryLimitBytes > 0 {
		why += fmt.Sprintf(" against the server's limit of %s", text.Bytes(d.ServerMemoryLimitBytes))
	}
	if best.clause != d.Layout {
		// Memory is modelled, speed is not: a verification measured
		// SPARSE_HASHED's load at 1.4x HASHED's time (2e6 rows with a String).
		why += fmt.Sprintf("; how fast it loads is not modelled (%s loaded in %.2f s): a verification on the server measures it", cd.Layout, d.LoadingSeconds)
	}
	d.Advice = &Advice{Layout: best.clause, DDL: d.adviceDDL(best.clause), ModelBytes: best.model, SteadyBytes: best.real, ReloadPeakBytes: best.reloadPeak, Why: why}
}

// builds: whether release v builds c with shards (dict.Release.Builds,
// the lab's one table of what each release added). Before 23.5
// SPARSE_HASHED is sparse_hash_map, whose model is that table's estimate:
// it is not advised there.
func builds(v dict.Release, c dict.ClickHouseDictionary, shards int) bool {
	ok, _ := v.Builds(c.Model, core.Type{}, shards, 0)
	return ok
}

// adviceDDL is the dictionary's CREATE OR REPLACE DICTIONARY with the
// layout clause: the server's own statement with its LAYOUT replaced, or,
// for an XML dictionary, one written from what system.dictionaries shows.
func (d *Dictionary) adviceDDL(clause string) string {
	if d.DDL != "" {
		if sp, ok := dict.Clause(d.DDL, "LAYOUT"); ok {
			s := d.DDL[:sp.Start] + clause + d.DDL[sp.End:]
			if rest, ok := strings.CutPrefix(s, "CREATE DICTIONARY "); ok {
				s = "CREATE OR REPLACE DICTIONARY " + rest
			}
			return s
		}
	}
	var cols []string
	for i, n := range d.KeyNames {
		cols = append(cols, dict.QuoteIdent(n)+" "+at(d.KeyTypes, i))
	}
	for i, n := range d.AttributeNames {
		cols = append(cols, dict.QuoteIdent(n)+" "+at(d.AttributeTypes, i))
	}
	keys := make([]string, len(d.KeyNames))
	for i, n := range d.KeyNames {
		keys[i] = dict.QuoteIdent(n)
	}
	name := dict.QuoteIdent(d.Name)
	if d.Database != "" {
		name = dict.QuoteIdent(d.Database) + "." + name
	}
	src := strings.NewReplacer("*/", "* /", "\n", " ").Replace(d.Source)
	return fmt.Sprintf("CREATE OR REPLACE DICTIONARY %s\n(\n    %s\n)\nPRIMARY KEY %s\nSOURCE(/* as in %s: %s */)\nLIFETIME(MIN %d MAX %d)\n%s",
		name, strings.Join(cols, ",\n    "), strings.Join(keys, ", "), strings.NewReplacer("*/", "* /", "\n", " ").Replace(d.Origin), src, d.LifetimeMin, d.LifetimeMax, clause)
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "?"
}
