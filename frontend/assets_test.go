package frontend

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/report"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	f, err := FS().Open(name)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	st, err := f.Stat()
	if err != nil || st.Size() != int64(len(b)) || st.IsDir() {
		t.Fatalf("stat %s: %v, size %d for %d bytes", name, err, st.Size(), len(b))
	}
	return b
}

// The page loads ECharts from the copy experiments embeds, which is the npm
// package frontend/package.json pins.
func TestEChartsIsTheVendoredCopy(t *testing.T) {
	got := read(t, EChartsPath)
	if !bytes.Equal(got, []byte(report.EChartsJS())) {
		t.Fatalf("%s differs from report.EChartsJS()", EChartsPath)
	}
	if !bytes.Contains(got[:4096], []byte(`version="`+report.EChartsVersion+`"`)) &&
		!bytes.Contains(got, []byte(`"`+report.EChartsVersion+`"`)) {
		t.Errorf("%s does not name version %s", EChartsPath, report.EChartsVersion)
	}
	npm, err := os.ReadFile("node_modules/echarts/dist/echarts.min.js")
	if os.IsNotExist(err) {
		t.Log("frontend/node_modules not installed; compared with experiments' copy only")
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, npm) {
		t.Errorf("%s differs from node_modules/echarts/dist/echarts.min.js", EChartsPath)
	}
}

// Every script and stylesheet the page names is served, and none comes
// from a network.
func TestPageLoadsOnlyItsOwnFiles(t *testing.T) {
	page := string(read(t, "index.html"))
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(page, -1)
	if len(refs) < 4 {
		t.Fatalf("index.html names %d files, want the stylesheet, ECharts, backend.js and lab.js", len(refs))
	}
	for _, m := range refs {
		ref := m[1]
		if strings.Contains(ref, "//") {
			t.Errorf("index.html loads %q from a network", ref)
			continue
		}
		read(t, path.Clean(ref))
	}
	for _, want := range []string{EChartsPath, "js/backend.js", "js/lab.js", "css/lab.css"} {
		if !strings.Contains(page, `"`+want+`"`) {
			t.Errorf("index.html does not load %s", want)
		}
	}
}

func TestMissingFileIsNotExist(t *testing.T) {
	for _, name := range []string{"nope.js", "vendor/other.js", "../etc/passwd"} {
		if _, err := FS().Open(name); err == nil {
			t.Errorf("open %s: no error", name)
		} else if name != "../etc/passwd" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("open %s: %v, want not-exist (the asset server then answers 404)", name, err)
		}
	}
}

// The page's scripts parse (node --check), where Node is installed.
func TestScriptsParse(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	for _, name := range []string{"js/backend.js", "js/lab.js"} {
		out, err := exec.Command(node, "--check", name).CombinedOutput()
		if err != nil {
			t.Errorf("node --check %s: %v\n%s", name, err, out)
		}
	}
}
