package planner

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
)

// TestPlanGoCodeCompiles: every Go program the plan can print (each
// layout, a sharded load, a load factor, a reservation, a 16-byte key)
// builds and vets as it is, in a module of its own that requires packlab
// (replaced by this checkout), as a user would paste it.
func TestPlanGoCodeCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Go compiler")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Skip("no go command beside this toolchain")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module snippets\n\ngo 1.26\n\nrequire github.com/packlab/packlab v0.0.0\n\nreplace github.com/packlab/packlab => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte(goMod))
	write("go.sum", sum)
	n := 0
	add := func(c Candidate) {
		code := goCode(c)
		if !strings.Contains(code, "core.Load(ctx, src") {
			t.Fatalf("%s: no program:\n%s", SetupName(c), code)
		}
		write(filepath.Join("s"+string(rune('a'+n)), "main.go"), []byte(code))
		n++
	}
	for _, l := range core.Layouts() {
		add(Candidate{Layout: string(l), KeyType: "UInt64", ValueType: "UInt16", Shards: 1, Distinct: 1000})
	}
	add(Candidate{Layout: "compact", KeyType: "UInt32", ValueType: "Float64", Shards: 8, MaxLoadFactor: 0.92, FollowsMLF: true, Distinct: 1e9})
	add(Candidate{Layout: "packed", KeyType: "UUID", ValueType: "UInt8", Shards: 2, Preallocate: true, Distinct: 5e6, FollowsMLF: true, MaxLoadFactor: 0.5})
	add(Candidate{Layout: "hashed", KeyType: "UInt128", ValueType: "DateTime", Shards: 4, MaxLoadFactor: 0.75, FollowsMLF: true, Distinct: 1e6})
	cmd := exec.Command(goBin, "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the plan's Go code does not build: %v\n%s", err, out)
	}
}
