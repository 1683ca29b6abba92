package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/packlab/packlab/core"
)

// ClickHouse's own dictionaries in the lab: not packlab's models of them
// but ClickHouse itself, embedded as a library (chDB's libchdb.so, which
// `make chdb` fetches), in a C++ worker of its own, packlab-ch (its source
// is reference/chdb/ at the repository's top). The lab streams it the rows
// of the run's own key source and the read phase's keys in the lab's order,
// as it does a C++ reference map (reference_run.go); the worker writes them
// as the dictionary's FILE source, creates the dictionary with the DDL the
// lab wrote (DictionaryDDL, the code that prints the plan's), loads it with
// SYSTEM RELOAD DICTIONARY and reads it with dictGet over a column of the
// keys. What ClickHouse's system.dictionaries says fills the fields every
// result has (bytes_allocated, element_count, load_factor); packlab's
// computed bytes for the same dictionary sit beside it (ClickHouseRun).
//
// Keys as ClickHouse keeps them: a simple-key dictionary keeps every key as
// UInt64, whatever the key column's type (a narrower key is widened, a
// UInt128 key cut to its low 64 bits); the COMPLEX_KEY_ layouts keep the
// key serialized in an arena, a reference to it and its hash in each cell.

// ClickHouseDictionary is one of ClickHouse's dictionary layouts as the lab
// runs it.
type ClickHouseDictionary struct {
	Name       string `json:"name"`        // as --layout takes it: ch_hashed
	Layout     string `json:"layout"`      // ClickHouse's word: HASHED, COMPLEX_KEY_SPARSE_HASHED
	ComplexKey bool   `json:"complex_key"` // the key serialized in an arena, not widened to UInt64
	Doc        string `json:"doc"`         // one line: what ClickHouse builds

	model core.Layout // packlab's table of the same shape (a simple key)
}

var clickHouseDictionaries = []ClickHouseDictionary{
	{Name: "ch_hashed", Layout: "HASHED", model: core.LayoutHashed,
		Doc: "ClickHouse's HASHED: a HashMap of padded cells, the key as UInt64"},
	{Name: "ch_sparse_hashed", Layout: "SPARSE_HASHED", model: core.LayoutPacked,
		Doc: "ClickHouse's SPARSE_HASHED: PackedHashMap for a value of at most 8 bytes (23.5+), sparse_hash_map otherwise"},
	{Name: "ch_hashed_array", Layout: "HASHED_ARRAY", model: core.LayoutHashedArray,
		Doc: "ClickHouse's HASHED_ARRAY: a key-to-row HashMap and an array of values"},
	{Name: "ch_flat", Layout: "FLAT",
		Doc: "ClickHouse's FLAT: an array per attribute indexed by the key (sequential or range:M keys, below MAX_ARRAY_SIZE)"},
	{Name: "ch_complex_key_hashed", Layout: "COMPLEX_KEY_HASHED", ComplexKey: true, model: core.LayoutHashed,
		Doc: "ClickHouse's COMPLEX_KEY_HASHED: the key serialized in an arena, a reference and its hash in each cell"},
	{Name: "ch_complex_key_sparse_hashed", Layout: "COMPLEX_KEY_SPARSE_HASHED", ComplexKey: true, model: core.LayoutSparse,
		Doc: "ClickHouse's COMPLEX_KEY_SPARSE_HASHED: sparse_hash_map of references into a key arena"},
	{Name: "ch_complex_key_hashed_array", Layout: "COMPLEX_KEY_HASHED_ARRAY", ComplexKey: true, model: core.LayoutHashedArray,
		Doc: "ClickHouse's COMPLEX_KEY_HASHED_ARRAY: a key-to-row map over an arena of keys, and an array of values"},
}

// ClickHouseDictionaries lists ClickHouse's layouts, in the order the lab
// shows them.
func ClickHouseDictionaries() []ClickHouseDictionary {
	return append([]ClickHouseDictionary(nil), clickHouseDictionaries...)
}

// FindClickHouseDictionary finds a ClickHouse layout by its lab name (as
// ParseLayout reads names: case and '-' for '_' do not matter).
func FindClickHouseDictionary(name string) (ClickHouseDictionary, bool) {
	n := core.LayoutKey(name)
	for _, d := range clickHouseDictionaries {
		if d.Name == n {
			return d, true
		}
	}
	return ClickHouseDictionary{}, false
}

// IsClickHouse reports whether a result's layout name is one of
// ClickHouse's own dictionaries.
func IsClickHouse(layout string) bool {
	_, ok := FindClickHouseDictionary(layout)
	return ok
}

func clickHouseNames() string {
	names := make([]string, len(clickHouseDictionaries))
	for i, d := range clickHouseDictionaries {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}

// takesMaxLoadFactor: HASHED_ARRAY's key index is ClickHouse's plain
// HashMap, which has no MAX_LOAD_FACTOR.
func (d ClickHouseDictionary) takesMaxLoadFactor() bool {
	return d.model != core.LayoutHashedArray && !d.flat()
}

// Clause is d's LAYOUT clause for shards and mlf, parameters written only
// where they differ from ClickHouse's defaults: LAYOUT(HASHED()),
// LAYOUT(SPARSE_HASHED(SHARDS 4 MAX_LOAD_FACTOR 0.9)).
func (d ClickHouseDictionary) Clause(shards int, mlf float64) string {
	return layoutClause(d.Layout, shards, mlf, d.takesMaxLoadFactor())
}

// layoutClause writes LAYOUT(NAME(params)), SHARDS and MAX_LOAD_FACTOR only
// where they differ from ClickHouse's defaults (1, 0.5).
func layoutClause(name string, shards int, mlf float64, takesMLF bool) string {
	var params []string
	if shards > 1 {
		params = append(params, fmt.Sprintf("SHARDS %d", shards))
	}
	if takesMLF && mlf != 0 && mlf != core.DefaultMaxLoadFactor {
		params = append(params, "MAX_LOAD_FACTOR "+FormatFloat(mlf))
	}
	return "LAYOUT(" + name + "(" + strings.Join(params, " ") + "))"
}

// DictionaryDDL is the CREATE DICTIONARY statement of a dictionary named
// name with key column keyType, attribute columns ("value UInt16", ...),
// source (a SOURCE(...) clause) and layout (a LAYOUT(...) clause): the plan
// prints it for the user, and the lab runs it in ClickHouse.
func DictionaryDDL(name, keyType string, columns []string, source, layout string) string {
	return fmt.Sprintf("CREATE DICTIONARY %s\n(\n    key %s,\n    %s\n)\nPRIMARY KEY key\n%s\nLIFETIME(0)\n%s",
		name, keyType, strings.Join(columns, ",\n    "), source, layout)
}

// dictKeyType is the key column of d's dictionary for the lab's key type:
// UInt64 for a simple key (ClickHouse keeps it so whatever the column), the
// type itself for a complex one.
func (d ClickHouseDictionary) dictKeyType(key core.Type) core.Type {
	if d.ComplexKey {
		return key
	}
	return core.MustType("UInt64")
}

// Where the worker is, and how to get it.
const (
	// ClickHouseBuildCommand is the one command that fetches ClickHouse
	// (chDB's libchdb.so) and builds the worker that runs it.
	ClickHouseBuildCommand = "make chdb"
	// ClickHouseWorkerEnv, when set, is the path of the worker to use.
	ClickHouseWorkerEnv = "PACKLAB_CH_WORKER"
	// ClickHouseWorkerName is the worker's file name: bin/packlab-ch beside
	// bin/packlab, or on PATH.
	ClickHouseWorkerName = "packlab-ch"
	// chProtocol is reference/chdb/worker.cpp's kProtocol.
	chProtocol = 4
	// The names the worker gives the dictionary and its source file.
	chDictName   = "packlab_dict"
	chSourceFile = "rows.bin"
	// chAttributesFile is the source of a dictionary of several attributes,
	// which ClickHouse writes from chSourceFile (attributesSQL).
	chAttributesFile = "attributes.bin"
)

// ClickHouseStatus says whether ClickHouse's dictionaries can run here.
type ClickHouseStatus struct {
	Available bool   `json:"available"`
	Path      string `json:"path,omitempty"`    // the worker
	Version   string `json:"version,omitempty"` // SELECT version(): 26.7.2.1
	Problem   string `json:"problem,omitempty"` // why not, ending with how to get it
}

var chCache struct {
	sync.Mutex
	key    string
	status ClickHouseStatus
}

// ClickHouseStatusNow finds the worker ($PACKLAB_CH_WORKER, else
// packlab-ch beside this program, else on PATH) and asks it which
// ClickHouse it holds (packlab-ch --describe starts ClickHouse: about a
// second); the answer is kept while the file does not change. In the
// browser ClickHouse never runs.
func ClickHouseStatusNow() ClickHouseStatus {
	if runtime.GOOS == "js" {
		return ClickHouseStatus{Problem: "the browser lab runs packlab's Go layouts only; ClickHouse's own dictionaries run in the desktop lab and 'packlab run' (get them there with: " + ClickHouseBuildCommand + ")"}
	}
	path, problem := findWorkerBinary(ClickHouseWorkerEnv, ClickHouseWorkerName, "ClickHouse's own dictionaries", ClickHouseBuildCommand)
	if problem != "" {
		return ClickHouseStatus{Problem: problem}
	}
	st, err := os.Stat(path)
	if err != nil {
		return ClickHouseStatus{Path: path, Problem: fmt.Sprintf("%s: %v; get it with: %s", path, core.PathErrorReason(err), ClickHouseBuildCommand)}
	}
	key := fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())
	chCache.Lock()
	defer chCache.Unlock()
	if chCache.key != key {
		chCache.key, chCache.status = key, describeClickHouse(path)
	}
	return chCache.status
}

func describeClickHouse(path string) ClickHouseStatus {
	st := ClickHouseStatus{Path: path}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--describe")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var d struct {
		Protocol   int    `json:"protocol"`
		ClickHouse string `json:"clickhouse"`
		Error      string `json:"error"`
	}
	if err == nil {
		err = json.Unmarshal(bytes.TrimSpace(out), &d)
	}
	if err == nil && d.Error != "" {
		err = fmt.Errorf("%s", d.Error)
	}
	if err != nil {
		why := err.Error()
		if s := strings.TrimSpace(stderr.String()); s != "" {
			why += ": " + strings.SplitN(s, "\n", 2)[0]
		}
		st.Problem = fmt.Sprintf("%s --describe failed (%s); rebuild it with: %s", path, why, ClickHouseBuildCommand)
		return st
	}
	if d.Protocol != chProtocol {
		st.Problem = fmt.Sprintf("%s speaks protocol %d, this packlab %d; rebuild it with: %s", path, d.Protocol, chProtocol, ClickHouseBuildCommand)
		return st
	}
	st.Version, st.Available = d.ClickHouse, true
	return st
}

// findWorkerBinary finds a worker program: $env, else name beside this
// program, else on PATH; problem says why not and how to build it.
func findWorkerBinary(env, name, what, build string) (path, problem string) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("%s=%s: %v; build %s with: %s", env, p, core.PathErrorReason(err), what, build)
		}
		return p, ""
	}
	var beside string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		beside = filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, ""
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, ""
	}
	where := "on PATH"
	if beside != "" {
		where = "at " + beside + " or on PATH"
	}
	return "", fmt.Sprintf("%s are not built (no %s %s); build them with: %s", what, name, where, build)
}

// ClickHouseDictionaryFor is the simple-key ClickHouse dictionary that
// builds packlab's table l (SPARSE_HASHED's sparse_hash_map for sparse).
func ClickHouseDictionaryFor(l core.Layout) (ClickHouseDictionary, bool) {
	for _, d := range clickHouseDictionaries {
		if !d.ComplexKey && (d.model == l || d.Name == "ch_sparse_hashed" && l == core.LayoutSparse) {
			return d, true
		}
	}
	return ClickHouseDictionary{}, false
}
