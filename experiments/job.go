package experiments

// Jobs: what a person asked for in one go — one `packlab run`, one `packlab
// sweep`, one Run in the desktop or browser lab — with the results it
// measured. A job is not a file of its own: every result names its job
// (Result.Job), so a job is the results that name it, saved and deleted with
// them, and a crash never leaves a job without its results or the reverse.
//
// Results saved before jobs existed name none. They still load: Jobs groups
// them by time into jobs of their own (Legacy), one per burst of results
// measured back to back on one machine.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/packlab/packlab/core"
)

// Job names one job; every result it measured carries it.
type Job struct {
	ID        string `json:"id"`         // unique, sortable by start: 20261201T104000.123Z-3f2a
	Name      string `json:"name"`       // what was asked: "run packed,hashed 1e7", "sweep types"
	StartedAt string `json:"started_at"` // RFC 3339, UTC
	Face      string `json:"face"`       // FaceCLI, FaceDesktop, FaceBrowser, or "" (a program using the library)
}

// The faces a job is started from.
const (
	FaceCLI     = "command line"
	FaceDesktop = "desktop"
	FaceBrowser = "browser"
)

// NewJob starts a job named name, from face, at t.
func NewJob(name, face string, t time.Time) Job {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return Job{
		ID:        t.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:]),
		Name:      name,
		StartedAt: t.UTC().Format(time.RFC3339),
		Face:      face,
	}
}

// RunJobName names a run of cfg as a person would say it: "run
// packed,hashed 1e7", "run sparse dict.tsv.gz", "run all layouts 1e6
// UInt32→UInt8 shards 4". Settings left at their defaults are not named.
func RunJobName(cfg Config) string {
	layouts := "all layouts"
	if len(cfg.Layouts) > 0 {
		layouts = strings.Join(cfg.Layouts, ",")
	}
	return "run " + layouts + settingsName(cfg, true)
}

// SweepJobName names a sweep: "sweep types", "sweep types 1e5", "sweep
// shards packed 2e6". Rows appear when given, layouts when chosen.
func SweepJobName(sweep string, cfg Config) string {
	name := "sweep " + sweep
	if len(cfg.Layouts) > 0 {
		name += " " + strings.Join(cfg.Layouts, ",")
	}
	return name + settingsName(cfg, false)
}

// settingsName is the part of a job's name after its layouts: the rows (or
// the file) and each setting that is not its default.
func settingsName(cfg Config, rowsByDefault bool) string {
	var parts []string
	switch {
	case cfg.Source != "":
		parts = append(parts, filepath.Base(cfg.Source))
	case cfg.Rows > 0:
		parts = append(parts, shortRows(cfg.Rows))
	case rowsByDefault:
		parts = append(parts, shortRows(DefaultRows))
	}
	if cfg.Source == "" && cfg.Keys != "" && cfg.Keys != DefaultKeys {
		parts = append(parts, cfg.Keys)
	}
	if cfg.Key != "" || cfg.Value != "" {
		k, v := cmpOr(cfg.Key, DefaultKey), cmpOr(cfg.Value, DefaultValue)
		if k != DefaultKey || v != DefaultValue {
			parts = append(parts, k+"→"+v)
		}
	}
	if cfg.Shards > 1 {
		parts = append(parts, "shards "+strconv.Itoa(cfg.Shards))
	}
	if cfg.MaxLoadFactor != 0 && cfg.MaxLoadFactor != core.DefaultMaxLoadFactor {
		parts = append(parts, "mlf "+FormatFloat(cfg.MaxLoadFactor))
	}
	if on, ok := hugePagesOn(cfg.HugePages); ok && !on {
		parts = append(parts, "hugepages off")
	}
	if cfg.Preallocate {
		parts = append(parts, "preallocate")
	}
	if cfg.SettleSeconds > 0 {
		parts = append(parts, "settle "+FormatFloat(cfg.SettleSeconds)+"s")
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// shortRows writes a row count as people type it: 1e7, 2.5e6, 12345.
func shortRows(n int64) string {
	for exp := 18; exp >= 3; exp-- {
		p := int64(1)
		for range exp {
			p *= 10
		}
		if n < p {
			continue
		}
		if n%(p/10) == 0 { // at most two significant digits
			return strconv.FormatFloat(float64(n)/float64(p), 'f', -1, 64) + "e" + strconv.Itoa(exp)
		}
		break
	}
	return strconv.FormatInt(n, 10)
}

// CalibrationJobPrefix starts the name of every planner's calibration job
// (CalibrationJobName): runs the planner made to measure speeds, not runs a
// person asked for.
const CalibrationJobPrefix = "plan calibration"

// Calibration says whether the job is a planner's calibration.
func (j Job) Calibration() bool { return strings.HasPrefix(j.Name, CalibrationJobPrefix) }

// LastAsked is the newest of jobs (newest first, as Jobs returns them) that
// a person asked for: the first that is not a planner's calibration, or
// the first when all are. ok is false when jobs is empty.
func LastAsked(jobs []JobResults) (j JobResults, ok bool) {
	if len(jobs) == 0 {
		return JobResults{}, false
	}
	if i := slices.IndexFunc(jobs, func(j JobResults) bool { return !j.Calibration() }); i >= 0 {
		return jobs[i], true
	}
	return jobs[0], true
}

// JobResults is one job and its results, in the order they were measured.
type JobResults struct {
	Job
	// Legacy: the results name no job (saved before jobs existed); Jobs
	// grouped them by time, and ID and Name describe the group.
	Legacy  bool     `json:"legacy"`
	Results []Result `json:"results"`
}

// ResultIDs lists the job's result ids, in the order they were measured.
func (j JobResults) ResultIDs() []string {
	ids := make([]string, len(j.Results))
	for i, r := range j.Results {
		ids[i] = r.ID
	}
	return ids
}

// legacyGap: results without a job belong to one group while each started
// within this long of the one before it ending (its id is taken when it
// ends); a longer pause starts a new group.
const legacyGap = time.Minute

// Jobs groups results into their jobs, newest job first (by the time each
// started); each job's results in the order they were measured. Results
// that name no job are grouped by time (see legacyGap) and host.
func Jobs(results []Result) []JobResults {
	byID := map[string]int{}
	var jobs []JobResults
	var legacy []Result
	for _, r := range results {
		if r.Job == nil || r.Job.ID == "" {
			legacy = append(legacy, r)
			continue
		}
		i, ok := byID[r.Job.ID]
		if !ok {
			i = len(jobs)
			byID[r.Job.ID] = i
			jobs = append(jobs, JobResults{Job: *r.Job})
		}
		jobs[i].Results = append(jobs[i].Results, r)
	}
	jobs = append(jobs, legacyJobs(legacy)...)
	for i := range jobs {
		slices.SortStableFunc(jobs[i].Results, func(a, b Result) int { return strings.Compare(a.ID, b.ID) })
	}
	slices.SortStableFunc(jobs, func(a, b JobResults) int {
		if c := compareTimes(b.StartedAt, a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return jobs
}

// compareTimes orders two RFC 3339 times; one that does not parse sorts
// before any that does.
func compareTimes(a, b string) int {
	ta, ea := time.Parse(time.RFC3339, a)
	tb, eb := time.Parse(time.RFC3339, b)
	switch {
	case ea != nil && eb != nil:
		return strings.Compare(a, b)
	case ea != nil:
		return -1
	case eb != nil:
		return 1
	}
	return ta.Compare(tb)
}

// legacyJobs groups results that name no job: in the order they were
// measured, a result starts a new group when it started more than
// legacyGap after the previous one ended, or on another machine.
func legacyJobs(results []Result) []JobResults {
	slices.SortStableFunc(results, func(a, b Result) int { return strings.Compare(a.ID, b.ID) })
	var jobs []JobResults
	var lastEnd time.Time
	for i, r := range results {
		start, err := time.Parse(time.RFC3339, r.StartedAt)
		if err != nil {
			start = idTime(r.ID)
		}
		if i == 0 || start.IsZero() || lastEnd.IsZero() || start.Sub(lastEnd) > legacyGap || r.Host != results[i-1].Host || r.Runtime != results[i-1].Runtime {
			jobs = append(jobs, JobResults{Legacy: true, Job: Job{ID: "no-job-" + r.ID, StartedAt: r.StartedAt}})
		}
		j := &jobs[len(jobs)-1]
		j.Results = append(j.Results, r)
		if end := idTime(r.ID); !end.IsZero() {
			lastEnd = end
		} else {
			lastEnd = start
		}
	}
	for i := range jobs {
		jobs[i].Name = "saved before jobs: " + describeResults(jobs[i].Results)
		if jobs[i].Results[0].Runtime == "browser" {
			jobs[i].Face = FaceBrowser
		}
	}
	return jobs
}

// idTime is the time a result id starts with (when it was measured), or
// the zero time.
func idTime(id string) time.Time {
	stamp, _, _ := strings.Cut(id, "-")
	t, err := time.Parse("20060102T150405.000Z", stamp)
	if err != nil {
		return time.Time{}
	}
	return t
}

// describeResults says in a few words what results hold: "packed, hashed ·
// UInt64→UInt16 · 100K rows", with "…" after the first few of each.
func describeResults(rs []Result) string {
	var layouts, types, rows []string
	for _, r := range rs {
		layouts = addOnce(layouts, r.Layout)
		types = addOnce(types, r.KeyType+"→"+r.ValueType)
		rows = addOnce(rows, FormatRows(r.Rows))
	}
	few := func(list []string) string {
		if len(list) > 3 {
			return strings.Join(list[:3], ", ") + fmt.Sprintf(" and %d more", len(list)-3)
		}
		return strings.Join(list, ", ")
	}
	return few(layouts) + " · " + few(types) + " · " + few(rows) + " rows"
}

// DescribeJob is a job's summary line: "2 results · packed, hashed ·
// UInt64→UInt16 · 100K rows".
func DescribeJob(j JobResults) string {
	n := "results"
	if len(j.Results) == 1 {
		n = "result"
	}
	return fmt.Sprintf("%s %s · %s", GroupThousands(int64(len(j.Results))), n, describeResults(j.Results))
}

func addOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
