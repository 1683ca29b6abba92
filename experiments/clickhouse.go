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

	"github.com/packlab/packlab/core/source"
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
		return ClickHouseStatus{Path: path, Problem: fmt.Sprintf("%s: %v; get it with: %s", path, source.PathErrorReason(err), ClickHouseBuildCommand)}
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
			return "", fmt.Sprintf("%s=%s: %v; build %s with: %s", env, p, source.PathErrorReason(err), what, build)
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
