package store

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

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

// JobResults is one job and its results, in the order they were measured,
// or a saved inspection of a user's ClickHouse (Inspection set, no
// results).
type JobResults struct {
	result.Job
	// Legacy: the results name no job (saved before jobs existed); Jobs
	// grouped them by time, and ID and Name describe the group.
	Legacy  bool            `json:"legacy"`
	Results []result.Result `json:"results"`
	// Inspection is what an inspection job found (Store.Inspections); nil
	// for a job of runs.
	Inspection *server.Inspection `json:"inspection,omitempty"`
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
func Jobs(results []result.Result) []JobResults {
	byID := map[string]int{}
	var jobs []JobResults
	var legacy []result.Result
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
		slices.SortStableFunc(jobs[i].Results, func(a, b result.Result) int { return strings.Compare(a.ID, b.ID) })
	}
	sortJobs(jobs)
	return jobs
}

// sortJobs orders jobs newest first, by the time each started.
func sortJobs(jobs []JobResults) {
	slices.SortStableFunc(jobs, func(a, b JobResults) int {
		if c := compareTimes(b.StartedAt, a.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
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
func legacyJobs(results []result.Result) []JobResults {
	slices.SortStableFunc(results, func(a, b result.Result) int { return strings.Compare(a.ID, b.ID) })
	var jobs []JobResults
	var lastEnd time.Time
	for i, r := range results {
		start, err := time.Parse(time.RFC3339, r.StartedAt)
		if err != nil {
			start = idTime(r.ID)
		}
		if i == 0 || start.IsZero() || lastEnd.IsZero() || start.Sub(lastEnd) > legacyGap || r.Host != results[i-1].Host || r.Runtime != results[i-1].Runtime {
			jobs = append(jobs, JobResults{Legacy: true, Job: result.Job{ID: "no-job-" + r.ID, StartedAt: r.StartedAt}})
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
			jobs[i].Face = result.FaceBrowser
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
func describeResults(rs []result.Result) string {
	var layouts, types, rows []string
	for _, r := range rs {
		layouts = addOnce(layouts, r.Layout)
		types = addOnce(types, r.KeyType+"→"+r.ValueType)
		rows = addOnce(rows, text.Rows(r.Rows))
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
	if ins := j.Inspection; ins != nil {
		return DescribeInspection(ins)
	}
	n := "results"
	if len(j.Results) == 1 {
		n = "result"
	}
	return fmt.Sprintf("%s %s · %s", text.Thousands(int64(len(j.Results))), n, describeResults(j.Results))
}

// DescribeInspection is an inspection job's summary line: "inspection ·
// ClickHouse 26.7 · 1 node · 12 dictionaries · 3 findings".
func DescribeInspection(ins *server.Inspection) string {
	findings := len(ins.Findings)
	for _, d := range ins.Dictionaries {
		findings += len(d.Findings)
	}
	return fmt.Sprintf("inspection · ClickHouse %s · %s · %s · %s", text.OrDash(ins.Release),
		count(len(ins.Nodes), "node", "nodes"), count(len(ins.Dictionaries), "dictionary", "dictionaries"), count(findings, "finding", "findings"))
}

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return text.Thousands(int64(n)) + " " + many
}

func addOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
