package planner

// The planner's answer as text: the ClickHouse dictionary and the Go code
// of a setup, and the plan as every face shows it (Details); the write
// package writes it in the command line's formats.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner/snippet"
	"github.com/packlab/packlab/experiments/text"
)

// createDictionary is the CREATE DICTIONARY statement of c over from
// (snippet.CreateDictionary), or "" when no ClickHouse dictionary builds
// c's table.
func createDictionary(c Candidate, from *dict.TableSource) string {
	if c.ClickHouseLayout == "" {
		return ""
	}
	columns := []string{"value " + c.ValueType}
	if len(c.columns) > 0 {
		columns = c.columns
	}
	return snippet.CreateDictionary(from, c.KeyType, c.ComplexKey, columns, c.ClickHouseLayout)
}

// goCode is the Go program that builds c's map (snippet.GoProgram), or ""
// where core's tables cannot build it: a row (several attributes, or a
// String or Nullable), or FLAT.
func goCode(c Candidate) string {
	if len(c.Attributes) > 1 || strings.HasSuffix(c.Layout, dict.RowSuffix) || c.Layout == FlatLayout {
		return ""
	}
	g := snippet.GoSetup{Name: SetupName(c), KeyType: c.KeyType, ValueType: c.ValueType, Layout: c.Layout, Shards: c.Shards}
	if c.FollowsMLF && c.MaxLoadFactor != core.DefaultMaxLoadFactor {
		g.MaxLoadFactor = c.MaxLoadFactor
	}
	if c.Preallocate {
		g.Reserve = c.Distinct
	}
	return snippet.GoProgram(g)
}

// PlanTable is the human table of a plan: for each layout up to three of
// its setups, each at the shard count that ranks first for its load factor:
// the layout's best, its smallest that fits the budget, and its largest (the
// lowest load factor, often the default and the fastest to read); where two
// of those are one, the setup whose steady bytes lie nearest halfway between
// the smallest and the largest. The three best-ranked load factors alone
// would say one thing three times (0.5, 0.51, 0.52 when reads rank first)
// and hide what a dense layout is for. Rows are in rank order; JSON and CSV
// list every setup.
func PlanTable(plan Plan) (header []string, numeric []bool, rows [][]string) {
	header = []string{"rank", "runs in", "setup", "steady", "first load", "reload", perKeyWords(plan), "load (range)", "read M rows/s (range)", "fits", "why"}
	numeric = []bool{true, false, false, true, true, true, true, true, true, false, false}
	for _, c := range planTableSetups(plan.Candidates) {
		fits := "no"
		if c.Fits {
			fits = "yes"
		}
		runs := "Go"
		if engineOf(c) == EngineClickHouse {
			runs = "ClickHouse"
		}
		if c.Answer != "" {
			runs += " (answer)"
		}
		rows = append(rows, []string{
			strconv.Itoa(c.Rank), runs, SetupName(c), text.Bytes2(c.SteadyBytes), text.Bytes2(c.PeakBytes), text.Bytes2(c.ReloadPeakBytes),
			perPair(c), loadCell(c), readCell(c), fits, c.Why,
		})
	}
	return header, numeric, rows
}

// planTableSetups picks PlanTable's rows from the ranked candidates.
func planTableSetups(ranked []Candidate) []Candidate {
	// The best-ranked setup of each (layout, load factor), per layout in rank order.
	seen := map[string]bool{}
	var layouts []string
	byLayout := map[string][]int{}
	for i, c := range ranked {
		group := engineOf(c) + "|" + c.Layout + "|" + text.Float(c.MaxLoadFactor)
		if seen[group] {
			continue
		}
		seen[group] = true
		kind := engineOf(c) + "|" + c.Layout
		if byLayout[kind] == nil {
			layouts = append(layouts, kind)
		}
		byLayout[kind] = append(byLayout[kind], i)
	}
	var picked []int
	for _, l := range layouts {
		reps := byLayout[l]
		best, dense, large := reps[0], reps[0], reps[0]
		for _, i := range reps {
			if ranked[i].Fits && ranked[i].SteadyBytes < ranked[dense].SteadyBytes {
				dense = i
			}
			if ranked[i].SteadyBytes > ranked[large].SteadyBytes {
				large = i
			}
		}
		mine := []int{best}
		for _, i := range []int{dense, large} {
			if !slices.Contains(mine, i) {
				mine = append(mine, i)
			}
		}
		if len(mine) < 3 {
			lo, hi := ranked[dense].SteadyBytes, ranked[large].SteadyBytes
			half, between := lo+(hi-lo)/2, -1
			for _, i := range reps {
				if v := ranked[i].SteadyBytes; v > lo && v < hi && !slices.Contains(mine, i) &&
					(between < 0 || max(v-half, half-v) < max(ranked[between].SteadyBytes-half, half-ranked[between].SteadyBytes)) {
					between = i
				}
			}
			if between >= 0 {
				mine = append(mine, between)
			}
		}
		picked = append(picked, mine...)
	}
	slices.Sort(picked)
	out := make([]Candidate, len(picked))
	for j, i := range picked {
		out[j] = ranked[i]
	}
	return out
}

// loadCell is a setup's load time with its range: "1m05s (58.1 s–1m12s)".
func loadCell(c Candidate) string {
	s := text.Seconds(c.LoadSeconds)
	if c.LoadSeconds != nil && c.LoadRange != nil {
		d := float64(c.Distinct)
		s += " (" + text.Seconds(ptr(d/c.LoadRange[1])) + "–" + text.Seconds(ptr(d/c.LoadRange[0])) + ")"
	}
	return s
}

// readCell is a setup's read speed in M rows/s with its range: "25.10 (22.01–27.30)".
func readCell(c Candidate) string {
	if c.ReadRowsPerSecond == nil {
		return "-"
	}
	m := func(v float64) string { return strconv.FormatFloat(v/1e6, 'f', 2, 64) }
	s := m(*c.ReadRowsPerSecond)
	if c.ReadRange != nil {
		s += " (" + m(c.ReadRange[0]) + "–" + m(c.ReadRange[1]) + ")"
	}
	return s
}

// PlanHeadline is the plan's first line: what was asked.
func PlanHeadline(plan Plan) string {
	r := plan.Request
	where := "a native run"
	if r.Runtime == RuntimeBrowser {
		where = "this browser's wasm memory"
	}
	// The types as given, but for the spaces around them (" UInt16" was
	// "<UInt64,  UInt16>"); an error shows them exactly.
	value := strings.TrimSpace(r.Value)
	if len(r.Attributes) > 1 {
		value = strings.Join(r.Attributes, ", ")
	}
	rows := text.Rows(r.Rows) + " rows"
	if g := r.Growth(); g > 0 {
		rows += fmt.Sprintf(" (%s keys after %s %% growth)", text.Rows(plannedRows(r.Rows, g)), text.Float(g))
	}
	return fmt.Sprintf("%s of <%s, %s> in %s (%s), checked at a %s, prefer %s, for %s, %d loader thread(s)",
		rows, strings.TrimSpace(r.Key), value, text.Bytes(plan.BudgetBytes), plan.BudgetFrom, plan.Checked, r.Prefer, where, r.Threads)
}

// PlanSnippet is text the plan offers to copy: a ClickHouse statement or
// Go code, or (Lang "") only a note.
type PlanSnippet struct {
	Title string `json:"title"`
	Lang  string `json:"lang"` // "sql", "go", or "" for a note alone
	Text  string `json:"text"`
	Note  string `json:"note"`
}

// PlanAnswer is one of the plan's two answers as every face shows it.
type PlanAnswer struct {
	For     string      `json:"for"`   // EngineClickHouse or EngineGo
	Title   string      `json:"title"` // "In ClickHouse 26.7", "In Go (packlab's core)"
	Rank    int         `json:"rank"`  // its rank among every setup
	Setup   string      `json:"setup"` // "SPARSE_HASHED(SHARDS 8)", "compact SHARDS 1 MLF 0.9"
	Fits    bool        `json:"fits"`
	Line    string      `json:"line"`    // the answer in one line (Plan.Answer's part)
	Why     string      `json:"why"`     // why it won
	Lines   []string    `json:"lines"`   // its figures, a line each
	Snippet PlanSnippet `json:"snippet"` // its CREATE DICTIONARY or Go code
}

// PlanDetails is a plan as every face shows it: lines and snippets, worded
// once here for the command line, the desktop and the browser.
type PlanDetails struct {
	Headline  string       `json:"headline"` // what was asked
	Answer    string       `json:"answer"`   // one line: both answers
	Answers   []PlanAnswer `json:"answers"`  // ClickHouse's first, then Go's (one with For)
	Rule      string       `json:"rule"`     // how the plan decides
	RunnersUp []string     `json:"runners_up"`
	// Snippets are the answers' snippets again, for faces that list them
	// apart.
	Snippets []PlanSnippet `json:"snippets"`
	RuledOut []string      `json:"ruled_out"` // layouts no Go setup of which fits
	// Front is the setups no other beats on memory, load and read
	// (Plan.FrontLines), least memory first.
	Front      []string   `json:"front"`
	HowMade    []string   `json:"how_made"` // where the figures come from
	TableTitle string     `json:"table_title"`
	Header     []string   `json:"header"`
	Numeric    []bool     `json:"numeric"`
	Rows       [][]string `json:"rows"`
}

// Details words the plan for a face; with for set (EngineClickHouse or
// EngineGo) only that answer and that engine's setups.
func (plan Plan) Details() PlanDetails {
	d := PlanDetails{Headline: PlanHeadline(plan), Answer: plan.Answer, Rule: plan.Rule, RuledOut: plan.RuledOut}
	show := func(engine string) bool { return plan.Request.For == "" || plan.Request.For == engine }
	var lines []string
	for _, c := range []*Candidate{plan.BestClickHouse(), plan.BestGo()} {
		if c == nil || !show(engineOf(*c)) {
			continue
		}
		a := answerOf(plan, *c)
		d.Answers = append(d.Answers, a)
		d.Snippets = append(d.Snippets, a.Snippet)
		lines = append(lines, a.Line)
	}
	d.Answer = strings.Join(lines, "; ")
	if d.Answer == "" {
		d.Answer = plan.Answer
	}
	for _, l := range plan.RunnersUp {
		if plan.Request.For == "" || strings.Contains(l, "("+engineWords(plan.Request.For)+")") {
			d.RunnersUp = append(d.RunnersUp, l)
		}
	}
	if plan.Request.For == EngineClickHouse {
		d.RuledOut = nil
	}
	for _, l := range plan.FrontLines() {
		if plan.Request.For == "" || strings.Contains(l, "("+engineWords(plan.Request.For)+")") {
			d.Front = append(d.Front, l)
		}
	}
	d.HowMade = append(d.HowMade, plan.Growing)
	for _, m := range plan.Measures {
		check := ""
		if m.OverheadMeasured {
			check = fmt.Sprintf("; RSS measured x%s of the computed bytes, x%s at the peak (a check: the plan's memory is computed)",
				text.Float(text.Round(m.Overhead, 3)), text.Float(text.Round(m.PeakOverhead, 3)))
		}
		switch {
		case m.LoadRowsPerSecond > 0:
			d.HowMade = append(d.HowMade, fmt.Sprintf("%s: load %s, read %s, the median of %d load(s) at %s rows on this machine%s (%s)", m.Layout,
				rangeText(&m.LoadRowsPerSecond, m.LoadRange), rangeText(nonZero(m.ReadRowsPerSecond), m.ReadRange), m.Loads, text.Rows(m.Rows), check, m.From))
		case m.OverheadMeasured:
			d.HowMade = append(d.HowMade, fmt.Sprintf("%s: no speed measured%s (%s)", m.Layout, check, m.From))
		}
	}
	d.HowMade = append(d.HowMade, plan.Notes...)
	shown := plan
	if plan.Request.For != "" {
		shown.Candidates = nil
		for _, c := range plan.Candidates {
			if engineOf(c) == plan.Request.For {
				shown.Candidates = append(shown.Candidates, c)
			}
		}
	}
	d.TableTitle = fmt.Sprintf("Setups (each row is what would run, in ClickHouse or in Go, with its own memory; of each layout its best, its smallest that fits and its lowest load factor, or one between, each at its load factor's best shard count; %d setups in all)", len(shown.Candidates))
	d.Header, d.Numeric, d.Rows = PlanTable(shown)
	return d
}

// answerOf words answer c.
func answerOf(plan Plan, c Candidate) PlanAnswer {
	a := PlanAnswer{For: engineOf(c), Title: AnswerTitle(plan, c), Rank: c.Rank, Setup: SetupName(c), Fits: c.Fits, Line: answerLine(plan, c), Why: c.Why}
	if a.For == EngineClickHouse {
		ch := c.ClickHouse
		a.Lines = append(a.Lines,
			fmt.Sprintf("steady %s, first load peak %s, reload peak %s (the serving dictionary beside a new one at its first-load peak): %s", text.Bytes(c.SteadyBytes),
				text.Bytes(c.PeakBytes), text.Bytes(c.ReloadPeakBytes), ch.Model),
			fmt.Sprintf("%s %s, load factor %.3f after the load; %s at a %s", perPair(c), perKeyWords(plan), c.LoadFactor, fitWords(plan, c), plan.Checked))
	} else {
		a.Lines = append(a.Lines,
			fmt.Sprintf("steady %s (%s computed x %s + the loader's blocks %s), first load peak %s (%s)",
				text.Bytes(c.SteadyBytes), text.Bytes(c.BytesAllocated), text.Float(text.Round(c.Overhead, 3)), text.Bytes(c.LoaderBytes),
				text.Bytes(c.PeakBytes), growthWords(c)),
			fmt.Sprintf("reload peak %s: the serving table (%s) beside a new one at its first-load peak, as a Go program that builds a new map and swaps it in holds them",
				text.Bytes(c.ReloadPeakBytes), text.Bytes(servingBytes(c))),
			fmt.Sprintf("%s %s, load factor %.3f after the load; %s at a %s", perPair(c), perKeyWords(plan), c.LoadFactor, fitWords(plan, c), plan.Checked))
	}
	where := ""
	speedLayout := c.Layout
	if a.For == EngineClickHouse {
		speedLayout = chSpeedLayout(c.Layout, c.ComplexKey)
	}
	if i := slices.IndexFunc(plan.Measures, func(m Measure) bool { return m.Layout == speedLayout }); i >= 0 {
		where = measuredWhere(plan.Measures[i], c.Distinct)
	}
	if c.LoadSeconds != nil {
		a.Lines = append(a.Lines, fmt.Sprintf("load about %s: %s%s", loadCell(c), rangeText(c.LoadRowsPerSecond, c.LoadRange), where))
	}
	if c.ReadSeconds != nil {
		a.Lines = append(a.Lines, fmt.Sprintf("reads %s: every key once in %s%s", rangeText(c.ReadRowsPerSecond, c.ReadRange), text.Seconds(c.ReadSeconds), where))
	}
	if c.LoadSeconds == nil && a.For == EngineClickHouse && c.Layout != FlatLayout {
		a.Lines = append(a.Lines, fmt.Sprintf("speed: no load of ClickHouse's %s measured here (the lab's %s layout measures one)", strings.SplitN(SetupName(c), "(", 2)[0], speedLayout))
	}
	if h := holdsWords(plan, c); h != "" {
		a.Lines = append(a.Lines, h)
	}
	a.Lines = append(a.Lines, "why: "+c.Why)
	switch {
	case a.For == EngineClickHouse && c.CreateDictionary != "":
		a.Snippet = PlanSnippet{Title: a.Title + ": " + a.Setup, Lang: "sql", Text: c.CreateDictionary, Note: c.ClickHouseNote}
	case a.For == EngineClickHouse:
		a.Snippet = PlanSnippet{Title: a.Title, Note: c.ClickHouseNote}
	case c.GoCode != "":
		a.Snippet = PlanSnippet{Title: a.Title + ": " + a.Setup, Lang: "go", Text: c.GoCode}
	default:
		why := "no Go code is written for a row yet (several attributes, or a String or Nullable one): core keeps it in packed or compact (core.Options.ValueBytes, the lab's packed_row and compact_row)"
		a.Snippet = PlanSnippet{Title: a.Title, Note: why}
	}
	return a
}

func nonZero(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}

// measuredWhere says where a layout's speeds were measured:
// "; measured at 2M rows (3 loads), expect it slower at 1B".
func measuredWhere(m Measure, distinct int64) string {
	if m.LoadRowsPerSecond == 0 {
		return ""
	}
	s := fmt.Sprintf("; measured at %s rows (%d load(s))", text.Rows(m.Rows), m.Loads)
	if measuredFarBelow(distinct, m) {
		s += fmt.Sprintf(", expect it slower at %s", text.Rows(distinct))
	}
	return s
}
