package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
)

func sampleResult(id string) result.Result {
	r := result.Result{ID: id, StartedAt: "2026-11-30T20:58:00Z", Layout: "hashed", KeyType: "UInt64", ValueType: "UInt16",
		Rows: 1000, Shards: 1, MaxLoadFactor: 0.5, Source: "random", ElementCount: 1000, BucketCount: 4096,
		Workers: []result.Worker{{Shard: 0, Rows: 1000}}, Timeline: []result.TimelinePoint{{}}}
	return r
}

// stored is sampleResult as a job saved it: id's layout, started then.
func stored(id, started string, job *result.Job) result.Result {
	r := sampleResult(id)
	r.StartedAt, r.Layout, r.Job = started, strings.Split(id, "-")[1], job
	return r
}

func TestStoreRoundTrip(t *testing.T) {
	s, err := OpenStore(filepath.Join(t.TempDir(), "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"20261130T205800.001Z-hashed-0001", "20261130T205800.003Z-packed-0003", "20261130T205800.002Z-sparse-0002"}
	for _, id := range ids {
		if err := s.Save(sampleResult(id)); err != nil {
			t.Fatal(err)
		}
	}
	got, problems, err := s.List()
	if err != nil || len(problems) != 0 {
		t.Fatalf("List: %v, %v", problems, err)
	}
	var gotIDs []string
	for _, r := range got {
		gotIDs = append(gotIDs, r.ID)
	}
	want := []string{ids[1], ids[2], ids[0]}
	if !slices.Equal(gotIDs, want) {
		t.Errorf("List order %v, want newest first %v", gotIDs, want)
	}
	r, err := s.Load(ids[0])
	if err != nil || r.BucketCount != 4096 || r.Workers[0].Rows != 1000 {
		t.Errorf("Load = %+v, %v", r, err)
	}
	if err := s.Delete(ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(ids[0]); err == nil || !strings.Contains(err.Error(), "no such result") {
		t.Errorf("Load after Delete: %v", err)
	}
	if err := s.Delete(ids[0]); err == nil {
		t.Error("Delete of a missing result succeeded")
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden"} {
		if err := s.Save(sampleResult(bad)); err == nil {
			t.Errorf("Save accepted id %q", bad)
		}
		if _, err := s.Load(bad); err == nil {
			t.Errorf("Load accepted id %q", bad)
		}
	}
}

// TestStoreListSkipsBadFiles: a corrupt file is reported by name and
// skipped; temporary files of an interrupted save and other files are
// ignored.
func TestStoreListSkipsBadFiles(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(sampleResult("20261130T205800.001Z-hashed-0001")); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("torn.json", `{"id":"x","layout":"hashed","rows":`)
	write("empty.json", `{}`)
	write(tempPrefix+"20261130T205800.009Z-hashed-0009.json-123", `{"id":"20261130T`)
	write("notes.txt", "hello")
	write("negative.json", `{"id":"n","layout":"hashed","rows":-5}`)
	write("forever.json", `{"id":"f","layout":"hashed","rows":10,"load_seconds":1e308}`)
	write("long.json", `{"id":"l","layout":"`+strings.Repeat("x", 5000)+`","rows":10}`)
	// A sample of the timeline at 1e308 s made every report's charts fail
	// (+Inf in their JSON, the file not named: issue 48).
	write("sample.json", `{"id":"s","layout":"hashed","rows":10,"timeline":[{"seconds":0.1,"rows":5},{"seconds":1e308,"rows":10}]}`)
	write("producer.json", `{"id":"p","layout":"hashed","rows":10,"producer":{"read_seconds":1e308}}`)
	// Said in a reader's words, not the decoder's ("cannot unmarshal array
	// into Go value of type result.Result", "unexpected end of JSON input").
	write("zero.json", "")
	write("array.json", `[{"id":"a","layout":"hashed"}]`)
	write("string.json", `{"id":"s2","layout":"hashed","rows":"1e3"}`)
	write("huge.json", `{"id":"h","layout":"hashed","rows":1e300}`)
	write("garbage.json", "\x00\x01binary")
	// A result with only some of its fields was shown as a run of 0 rows
	// at SHARDS 0: it is named, with what it lacks.
	write("partial.json", `{"id":"20261207T000000.000Z-hashed-0002","layout":"hashed","started_at":"2026-12-07T00:00:00Z","rows":10,"key_type":""}`)
	got, problems, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "20261130T205800.001Z-hashed-0001" {
		t.Errorf("List = %d results, want the one good file", len(got))
	}
	if len(problems) != 13 {
		t.Fatalf("problems = %v, want torn.json, empty.json, negative.json, forever.json, long.json, sample.json, producer.json, zero.json, array.json, string.json, huge.json, garbage.json and partial.json", problems)
	}
	joined := fmt.Sprint(problems)
	for _, name := range []string{"torn.json: not a result file: cut short: its JSON stops at byte 35",
		"empty.json: not a whole result: no id, started_at, layout, key_type, value_type, rows, shards, element_count, bytes_allocated (allowed: a result as packlab saves it, with every one of id, started_at, layout, key_type, value_type, rows, shards, element_count, bytes_allocated)",
		"partial.json: not a whole result: no value_type, shards, element_count, bytes_allocated (allowed: ", "negative.json: rows -5 is out of range", "forever.json: load_seconds 1e+308 is out of range", "long.json: layout of 5000 characters is too long for a label",
		"sample.json: timeline[1].seconds 1e+308 is out of range", "producer.json: producer.read_seconds 1e+308 is out of range",
		"zero.json: not a result file: empty (0 bytes)", "array.json: not a result file: a JSON array, not an object",
		"string.json: not a result file: field rows: a JSON string, where a whole number that fits in 64 bits belongs",
		"huge.json: not a result file: field rows: a JSON number 1e300, where a whole number that fits in 64 bits belongs",
		"garbage.json: not a result file: not JSON at byte 1: invalid character"} {
		if !strings.Contains(joined, name) {
			t.Errorf("problems %v do not name %s", problems, name)
		}
	}
	if strings.Contains(joined, "Go value") || strings.Contains(joined, "Go struct") {
		t.Errorf("problems %v speak the decoder's Go words", problems)
	}
}

// TestOpenStoreUnwritable: a results folder that cannot be made is an error
// naming the flag, before any run.
func TestOpenStoreUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "results")
	_, err := OpenStore(dir)
	want := "results_dir " + dir + ": not a writable folder: not a directory (allowed: a folder packlab can create and write)"
	if err == nil || err.Error() != want {
		t.Errorf("OpenStore(under a file)\n got %v\nwant %s", err, want)
	}
	var fe *fault.FieldError
	if !errors.As(err, &fe) {
		t.Errorf("error is %T, want *FieldError", err)
	}
}

func TestDefaultResultsDir(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	if d, _ := DefaultResultsDir(); d != "/data/packlab/results" {
		t.Errorf("with XDG_DATA_HOME: %s", d)
	}
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HOME", "/home/u")
	if d, _ := DefaultResultsDir(); d != "/home/u/.local/share/packlab/results" {
		t.Errorf("without XDG_DATA_HOME: %s", d)
	}
}

// saveLoopEnv makes the test binary a process that saves large results in
// a loop until it is killed (see TestMain).
const saveLoopEnv = "PACKLAB_TEST_SAVE_LOOP"

// TestMain makes this test binary the saving process of the crash test
// (TestSaveSurvivesKill) when saveLoopEnv is set.
func TestMain(m *testing.M) {
	if dir := os.Getenv(saveLoopEnv); dir != "" {
		saveLoop(dir)
		return
	}
	os.Exit(m.Run())
}

func saveLoop(dir string) {
	s := &Store{Dir: dir}
	r := sampleResult("")
	r.Timeline = make([]result.TimelinePoint, 30_000) // ~1.5 MB of JSON: a save takes a while
	for i := range r.Timeline {
		r.Timeline[i] = result.TimelinePoint{Seconds: float64(i) / 10, Rows: int64(i) * 1000, RSSBytes: int64(i) << 20}
	}
	for i := 0; ; i++ {
		r.ID = fmt.Sprintf("20261130T205800.%03dZ-hashed-%04d", i%1000, i)
		if err := s.Save(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("saved", r.ID)
	}
}

// TestSaveSurvivesKill kills a process in the middle of saving large
// results, several times: every file List reads is complete, and the
// temporary file of the interrupted save is ignored.
func TestSaveSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	kills := 3
	if testing.Short() {
		kills = 1
	}
	for k := range kills {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), saveLoopEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Let it write until it has saved at least one result (a race-enabled
		// process on a busy machine can take seconds to start), then a little
		// longer, and kill it wherever it is.
		waitForSavedResult(t, dir, 60*time.Second)
		time.Sleep(time.Duration(50+170*k) * time.Millisecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	got, problems, err := (&Store{Dir: dir}).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 0 {
		t.Errorf("List found torn files after kills: %v", problems)
	}
	if len(got) == 0 {
		t.Fatal("no result was saved before the kills; the test proves nothing")
	}
	for _, r := range got {
		if len(r.Timeline) != 30_000 {
			t.Errorf("%s has %d timeline points, want 30000", r.ID, len(r.Timeline))
		}
	}
	entries, _ := os.ReadDir(dir)
	temps := 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) {
			temps++
		}
	}
	t.Logf("%d results complete, %d temporary files left by kills (ignored)", len(got), temps)
}

// waitForSavedResult polls dir until it holds a complete result file.
func waitForSavedResult(t *testing.T, dir string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), tempPrefix) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the saving process wrote no result in %v", limit)
}

// TestOpenStoreRemovesStaleTemps: a crashed save's temporary file is removed
// once it is old; a fresh one (a save in progress elsewhere) is kept.
func TestOpenStoreRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, tempPrefix+"a.json-1")
	fresh := filepath.Join(dir, tempPrefix+"b.json-2")
	oldInspection := filepath.Join(dir, InspectionsFolder, tempPrefix+"c.json-3")
	if err := os.Mkdir(filepath.Join(dir, InspectionsFolder), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{old, fresh, oldInspection} {
		if err := os.WriteFile(p, []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{old, oldInspection} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := OpenStore(dir); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{old, oldInspection} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale temporary file %s kept: %v", p, err)
		}
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temporary file removed: %v", err)
	}
}

// TestOpenStoreSystemFolder: a folder in which no file can be made though
// it is there (/proc/self) is refused as such, not as "no such file".
func TestOpenStoreSystemFolder(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip(err)
	}
	_, err := OpenStore("/proc/self")
	if err == nil || strings.Contains(err.Error(), "no such file") || !strings.Contains(err.Error(), "results_dir /proc/self: a folder in which no file can be created") {
		t.Errorf("OpenStore(/proc/self): %v", err)
	}
}

// TestJobsGrouping: results group by their job, newest job first, each
// job's results in the order measured; results with no job group by time.
func TestJobsGrouping(t *testing.T) {
	a := result.NewJob("run packed,hashed 1e3", result.FaceCLI, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	b := result.NewJob("sweep types", result.FaceDesktop, time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	rs := []result.Result{
		stored("20261201T110005.000Z-hashed-0004", "2026-12-01T11:00:04Z", &b),
		stored("20261201T100002.000Z-hashed-0002", "2026-12-01T10:00:01Z", &a),
		stored("20261201T100001.000Z-packed-0001", "2026-12-01T10:00:00Z", &a),
		// Saved before jobs: two back to back, then one after a pause.
		stored("20200101T000010.000Z-gomap-0011", "2020-01-01T00:00:05Z", nil),
		stored("20200101T000004.000Z-packed-0010", "2020-01-01T00:00:00Z", nil),
		stored("20200101T001000.000Z-sparse-0012", "2020-01-01T00:09:00Z", nil),
	}
	jobs := Jobs(rs)
	var got []string
	for _, j := range jobs {
		got = append(got, j.Name+": "+strings.Join(j.ResultIDs(), " "))
	}
	want := []string{
		"sweep types: 20261201T110005.000Z-hashed-0004",
		"run packed,hashed 1e3: 20261201T100001.000Z-packed-0001 20261201T100002.000Z-hashed-0002",
		"saved before jobs: sparse · UInt64→UInt16 · 1K rows: 20200101T001000.000Z-sparse-0012",
		"saved before jobs: packed, gomap · UInt64→UInt16 · 1K rows: 20200101T000004.000Z-packed-0010 20200101T000010.000Z-gomap-0011",
	}
	if !slices.Equal(got, want) {
		t.Errorf("jobs\n got %q\nwant %q", got, want)
	}
	if !jobs[2].Legacy || jobs[1].Legacy || jobs[2].ID != "no-job-20200101T001000.000Z-sparse-0012" || jobs[0].Face != result.FaceDesktop {
		t.Errorf("jobs %+v", jobs)
	}
	if d := DescribeJob(jobs[1]); d != "2 results · packed, hashed · UInt64→UInt16 · 1K rows" {
		t.Errorf("DescribeJob = %q", d)
	}
}

// TestStoreJobs: a saved job is found by its id and deleted whole; results
// saved before jobs load beside it; an unknown job is named.
func TestStoreJobs(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	job := result.NewJob("run packed,hashed 1e3", result.FaceCLI, time.Now())
	for _, r := range []result.Result{
		stored("20261201T100001.000Z-packed-0001", "2026-12-01T10:00:00Z", &job),
		stored("20261201T100002.000Z-hashed-0002", "2026-12-01T10:00:01Z", &job),
		stored("20200101T000004.000Z-packed-0010", "2020-01-01T00:00:00Z", nil),
	} {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	jobs, problems, err := s.Jobs(ctx)
	if err != nil || len(problems) != 0 || len(jobs) != 2 || jobs[0].ID != job.ID || len(jobs[0].Results) != 2 || *jobs[0].Results[0].Job != job {
		t.Fatalf("jobs %+v, %v, %v", jobs, problems, err)
	}
	deleted, err := s.DeleteJob(ctx, job.ID)
	if err != nil || len(deleted) != 2 {
		t.Fatalf("DeleteJob: %v, %v", deleted, err)
	}
	if left, _ := filepath.Glob(filepath.Join(s.Dir, "*.json")); len(left) != 1 || filepath.Base(left[0]) != "20200101T000004.000Z-packed-0010.json" {
		t.Errorf("after deleting the job the folder holds %v, want the old result alone", left)
	}
	var fe *fault.FieldError
	if _, err := s.DeleteJob(ctx, job.ID); !errors.As(err, &fe) || !strings.Contains(err.Error(), "job "+job.ID+": no such job in "+s.Dir) {
		t.Errorf("deleting it again: %v", err)
	}
	if _, err := s.DeleteJob(ctx, "no-job-20200101T000004.000Z-packed-0010"); err != nil {
		t.Errorf("deleting a job saved before jobs: %v", err)
	}
}

// TestTestsKeepOutOfTheUsersHistory: a test program cannot save into the
// person's own results folder (its runs would show in their History).
func TestTestsKeepOutOfTheUsersHistory(t *testing.T) {
	home := filepath.Join(string(filepath.Separator), "home", "someone")
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	for _, dir := range []string{"", filepath.Join(home, ".local", "share", "packlab", "results")} {
		_, err := OpenStore(dir)
		if err == nil || !strings.Contains(err.Error(), "a test program may not save into the user's results folder") {
			t.Errorf("OpenStore(%q) in a test: %v, want a refusal", dir, err)
		}
	}
	if _, err := os.Stat(home); err == nil {
		t.Errorf("the refusal created %s", home)
	}
	// Under the temporary folder (XDG_DATA_HOME set by a test) it is a
	// test's own.
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	if _, err := OpenStore(""); err != nil {
		t.Errorf("OpenStore with XDG_DATA_HOME under %s: %v", os.TempDir(), err)
	}
}

// TestOutputErrorsNameThePath: a write that fails (a full disk) names the
// output as the user gave it, not the temporary file beside it, which
// the user never named and which is gone once the write is given up.
func TestOutputErrorsNameThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.html")
	o, err := CreateOutput("out", path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	o.f.Close() // as a full disk does, the write fails
	_, err = o.Write([]byte("x"))
	if err == nil || !strings.HasPrefix(err.Error(), "write "+path+": ") {
		t.Errorf("a failed write: %v, want it to name %s", err, path)
	}
}

// TestOutputStopsWithItsContext: a write to a named pipe whose reader
// does not read returns when the context ends (Ctrl-C), where it waited
// for ever.
func TestOutputStopsWithItsContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "report.html")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a reader that never reads
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o, err := CreateOutput("out", fifo, false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Abort()
	if !o.Direct() {
		t.Errorf("a named pipe is not written directly")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer o.StopWith(ctx)()
	done := make(chan error, 1)
	go func() {
		_, err := o.Write(make([]byte, 4<<20)) // more than the pipe holds
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("the write after the cancel: %v, want os.ErrDeadlineExceeded", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the write has not returned 5 s after the cancel")
	}
}
