package app_test

// The desktop smoke test: it builds the real packlab binary with the desktop
// tags, starts it under Xvfb, and drives the real page through a small
// comparison (packed vs hashed, UInt64 -> UInt16, 1e5 rows) with the script
// testdata/smoke.js, run in the page by the binary's smoke hook (see
// app/desktop). Then it restarts the app and finds the results in History.
// It runs only with PACKLAB_DESKTOP_TEST=1 (`make test-desktop`, which
// installs GTK, WebKit, Xvfb and ImageMagick first).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/chdriver"
	"github.com/packlab/packlab/experiments/refdriver"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
)

const desktopTags = "desktop,production,webkit2_41"

// The screen's size: a 1280x800 laptop's, smaller than the window's own
// (app/desktop), which takes the screen's then, so that the screenshot of
// the screen is the window.
const screenW, screenH = 1280, 800

type smokeReport struct {
	Phase  string `json:"phase"`
	OK     bool   `json:"ok"`
	Error  string `json:"error"`
	Banner string `json:"banner"`
	Steps  []struct {
		Name string `json:"name"`
		Ms   int64  `json:"ms"`
	} `json:"steps"`
	RowsError      string `json:"rows_error"`
	RunDisabled    bool   `json:"run_disabled_on_error"`
	SourceError    string `json:"source_error"`
	CancelProgress struct {
		Rows, Rate, ETA, RSS, Bar string
		Cut                       []string
	} `json:"cancel_progress"`
	CancelMs      int64      `json:"cancel_ms"`
	CancelTitle   string     `json:"cancel_title"`
	CancelMessage string     `json:"cancel_message"`
	RowsOffFile   bool       `json:"rows_disabled_for_file"`
	Estimate      string     `json:"estimate"`
	Title         string     `json:"progress_title"`
	Phase2        string     `json:"progress_phase"`
	RunError      string     `json:"run_error"`
	Header        []string   `json:"table_header"`
	Rows          [][]string `json:"table_rows"`
	ResultIDs     []string   `json:"result_ids"`
	HistoryIDs    []string   `json:"history_ids"`
	HistoryJobs   []struct {
		Name, From, Started string
		Count               int
	} `json:"history_jobs"`
	ResultsDesc    string `json:"results_desc"`
	ProgressHidden bool   `json:"progress_hidden"`
	PlanRowsError  string `json:"plan_rows_error"`
	Plan           struct {
		Verdict  string   `json:"verdict"`
		RuledOut []string `json:"ruled_out"`
		Rows     int      `json:"rows"`
		Snippets []string `json:"snippets"`
		ChartInk int      `json:"chart_ink"`
	} `json:"plan"`
	PlanStringKey struct {
		State, Verdict, Error string
		Snippets              []string
		Wide                  []string
	} `json:"plan_string_key"`
	Verify struct {
		State         string   `json:"state"`
		Title         string   `json:"title"`
		Lines         []string `json:"lines"`
		Error         string   `json:"error"`
		ProgressTitle string   `json:"progress_title"`
	} `json:"verify"`
	Calibration struct {
		Title       string `json:"title"`
		Phase       string `json:"phase"`
		RunDisabled bool   `json:"run_disabled"`
		Error       string `json:"error"`
		After       string `json:"after"`
		RunRestored bool   `json:"run_button_restored"`
	} `json:"calibration"`
	Charts map[string]struct {
		Ink    int    `json:"ink"`
		Width  int    `json:"width"`
		Height int    `json:"height"`
		Empty  bool   `json:"empty"`
		Error  string `json:"error"`
		Note   string `json:"note"`
	} `json:"charts"`
	Exports map[string]struct {
		Note  string `json:"note"`
		Error string `json:"error"`
	} `json:"exports"`
	CH struct {
		URLError            string     `json:"url_error"`
		URLErrorAfter       string     `json:"url_error_after"`
		Header              []string   `json:"header"`
		Rows                [][]string `json:"rows"`
		Nodes               []string   `json:"nodes"`
		Advice              []string   `json:"advice"`
		Copy                []string   `json:"copy"`
		ChartInk            int        `json:"chart_ink"`
		Wide                []string   `json:"wide"`
		Kept                string     `json:"kept"`
		HistoryRow          []string   `json:"history_row"`
		HistoryWide         []string   `json:"history_wide"`
		OpenedKept          string     `json:"opened_kept"`
		OpenedRows          [][]string `json:"opened_rows"`
		VerifyButtons       []string   `json:"verify_buttons"`
		Verified            []string   `json:"verified"`
		VerifiedWide        []string   `json:"verified_wide"`
		OpenedVerified      int        `json:"opened_verified"`
		OpenedVerifyButtons int        `json:"opened_verify_buttons"`
		PlanFrom            struct {
			Headline string   `json:"headline"`
			SQL      []string `json:"sql"`
			Off      []string `json:"off"`      // the fields the table says, disabled
			Wide     []string `json:"wide"`     // cards wider than the window
			Verify   string   `json:"verify"`   // the button's label
			Verified []string `json:"verified"` // its title and lines once built
		} `json:"plan_from"`
	} `json:"ch"`
	FinalChart chartBox `json:"final_chart"`
	Window     struct {
		X, Y, W, H int
	} `json:"window"`
	Ms       int64 `json:"ms"`
	Families struct {
		Chips         map[string]string `json:"chips"`
		Notes         []string          `json:"notes"`
		Wide          []string          `json:"wide"`
		Before, After string
		Link          bool
		Tops          []int `json:"tops"`
		Table         []int `json:"table"`
		Attr          struct {
			Error      string `json:"error"`
			KeyBefore  int    `json:"key_before"`
			KeyAfter   int    `json:"key_after"`
			SideScroll int    `json:"side_scroll"`
			SideClient int    `json:"side_client"`
		} `json:"attr"`
	} `json:"families"`
	Threads struct {
		Settings []string `json:"settings"`
		Table    []int    `json:"table"`
	} `json:"threads"`
	References struct {
		Names    []string `json:"names"`
		Disabled int      `json:"disabled"`
		Note     string   `json:"note"`
	} `json:"references"`
}

// chartBox is the chart on screen: its inked pixels and where it is.
type chartBox struct {
	Ink        int     `json:"ink"`
	X, Y, W, H int     `json:"-"`
	DPR        float64 `json:"dpr"`
}

func (c *chartBox) UnmarshalJSON(b []byte) error {
	var v struct {
		Ink int     `json:"ink"`
		X   int     `json:"x"`
		Y   int     `json:"y"`
		W   int     `json:"w"`
		H   int     `json:"h"`
		DPR float64 `json:"dpr"`
	}
	err := json.Unmarshal(b, &v)
	*c = chartBox{v.Ink, v.X, v.Y, v.W, v.H, v.DPR}
	return err
}

func TestDesktopSmoke(t *testing.T) {
	if os.Getenv("PACKLAB_DESKTOP_TEST") != "1" {
		t.Skip("set PACKLAB_DESKTOP_TEST=1 (make test-desktop) to build and drive the desktop app under Xvfb")
	}
	for _, tool := range []string{"Xvfb", "import", "pkg-config"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s not found: run `make deps-desktop` first", tool)
		}
	}
	tmp := t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}

	// Build the real binary.
	start := time.Now()
	bin := filepath.Join(tmp, "packlab")
	build := exec.Command("go", "build", "-tags", desktopTags, "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %s: %v\n%s", desktopTags, err, out)
	}
	t.Logf("build (-tags %s): %.1f s", desktopTags, time.Since(start).Seconds())
	// The binary says that it has the window.
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), "\nlab window: built in") {
		t.Errorf("%s version: %v\n%s\nwant it to say the lab window is built in", bin, err, out)
	}

	display := startXvfb(t)
	results := filepath.Join(tmp, "results")
	exports := filepath.Join(tmp, "exports")
	for _, d := range []string{results, exports} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile("testdata/smoke.js")
	if err != nil {
		t.Fatal(err)
	}

	// Phase 1: a comparison run, every chart, every export, History.
	shot := filepath.Join(tmp, "desktop.png")
	r, _ := runApp(t, bin, display, tmp, "run", nil, script, results, exports, shot)
	if !r.OK {
		t.Fatalf("the page reported a failure: %s (banner %q, run error %q, after steps %+v)", r.Error, r.Banner, r.RunError, r.Steps)
	}
	checkRunReport(t, r)
	if w := r.Window; w.X < 0 || w.Y < 0 || w.W > screenW || w.H > screenH || w.W < screenW-40 || w.H < screenH-80 {
		t.Errorf("on a %dx%d screen the window's page is %dx%d at (%d, %d); want the screen's size, on it", screenW, screenH, w.W, w.H, w.X, w.Y)
	}
	checkExports(t, exports, r.ResultIDs)
	checkScreenshot(t, shot)
	saved, err := filepath.Glob(filepath.Join(results, "*.json"))
	if err != nil || len(saved) != 2 {
		t.Errorf("results folder holds %d JSON files (%v), want 2", len(saved), err)
	}

	// The comparison is one job in History, named as asked, from the
	// desktop (the cancelled run saved nothing, so it is no job).
	if len(r.HistoryJobs) != 1 || r.HistoryJobs[0].Name != "run hashed,packed 1e5" || r.HistoryJobs[0].From != "desktop" || r.HistoryJobs[0].Count != 2 {
		t.Errorf("History after the run lists %+v, want one job: run hashed,packed 1e5, desktop, 2 results", r.HistoryJobs)
	}

	// Between the two phases, the same binary on the command line: a types
	// sweep and a run, each a job of its own. The report writes the run's
	// results only.
	cli := func(args ...string) string {
		cmd := exec.Command(bin, append(args, "--results", results)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("packlab %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	cli("sweep", "types", "--layout", "packed", "--rows", "1e3", "--in-process", "--format", "csv")
	cli("run", "--layout", "sparse", "--rows", "1e4", "--threads", "1", "--format", "csv")
	if md := cli("report", "--format", "markdown"); tableRows(md) != 1 || !strings.Contains(md, "| sparse ") {
		t.Errorf("after a sweep and a run, packlab report writes\n%s\nwant the run's one result", md)
	}

	// Phase 2: after a restart, History lists the three jobs newest first,
	// the first phase's results can be compared again, and the heading says
	// which job they are from.
	r2, _ := runApp(t, bin, display, tmp, "history", r.ResultIDs, script, results, exports, "")
	if !r2.OK {
		t.Fatalf("after a restart the page reported a failure: %s (banner %q, steps %+v)", r2.Error, r2.Banner, r2.Steps)
	}
	var names []string
	for _, j := range r2.HistoryJobs {
		names = append(names, j.Name+" ("+j.From+")")
	}
	if want := []string{"run sparse 1e4 (command line)", "sweep types packed 1e3 (command line)", "run hashed,packed 1e5 (desktop)"}; !slices.Equal(names, want) {
		t.Errorf("after a sweep and a run History lists %q, want %q", names, want)
	}
	for _, id := range r.ResultIDs {
		if !slices.Contains(r2.HistoryIDs, id) {
			t.Errorf("after a restart History lacks %s: %v", id, r2.HistoryIDs)
		}
	}
	if len(r2.Rows) != 2 {
		t.Errorf("after a restart the comparison has %d rows, want 2", len(r2.Rows))
	}
	if !strings.HasPrefix(r2.ResultsDesc, "run hashed,packed 1e5 · desktop · started ") || !r2.ProgressHidden {
		t.Errorf("after Compare selected the heading says %q (the run's card hidden: %v), want the job it shows", r2.ResultsDesc, r2.ProgressHidden)
	}
	for kind, c := range r2.Charts {
		if c.Ink < 1000 {
			t.Errorf("after a restart chart %s has %d inked pixels", kind, c.Ink)
		}
	}
	// The Plan tab answers through the same API call as packlab plan.
	if want := "0: not positive"; !strings.HasPrefix(r2.PlanRowsError, want) {
		t.Errorf("the plan's rows error says %q, want %q...", r2.PlanRowsError, want)
	}
	p := r2.Plan
	if !strings.Contains(p.Verdict, " SHARDS ") || !strings.Contains(p.Verdict, "fit in 24.0 GiB") || p.Rows < 4 || p.ChartInk < 1000 ||
		len(p.RuledOut) == 0 || len(p.Snippets) < 2 || !strings.Contains(strings.Join(p.Snippets, "\n"), "CREATE DICTIONARY") {
		t.Errorf("the Plan tab shows verdict %q, %d ruled out, %d table rows, %d snippets, a chart of %d inked pixels; want an answer that fits 24 GiB, the layouts ruled out, the setups, CREATE DICTIONARY and Go, and a drawn chart",
			p.Verdict, len(p.RuledOut), p.Rows, len(p.Snippets), p.ChartInk)
	}
	// A String key from the plan's key menu: ClickHouse's COMPLEX_KEY_
	// answer alone, its CREATE DICTIONARY keyed by a String, nothing wider
	// than the window.
	if sk := r2.PlanStringKey; sk.State != "done" || !strings.Contains(sk.Verdict, "COMPLEX_KEY_") || strings.Contains(sk.Verdict, "In Go") ||
		!strings.Contains(strings.Join(sk.Snippets, "\n"), "key String,") || len(sk.Wide) > 0 {
		t.Errorf("the Plan tab with a String key: %+v; want the COMPLEX_KEY_ answer alone, keyed by a String, within the window", sk)
	}
	// Where ClickHouse runs, the ClickHouse answer built in it from the
	// Plan tab, its figures beside the plan's.
	if v := r2.Verify; chdriver.Status().Available && (v.State != "done" || !strings.Contains(v.Title, "at 200K rows, built in ClickHouse") ||
		!strings.Contains(strings.Join(v.Lines, "\n"), "the plan's model of the same dictionary") || v.ProgressTitle != "Built in ClickHouse") {
		t.Errorf("Build it in ClickHouse: %+v", v)
	}
	// The desktop's runs beside the command line's of one thread: the
	// table names the threads and keeps every column in its card.
	t.Logf("hashed and packed beside sparse with --threads 1: %q, the table %v px (content, card)", r2.Threads.Settings, r2.Threads.Table)
	if th := r2.Threads; !strings.Contains(strings.Join(th.Settings, " "), "threads 1") || len(th.Table) != 2 || th.Table[0] > th.Table[1] {
		t.Errorf("hashed and packed beside sparse with --threads 1: settings %q, the table %v px (content, card); want the threads named and every column in the card", th.Settings, th.Table)
	}
	// Its calibration shows in the progress card and stops on Cancel.
	if c := r2.Calibration; !c.RunDisabled || !strings.Contains(c.Phase, "before loading") || c.After != "Calibration stopped" ||
		!strings.HasPrefix(c.Error, "Calibration cancelled; ") || !c.RunRestored {
		t.Errorf("the Plan tab's calibration: %+v; want the progress card idling before a load with Run disabled, then Cancel stopping it with the Plan tab saying so and Run as it was before", c)
	}

	checkFamilies(t, bin, display, tmp, script, results, exports)

	checkClickHouseTab(t, bin, display, tmp, script, results, exports)

	// Phase 4: a file dialog opens without a screenful of GTK or dconf
	// warnings, with no D-Bus session (dconf cannot save settings there).
	r3, logs := runApp(t, bin, display, tmp, "dialog", nil, script, results, exports, "")
	if !r3.OK {
		t.Errorf("the file dialog phase: %s (steps %+v)", r3.Error, r3.Steps)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "WARNING") || strings.Contains(line, "CRITICAL") {
			t.Errorf("with a file dialog open the app printed %q", line)
		}
	}

	// The screenshot goes to the README's picture only when asked
	// (make test-desktop SCREENSHOT=docs/desktop.png), so that a plain
	// make test leaves the working tree as it was.
	if out := os.Getenv("PACKLAB_SCREENSHOT"); out != "" && !t.Failed() {
		if !filepath.IsAbs(out) {
			out = filepath.Join(root, out)
		}
		b, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(out, b, 0o644)
		}
		if err != nil {
			t.Errorf("saving the screenshot: %v", err)
		} else {
			t.Logf("screenshot: %s", out)
		}
	}
}

// checkFamilies is the phase "families": ClickHouse's own dictionaries
// and the C++ maps, ticked in their own chip groups, run from the window
// where their workers are built (else their chips are disabled, the note
// naming the command that builds them); and "+ attribute" beside a layout
// of one value says what to tick, in the window's words, without
// squeezing the sidebar.
func checkFamilies(t *testing.T, bin, display, tmp string, script []byte, results, exports string) {
	t.Helper()
	want := []string{"ch_hashed", "boost_flat"}
	ready := chdriver.Status().Available && refdriver.Status().Available
	// Where the C++ maps' worker is built, the window opens without it and
	// finds it once it is put in place, as after a make refs: the test
	// puts a link to it there when the page says it has seen none.
	recheck := ready && refdriver.Status().Path != ""
	if recheck {
		later := filepath.Join(tmp, "later", refdriver.WorkerName)
		if err := os.MkdirAll(filepath.Dir(later), 0o755); err != nil {
			t.Fatal(err)
		}
		real := refdriver.Status().Path
		restore := os.Getenv(refdriver.WorkerEnv)
		os.Setenv(refdriver.WorkerEnv, later)
		os.Setenv("PACKLAB_REFS_WORKER_LATER", "1")
		defer func() {
			os.Setenv(refdriver.WorkerEnv, restore)
			os.Unsetenv("PACKLAB_REFS_WORKER_LATER")
		}()
		mark := filepath.Join(tmp, "report-families.json.unbuilt")
		go func() {
			for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
				if _, err := os.Stat(mark); err == nil {
					_ = os.Symlink(real, later)
					return
				}
			}
		}()
	}
	r, _ := runApp(t, bin, display, tmp, "families", want, script, results, exports, "")
	if !r.OK {
		t.Fatalf("the families phase: %s (banner %q, estimate %q, run error %q, steps %+v)", r.Error, r.Banner, r.Estimate, r.RunError, r.Steps)
	}
	f := r.Families
	if a := f.Attr; a.Error == "" || strings.Contains(a.Error, "--") || !strings.Contains(a.Error, "e.g. ticking ch_hashed,ch_sparse_hashed") ||
		a.KeyAfter < a.KeyBefore-1 || a.SideScroll > a.SideClient {
		t.Errorf("+ attribute beside hashed: error %q, the key type %d px wide before and %d after, the sidebar %d px of content in %d (wider: %q); want the form's words (no flag) and the sidebar as it was",
			a.Error, a.KeyBefore, a.KeyAfter, a.SideScroll, a.SideClient, f.Wide)
	}
	if len(f.Tops) != 2 || f.Tops[0] != f.Tops[1] {
		t.Errorf("the key type's and the value type's selects are at y %v: want them side by side", f.Tops)
	}
	if len(f.Table) == 2 && f.Table[0] > f.Table[1] {
		t.Errorf("the results of ch_hashed and boost_flat are %d px wide in a %d px card: their last columns off it", f.Table[0], f.Table[1])
	}
	for _, n := range f.Notes {
		if strings.Count(n, "ClickHouse's own dictionaries") > 1 || strings.Count(strings.ToLower(n), "c++ reference maps") > 1 {
			t.Errorf("a layouts note says its family twice: %q", n)
		}
	}
	if recheck && (f.Before != "disabled" || !f.Link || f.After != "enabled") {
		t.Errorf("the C++ maps' worker put in place while the window was open: boost_flat %s before (a check again link: %v), %s after; want disabled, then found without a restart",
			f.Before, f.Link, f.After)
	}
	for _, name := range want {
		if c := f.Chips[name]; (ready && c != "enabled") || (!ready && c != "disabled") {
			t.Errorf("the %s chip is %s (workers built: %v)", name, c, ready)
		}
	}
	if !ready {
		t.Logf("ClickHouse's worker or the C++ one is not built (PACKLAB_CH_WORKER, PACKLAB_REFS_WORKER): their chips are disabled, notes %q", f.Notes)
		if !strings.Contains(strings.Join(f.Notes, " "), chdriver.BuildCommand) || !strings.Contains(strings.Join(f.Notes, " "), refdriver.BuildCommand) {
			t.Errorf("the notes %q do not name %s and %s", f.Notes, chdriver.BuildCommand, refdriver.BuildCommand)
		}
		return
	}
	var got []string
	for _, row := range r.Rows {
		got = append(got, strings.Fields(row[0])[0])
	}
	slices.Sort(got)
	if r.Title != "Finished" || r.RunError != "" || !slices.Equal(got, []string{"boost_flat", "ch_hashed"}) {
		t.Errorf("ch_hashed and boost_flat from the window: %q (%q), error %q, results %v; want both measured", r.Title, r.Phase2, r.RunError, r.Rows)
	} else {
		t.Logf("from the window: %v measured", got)
	}
}

// startXvfb starts a virtual screen the size of the window and returns its
// display name; it is stopped when the test ends.
func startXvfb(t *testing.T) string {
	t.Helper()
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	x := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", screenW, screenH), "-nolisten", "tcp")
	x.ExtraFiles = []*os.File{wr}
	var xerr bytes.Buffer
	x.Stderr = &xerr
	if err := x.Start(); err != nil {
		t.Fatalf("starting Xvfb: %v", err)
	}
	wr.Close()
	t.Cleanup(func() {
		_ = x.Process.Kill()
		_ = x.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(rd).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if _, err := strconv.Atoi(n); err != nil {
			t.Fatalf("Xvfb gave no display number (%q): %s", n, xerr.String())
		}
		return ":" + n
	case <-time.After(20 * time.Second):
		t.Fatalf("Xvfb did not start in 20 s: %s", xerr.String())
	}
	return ""
}

// runApp starts the app with the smoke script for phase, waits for the
// page's report, takes the screenshot (when shot is set), lets the app quit
// and checks that it exits 0. In phase "dialog" a file dialog is open when
// the page reports, which holds the app's quit: the test kills it instead.
// The app's output comes back too.
func runApp(t *testing.T, bin, display, tmp, phase string, expect []string, script []byte, results, exports, shot string) (smokeReport, string) {
	t.Helper()
	exp, _ := json.Marshal(expect)
	if expect == nil {
		exp = []byte("[]")
	}
	js := filepath.Join(tmp, "smoke-"+phase+".js")
	head := fmt.Sprintf("const SMOKE = {phase: %q, expect: %s, recheck: %v};\n", phase, exp, os.Getenv("PACKLAB_REFS_WORKER_LATER") != "")
	if err := os.WriteFile(js, append([]byte(head), script...), 0o644); err != nil {
		t.Fatal(err)
	}
	reportPath := filepath.Join(tmp, "report-"+phase+".json")

	start := time.Now()
	cmd := exec.Command(bin)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(),
		// No D-Bus session, as on a bare X server or over ssh -X.
		"DBUS_SESSION_BUS_ADDRESS=", "XDG_RUNTIME_DIR="+tmp,
		"DISPLAY="+display,
		"PACKLAB_RESULTS_DIR="+results,
		"PACKLAB_SMOKE_SCRIPT="+js,
		"PACKLAB_SMOKE_REPORT="+reportPath,
		"PACKLAB_SMOKE_SAVE_DIR="+exports,
	)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the app: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var rep smokeReport
	deadline := time.After(4 * time.Minute)
wait:
	for {
		select {
		case err := <-exited:
			t.Fatalf("phase %s: the app exited before reporting (%v):\n%s", phase, err, tail(logs.String()))
		case <-deadline:
			_ = cmd.Process.Kill()
			t.Fatalf("phase %s: no report from the page in 4 min:\n%s", phase, tail(logs.String()))
		case <-time.After(100 * time.Millisecond):
			b, err := os.ReadFile(reportPath)
			if err != nil {
				continue
			}
			if err := json.Unmarshal(b, &rep); err != nil {
				_ = cmd.Process.Kill()
				t.Fatalf("phase %s: the report is not JSON: %v\n%s", phase, err, b)
			}
			break wait
		}
	}
	t.Logf("phase %s: page report after %.1f s (script %d ms; steps %+v)", phase, time.Since(start).Seconds(), rep.Ms, rep.Steps)
	if !rep.OK {
		logGoroutines(t, reportPath+".goroutines")
	}
	if shot != "" {
		nudge := func() { _ = os.WriteFile(reportPath+".nudge", nil, 0o644) }
		if !takeScreenshot(t, display, shot, rep.FinalChart, nudge) {
			t.Logf("phase %s: the app's log:\n%s", phase, tail(logs.String()))
			logStacks(t, cmd.Process.Pid)
		}
	}
	if phase == "dialog" {
		_ = cmd.Process.Kill()
		<-exited
		return rep, logs.String()
	}
	if err := os.WriteFile(reportPath+".quit", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("phase %s: the app exited with %v:\n%s", phase, err, tail(logs.String()))
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Errorf("phase %s: the app did not quit within 30 s", phase)
	}
	t.Logf("phase %s: app up to exit %.1f s", phase, time.Since(start).Seconds())
	return rep, logs.String()
}

// logGoroutines logs the app's goroutines that run packlab's code (the
// file the app writes beside a failed report): where a call the page
// waited on is.
func logGoroutines(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("no goroutines beside the failed report: %v", err)
		return
	}
	var ours []string
	for _, g := range strings.Split(string(b), "\n\n") {
		if strings.Contains(g, "github.com/packlab/packlab/") && !strings.Contains(g, "smokeHook).Report") {
			ours = append(ours, g)
		}
	}
	t.Logf("the app's goroutines in packlab's code when the page failed (%d of %d):\n%s", len(ours), strings.Count(string(b), "goroutine "), strings.Join(ours, "\n\n"))
}

// logStacks logs, where gdb is installed, what each thread of the app's
// process is doing: a window that stays blank after the page has reported
// is either WebKit not painting or the GTK main thread held up.
func logStacks(t *testing.T, pid int) {
	t.Helper()
	if _, err := exec.LookPath("gdb"); err != nil {
		return
	}
	out, _ := exec.Command("gdb", "-batch", "-p", strconv.Itoa(pid), "-ex", "thread apply all bt 25").CombinedOutput()
	ps, _ := exec.Command("ps", "-L", "-o", "pid,tid,stat,pcpu,wchan:20,comm", "-p", strconv.Itoa(pid)).CombinedOutput()
	t.Logf("the app's threads:\n%s\ntheir stacks:\n%s", ps, tail(string(out)))
	kids, _ := exec.Command("pgrep", "-P", strconv.Itoa(pid)).Output()
	for _, kid := range strings.Fields(string(kids)) {
		comm, _ := os.ReadFile("/proc/" + kid + "/comm")
		out, _ := exec.Command("gdb", "-batch", "-p", kid, "-ex", "bt 25").CombinedOutput()
		t.Logf("its process %s (%s), main thread:\n%s", kid, strings.TrimSpace(string(comm)), tail(string(out)))
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

func checkRunReport(t *testing.T, r smokeReport) {
	t.Helper()
	checkReferencesListed(t, r.References.Names, r.References.Disabled, r.References.Note)
	if !strings.Contains(r.RowsError, "ten") {
		t.Errorf("rows error next to the field = %q, want it to name the bad value", r.RowsError)
	}
	if !r.RunDisabled {
		t.Errorf("Run stayed enabled with a bad row count")
	}
	if !strings.Contains(r.SourceError, "choose a TSV or CSV") || !r.RowsOffFile {
		t.Errorf("file source with no file: error %q, rows box disabled %v", r.SourceError, r.RowsOffFile)
	}
	cp := r.CancelProgress
	if len(cp.Cut) > 0 {
		t.Errorf("progress during the long run: %v cut short in their boxes (%+v)", cp.Cut, cp)
	}
	if !strings.Contains(cp.Rows, "/ 200,000,000") || cp.Rate == "–" || cp.Bar == "" || cp.Bar == "0%" {
		t.Errorf("progress during the long run: %+v", cp)
	}
	if r.CancelTitle != "Cancelled" || !strings.Contains(r.CancelMessage, "nothing was saved") || r.CancelMs > 10_000 {
		t.Errorf("cancel: %q, %q after %d ms", r.CancelTitle, r.CancelMessage, r.CancelMs)
	} else {
		t.Logf("cancel at %s rows (%s, ETA %s, RSS %s): the run stopped %d ms after the click", cp.Rows, cp.Rate, cp.ETA, cp.RSS, r.CancelMs)
	}
	if !strings.Contains(r.Estimate, "Fits") {
		t.Errorf("prediction = %q, want it to fit", r.Estimate)
	}
	if r.Title != "Finished" || r.RunError != "" {
		t.Errorf("run ended %q (%q), error %q", r.Title, r.Phase2, r.RunError)
	}
	for _, col := range []string{"settings", "load (sec)", "read (sec)", "read (million rows/s)", "bytes_allocated", "RSS", "peak RSS"} {
		if !slices.Contains(r.Header, col) {
			t.Errorf("results table lacks column %q: %v", col, r.Header)
		}
	}
	if len(r.Rows) != 2 {
		t.Fatalf("results table has %d rows, want 2: %v", len(r.Rows), r.Rows)
	}
	var layouts []string
	for _, row := range r.Rows {
		layouts = append(layouts, strings.Fields(row[0])[0])
	}
	slices.Sort(layouts)
	if !slices.Equal(layouts, []string{"hashed", "packed"}) {
		t.Errorf("results table rows are %v, want hashed and packed", layouts)
	}
	kinds := report.ChartKinds()
	if len(r.Charts) != len(kinds) {
		t.Errorf("the page drew %d charts, want %d (%v)", len(r.Charts), len(kinds), kinds)
	}
	for _, k := range kinds {
		c, ok := r.Charts[k]
		switch {
		case !ok:
			t.Errorf("chart %s: no tab", k)
		case c.Error != "" || c.Empty:
			t.Errorf("chart %s: not drawn (%s %s)", k, c.Error, c.Note)
		case c.Width < 200 || c.Height < 200 || c.Ink < 1000:
			t.Errorf("chart %s: canvas %dx%d with %d inked pixels, want a drawn chart", k, c.Width, c.Height, c.Ink)
		default:
			t.Logf("chart %s: %dx%d canvas, %d inked pixels", k, c.Width, c.Height, c.Ink)
		}
	}
	if r.FinalChart.Ink < 1000 {
		t.Errorf("the chart on screen for the screenshot has %d inked pixels", r.FinalChart.Ink)
	}
	for _, what := range []string{"png", "svg", "report", "markdown", "csv", "json"} {
		e := r.Exports[what]
		if e.Error != "" || !strings.HasPrefix(e.Note, "Saved ") {
			t.Errorf("export %s: note %q, error %q", what, e.Note, e.Error)
		}
	}
}

func checkExports(t *testing.T, dir string, ids []string) {
	t.Helper()
	one := func(pattern string) []byte {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		if len(m) != 1 {
			t.Errorf("exports: %d files match %s, want 1", len(m), pattern)
			return nil
		}
		b, err := os.ReadFile(m[0])
		if err != nil {
			t.Error(err)
		}
		return b
	}
	if b := one("*.png"); b != nil {
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		switch {
		case err != nil || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
			t.Errorf("exported PNG: %v", err)
		case len(b) < 10_000 || cfg.Width < 400 || cfg.Height < 300:
			t.Errorf("exported PNG is %d bytes, %dx%d: too small for a chart", len(b), cfg.Width, cfg.Height)
		default:
			t.Logf("exported PNG: %d bytes, %dx%d", len(b), cfg.Width, cfg.Height)
		}
	}
	if b := one("*.svg"); b != nil && (!bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("</svg>")) || len(b) < 2000) {
		t.Errorf("exported SVG is not a drawn chart (%d bytes)", len(b))
	}
	if b := one("*-report.html"); b != nil && (!bytes.Contains(b, []byte("<html")) || !bytes.Contains(b, []byte("echarts"))) {
		t.Errorf("exported report is not a self-contained HTML page (%d bytes)", len(b))
	}
	if b := one("*.md"); b != nil && !bytes.Contains(b, []byte("| settings |")) {
		t.Errorf("exported Markdown table: %q", b)
	}
	if b := one("*.csv"); b != nil && bytes.Count(b, []byte("\n")) != 3 {
		t.Errorf("exported CSV has %d lines, want a header and 2 rows", bytes.Count(b, []byte("\n")))
	}
	if b := one("*.json"); b != nil {
		var rs []result.Result
		if err := json.Unmarshal(b, &rs); err != nil {
			t.Errorf("exported JSON: %v", err)
		}
		for _, r := range rs {
			if !slices.Contains(ids, r.ID) || r.Rows != 100_000 || r.ElementCount != 100_000 || !r.Isolated || r.KeyType != "UInt64" || r.ValueType != "UInt16" {
				t.Errorf("exported result %s: rows %d, elements %d, isolated %v, %s -> %s", r.ID, r.Rows, r.ElementCount, r.Isolated, r.KeyType, r.ValueType)
			}
		}
		if len(rs) != 2 {
			t.Errorf("exported JSON has %d results, want 2", len(rs))
		}
	}
}

// checkScreenshot: a PNG of the window's size with a real picture in it.
func checkScreenshot(t *testing.T, shot string) {
	t.Helper()
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Errorf("screenshot: %v", err)
		return
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil || cfg.Width != screenW || cfg.Height != screenH {
		t.Errorf("screenshot: %v, %dx%d, want %dx%d", err, cfg.Width, cfg.Height, screenW, screenH)
	}
	out, err := exec.Command("identify", "-format", "%k", shot).Output()
	colors, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil || colors < 100 {
		t.Errorf("screenshot has %d colours (%v): not the lab's window", colors, err)
	}
	t.Logf("screenshot: %d bytes, %d colours", len(b), colors)
}

// takeScreenshot grabs the screen (the window fills it) once WebKit has
// painted the chart: the chart's rectangle must hold a picture, not a blank
// (a hidden-then-shown view is repainted a moment after the page is done).
// It says whether it got one.
//
// Under heavy load (average 10-14) on this machine, which has no GPU, the
// window sometimes showed its background colour only for the whole 10 s,
// the page having drawn every chart (about 1 run in 10, in any phase). A
// person would see a blank window until they touched it; so, after 4 s
// blank and again after 7 s, the test has the app hide and show its window
// (smokeHook.nudge, as minimising and restoring it would), and says so. A
// window that stays blank after that fails. (gdb on such an app: the GTK
// main loop and WebKit's processes idle in poll, nothing held up.)
func takeScreenshot(t *testing.T, display, shot string, c chartBox, nudge func()) bool {
	t.Helper()
	crop := fmt.Sprintf("%dx%d+%d+%d", c.W, c.H, c.X, c.Y)
	colors, nudged := 0, 0
	for try := 0; try < 40; try++ {
		if try > 0 {
			time.Sleep(250 * time.Millisecond)
		}
		if try == 16 || try == 28 {
			nudge()
			nudged++
		}
		out, err := exec.Command("import", "-display", display, "-window", "root", shot).CombinedOutput()
		if err != nil {
			t.Errorf("screenshot: %v\n%s", err, out)
			return false
		}
		if c.W <= 0 || c.H <= 0 {
			t.Errorf("the page gave no chart rectangle: %+v", c)
			return false
		}
		out, err = exec.Command("convert", shot, "-crop", crop, "+repage", "-format", "%k", "info:").Output()
		if err != nil {
			t.Errorf("counting the chart's colours: %v", err)
			return false
		}
		colors, _ = strconv.Atoi(strings.TrimSpace(string(out)))
		if colors >= 30 {
			t.Logf("screenshot after %d tries: the chart (%s) has %d colours", try+1, crop, colors)
			if nudged > 0 {
				t.Logf("the window was painted only after the app hid and showed it (%d time(s)): a stall of its painting, not the page", nudged)
			}
			return true
		}
	}
	t.Errorf("the chart on the screenshot (%s) stayed blank: %d colours", crop, colors)
	// What was on the screen: whether the window was there at all (it was,
	// its background colour only, when WebKit composited without a GPU).
	out, _ := exec.Command("xwininfo", "-display", display, "-root", "-tree").CombinedOutput()
	hist, _ := exec.Command("convert", shot, "-format", "%c", "histogram:info:").Output()
	t.Logf("the screen's windows:\n%s\nits colours:\n%.600s", out, hist)
	return false
}

// checkReferencesListed checks the form's C++ reference maps as a face
// shows them: every one listed after packlab's layouts, and either all
// runnable, or all disabled with a note naming the command that builds them.
func checkReferencesListed(t *testing.T, names []string, disabled int, note string) {
	t.Helper()
	var want []string
	for _, r := range refdriver.References() {
		want = append(want, r.Name)
	}
	if !slices.Equal(names, want) {
		t.Errorf("reference maps listed %v, want %v", names, want)
	}
	if st := refdriver.Status(); st.Available && disabled == 0 {
		return
	}
	if disabled != len(want) || !strings.Contains(note, "unavailable") || !strings.Contains(note, refdriver.BuildCommand) {
		t.Errorf("reference maps: %d of %d disabled, note %q; want all disabled and a note naming %q (or all enabled where the worker is built)",
			disabled, len(want), note, refdriver.BuildCommand)
	}
}

// tableRows counts the data rows of a Markdown report's table: lines that
// start with "| ", less the header.
func tableRows(md string) int {
	n := 0
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| settings ") {
			n++
		}
	}
	return n
}
