//go:build !js

package usecase

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/server/servertest"
)

// TestInspectKeepsJob: an inspection of a real server is kept as a job of
// the history, named after what it found, holding no password and no
// secret of a dictionary's source in any byte saved; a failed inspection
// (a wrong password) keeps nothing; NoSave keeps nothing.
func TestInspectKeepsJob(t *testing.T) {
	node := servertest.Start(t)
	const srcSecret = "src-secret-5150"
	node.Table(t, "src", "v UInt16", "number, number", 1000)
	node.Dictionary(t, "d1", "src", "v UInt16", "LIFETIME(0) LAYOUT(HASHED())")
	node.Exec(t, "CREATE DICTIONARY d2 (id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src' USER 'default' PASSWORD '"+srcSecret+"')) LIFETIME(0) LAYOUT(HASHED())")
	// d2 fails to load (the server's user has no such password): its
	// exception is kept, its source's password is not.
	if _, err := node.Query("SYSTEM RELOAD DICTIONARY d2"); err == nil {
		t.Fatal("d2 loaded with a wrong password")
	}
	// The CREATE DICTIONARY an advice starts from: ClickHouse hides a
	// source's password in it.
	if ddl := node.Exec(t, "SELECT create_table_query FROM system.tables WHERE name = 'd2'"); strings.Contains(ddl, srcSecret) || !strings.Contains(ddl, "[HIDDEN]") {
		t.Errorf("system.tables shows d2's source as %q", ddl)
	}
	s := openStore(t)

	// The test server's only user has no password: one given fails (over
	// HTTP: the native listener aborts on a failed login), and nothing is kept.
	const password = "pw-never-saved-31"
	_, err := Inspect(context.Background(), InspectAsk{Settings: server.Settings{URL: node.HTTPURL(), Password: password}, Store: s, Face: result.FaceCLI})
	if err == nil || strings.Contains(err.Error(), password) {
		t.Fatalf("a wrong password: %v", err)
	}
	if jobs, _, _ := s.Jobs(context.Background()); len(jobs) != 0 {
		t.Fatalf("a failed inspection kept %d jobs", len(jobs))
	}

	got, err := Inspect(context.Background(), InspectAsk{Settings: server.Settings{URL: node.NativeURL()}, Store: s, Face: result.FaceDesktop})
	if err != nil || !got.Saved {
		t.Fatalf("inspect: saved %v, %v", got.Saved, err)
	}
	want := "inspect " + node.NativeURL() + " (2 dictionaries)"
	if got.Job.Name != want || got.Job.Face != result.FaceDesktop {
		t.Errorf("job %q from %q, want %q from the desktop", got.Job.Name, got.Job.Face, want)
	}
	j, err := s.FindJob(context.Background(), got.Job.ID)
	if err != nil || j.Inspection == nil || len(j.Inspection.Dictionaries) != 2 || j.Inspection.Dictionaries[0].Advice == nil {
		t.Fatalf("the kept job: %+v, %v", j, err)
	}
	// Every saved byte, the folder's files and the inspections' alike.
	err = filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		for _, secret := range []string{password, srcSecret} {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds %q", path, secret)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	if got, err := Inspect(context.Background(), InspectAsk{Settings: server.Settings{URL: node.HTTPURL()}, Store: s, NoSave: true}); err != nil || got.Saved || got.Inspection == nil {
		t.Errorf("NoSave: saved %v, %v", got.Saved, err)
	}
	if jobs, _, _ := s.Jobs(context.Background()); len(jobs) != 1 {
		t.Errorf("%d jobs after a NoSave inspection, want the one kept", len(jobs))
	}
}

// TestVerifyNothing: a plan with no ClickHouse answer has nothing to
// verify, and says so before it starts anything.
func TestVerifyNothing(t *testing.T) {
	started := false
	_, err := VerifyPlan(context.Background(), VerifyAsk{Starting: func(Verifying) { started = true }})
	if !errors.Is(err, ErrNothingToVerify) || started {
		t.Errorf("VerifyPlan of an empty plan: %v, started %v", err, started)
	}
}

// TestInspectKeptWhenVerifyCancelled: a cancel (Ctrl-C) while an advice is
// built on the server keeps the inspection read before it as a job, and its
// error says what stopped it; nothing of the build is left on the server.
// The inspection was printed and lost, and the error was "cancelled" alone.
func TestInspectKeptWhenVerifyCancelled(t *testing.T) {
	node := servertest.Start(t)
	node.Table(t, "src", "v UInt16", "number, number % 65536", 10_000)
	node.Dictionary(t, "d1", "src", "v UInt16", "LIFETIME(0) LAYOUT(HASHED())")
	s := openStore(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stopped by the test")
	got, err := Inspect(ctx, InspectAsk{Settings: server.Settings{URL: node.NativeURL()}, Store: s, Face: result.FaceCLI, Verify: "default.d1",
		VerifyStarting: func(of, layout string, rows int64) { cancel(stop) }})
	if !errors.Is(err, fault.ErrCancelled) || !strings.Contains(err.Error(), stop.Error()) {
		t.Errorf("cancelled while building the advice: %v, want a cancel naming %q", err, stop)
	}
	if !got.Saved || got.Inspection == nil {
		t.Fatalf("cancelled while building the advice: saved %v, inspection %v; want the inspection kept", got.Saved, got.Inspection != nil)
	}
	j, err := s.FindJob(context.Background(), got.Job.ID)
	if err != nil || j.Inspection == nil || len(j.Inspection.Dictionaries) != 1 || j.Inspection.Dictionaries[0].Verification != nil {
		t.Errorf("the kept job: %+v, %v; want the inspection without a verification", j, err)
	}
	if left := node.Exec(t, "SELECT count() FROM system.databases WHERE name LIKE 'packlab_verify_%'"); strings.TrimSpace(left) != "0" {
		t.Errorf("%s databases of packlab's left behind", left)
	}
}
