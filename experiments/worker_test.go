package experiments

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/worker"
)

// TestMain lets this test binary serve as a worker process: the isolated
// runs of the tests start it again with WorkerEnv set, exactly as packlab
// starts itself with the __worker subcommand.
func TestMain(m *testing.M) { os.Exit(WorkerOr(m.Run)) }

// countWorkers wraps workerCommand for the duration of a test, recording
// every worker process it starts.
func countWorkers(t *testing.T) *workerLog {
	t.Helper()
	log := &workerLog{}
	orig := workerCommand
	workerCommand = func(ctx context.Context) (*exec.Cmd, error) {
		cmd, err := orig(ctx)
		if err == nil {
			log.mu.Lock()
			log.cmds = append(log.cmds, cmd)
			log.mu.Unlock()
		}
		return cmd, err
	}
	t.Cleanup(func() { workerCommand = orig })
	return log
}

type workerLog struct {
	mu   sync.Mutex
	cmds []*exec.Cmd
}

func (l *workerLog) started() []*exec.Cmd {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]*exec.Cmd(nil), l.cmds...)
}

// TestCancelKillsWorker cancels an isolated load as soon as it reports
// progress: Run returns promptly with ErrCancelled and the worker process has
// been killed, not left to finish.
func TestCancelKillsWorker(t *testing.T) {
	log := countWorkers(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelledAt time.Time
	cfg := config.Config{Layouts: []string{"packed", "hashed"}, Rows: 50_000_000, NoRead: true}
	res, err := Run(ctx, cfg, RunOptions{Progress: func(p worker.Progress) {
		if cancelledAt.IsZero() && p.Phase == worker.PhaseLoad && p.Rows > 0 {
			cancelledAt = time.Now()
			cancel()
		}
	}})
	if !errors.Is(err, fault.ErrCancelled) {
		t.Fatalf("Run after cancel: err = %v, want ErrCancelled", err)
	}
	if !strings.Contains(err.Error(), "packed at 50M rows was stopped before it finished") {
		t.Errorf("cancel message %q does not say what was stopped", err)
	}
	if len(res) != 0 {
		t.Errorf("got %d results from a run cancelled during its first load", len(res))
	}
	if d := time.Since(cancelledAt); d > 3*time.Second {
		t.Errorf("Run returned %v after the cancel, want promptly", d)
	}
	cmds := log.started()
	if len(cmds) != 1 {
		t.Fatalf("started %d workers, want 1 (the second layout must not start)", len(cmds))
	}
	st := cmds[0].ProcessState
	if st == nil {
		t.Fatal("the worker was not waited for")
	}
	if ws, ok := st.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("worker ended with %v, want killed by SIGKILL", st)
	}
}

// TestCancelInProcess: the same in this process.
func TestCancelInProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var at time.Time
	_, err := Run(ctx, config.Config{Layouts: []string{"packed"}, Rows: 50_000_000, NoRead: true, InProcess: true}, RunOptions{Progress: func(p worker.Progress) {
		if at.IsZero() && p.Rows > 0 {
			at = time.Now()
			cancel()
		}
	}})
	if !errors.Is(err, fault.ErrCancelled) {
		t.Fatalf("err = %v, want ErrCancelled", err)
	}
	if d := time.Since(at); d > 3*time.Second {
		t.Errorf("returned %v after the cancel", d)
	}
}

// TestWorkerCrashIsOneLine: a worker that dies without a result (here a
// shell that prints a panic and exits) is reported in one line that carries
// the panic's message, not its trace.
func TestWorkerCrashIsOneLine(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	orig := workerCommand
	workerCommand = func(ctx context.Context) (*exec.Cmd, error) {
		return exec.CommandContext(ctx, sh, "-c", "cat >/dev/null & echo 'panic: boom' >&2; echo 'goroutine 1 [running]:' >&2; echo 'main.main()' >&2; exit 2"), nil
	}
	defer func() { workerCommand = orig }()
	_, err = Run(context.Background(), config.Config{Layouts: []string{"hashed"}, Rows: 1000}, RunOptions{})
	if err == nil {
		t.Fatal("Run succeeded with a crashing worker")
	}
	want := "hashed: the worker process ended without a result (exit status 2): panic: boom"
	if err.Error() != want {
		t.Errorf("error\n got %q\nwant %q", err, want)
	}
}

// TestWorkerStopsWhenParentGoes: a worker whose stdin closes (its parent
// died) stops its load and says why.
func TestWorkerStopsWhenParentGoes(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 30M rows in this process")
	}
	pr, pw := io.Pipe()
	var out strings.Builder
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- ServeWorker(context.Background(), pr, &out)
	}()
	if _, err := pw.Write([]byte(`{"config":{"layouts":["packed"],"rows":30000000,"no_read":true},"layout":"packed"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	pw.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker kept loading after its stdin closed")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"error":"load cancelled after`) {
		t.Errorf("last line %q, want a cancelled load", last)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("took %v", d)
	}
}

// TestServeWorkerBadJob: a job the worker cannot run is an error line.
func TestServeWorkerBadJob(t *testing.T) {
	var out strings.Builder
	err := ServeWorker(context.Background(), strings.NewReader(`{"config":{"rows":10},"layout":"bogus"}`), &out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out.String()), `{"error":"unknown layout \"bogus\" (allowed: hashed, packed, sparse, hashed_array, gomap, compact, iceberg)"}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if err := ServeWorker(context.Background(), strings.NewReader(`not json`), &out); err == nil {
		t.Error("ServeWorker accepted a job that is not JSON")
	}
}
