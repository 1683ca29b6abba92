package worker

import "time"

// Progress is a running measurement's state, as a progress bar draws it.
type Progress struct {
	Layout    string  `json:"layout"`
	Repeat    int     `json:"repeat"`     // 1-based: which measured load (a run's repeat) of the whole job this is
	Repeats   int     `json:"repeats"`    // measured loads in the whole job (layouts x repeats, or a sweep's)
	Phase     string  `json:"phase"`      // "count", "settle", "load", "read" or "done"
	Rows      int64   `json:"rows"`       // rows loaded so far
	TotalRows int64   `json:"total_rows"` // rows the source will give, or -1 if unknown
	Seconds   float64 `json:"seconds"`    // since the load started; settle: settled so far
	RSSBytes  int64   `json:"rss_bytes"`  // resident memory now minus the baseline; 0 if unknown
	// SettleSeconds is, while it settles, how long the job idles before
	// the load (Config.SettleSeconds).
	SettleSeconds float64 `json:"settle_seconds,omitempty"`
}

// Phases of a Progress.
const (
	PhaseCount  = "count"  // before the runs: a file source read through for its row count (the guard's)
	PhaseSettle = "settle" // before a load: idle for Config.SettleSeconds
	PhaseLoad   = "load"
	PhaseRead   = "read"
	PhaseDone   = "done"
)

// CountProgressEvery is the period of a count's progress: a file read
// through before the runs, or again for ClickHouse's source.
var CountProgressEvery = 200 * time.Millisecond
