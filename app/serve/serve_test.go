package serve

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packlab/packlab/app/flags"
)

// TestServeBadInput: bad flags are one line naming the flag and the value,
// before anything is built or served.
func TestServeBadInput(t *testing.T) {
	notSite := t.TempDir() // a folder of other things: refused before a build is begun (issue 48)
	if err := os.WriteFile(filepath.Join(notSite, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--addr", "8080"}, "--addr 8080: not HOST:PORT (allowed: e.g. 127.0.0.1:8080, localhost:0)"},
		{[]string{"serve", "--addr", "127.0.0.1:"}, "--addr 127.0.0.1:: not HOST:PORT"},
		{[]string{"serve", "--addr", ":99999"}, "--addr :99999: port 99999 is not a number from 0 to 65535 (allowed: e.g. 127.0.0.1:8080, localhost:0)"},
		{[]string{"serve", "--addr", "localhost:http"}, "--addr localhost:http: port http is not a number from 0 to 65535"},
		{[]string{"serve", "--addr", "192.0.2.1:8080"}, "--addr 192.0.2.1:8080: cannot listen: bind: cannot assign requested address (allowed: a free port of an address of this machine, or port 0 for any free one)"},
		{[]string{"serve", "--dir", " "}, `--dir " ": empty`},
		{[]string{"serve", "--port", "1"}, "unknown flag --port for serve"},
		{[]string{"serve", "extra"}, `serve: unexpected argument "extra"`},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--dir", notSite}, "--dir " + notSite + ": has files and is not a site packlab built"},
	} {
		_, _, err := packlab(t, c.args...)
		var ue *flags.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("packlab %s: error %v, want a usage error containing %q", strings.Join(c.args, " "), err, c.want)
		}
	}
	out, _, err := packlab(t, "serve", "--help")
	if err != nil || !strings.Contains(out, "packlab serve [flags]") || !strings.Contains(out, "--open") {
		t.Errorf("serve --help: %v\n%s", err, out)
	}
}

// TestBrowserPage: the built site's page is the frontend's, with the wasm
// backend plugged in before backend.js, the wasm memory named, and no
// script left blocking the first paint; a page without the anchors is an
// error, not a page that silently has no backend.
func TestBrowserPage(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("frontend", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	page, err := browserPage(src)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	scripts := regexp.MustCompile(`<script src="([^"]+)"([^>]*)></script>`).FindAllStringSubmatch(s, -1)
	var order []string
	for _, m := range scripts {
		order = append(order, m[1])
		if strings.TrimSpace(m[2]) != "defer" {
			t.Errorf("script %s is %q, want deferred", m[1], m[2])
		}
	}
	if got := strings.Join(order, " "); got != "vendor/echarts.min.js js/backend-wasm.js js/backend.js js/lab.js" {
		t.Errorf("scripts in order %s", got)
	}
	if !strings.Contains(s, `<div class="k">wasm memory</div>`) || strings.Contains(s, "RSS now") {
		t.Error("the progress label still says RSS")
	}
	if _, err := browserPage([]byte(`<html><script src="js/lab.js"></script></html>`)); err == nil || !strings.Contains(err.Error(), "backend.js") {
		t.Errorf("a page without backend.js: error %v, want one naming it", err)
	}
}

// site writes a small site folder: a page, a .wasm and its gzip copy.
func site(t *testing.T) (dir string, wasm []byte) {
	t.Helper()
	dir = t.TempDir()
	wasm = append([]byte("\x00asm\x01\x00\x00\x00"), bytes.Repeat([]byte("packlab "), 4096)...)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write(wasm)
	w.Close()
	files := map[string][]byte{
		"index.html":      []byte("<!doctype html><title>packlab</title>"),
		"packlab.wasm":    wasm,
		"packlab.wasm.gz": z.Bytes(),
		"js/lab.js":       []byte("// lab"),
		"css/.keep":       nil,
		siteStamp:         []byte("{}"),
	}
	for _, name := range slices.Sorted(maps.Keys(files)) { // NAME before NAME.gz
		b := files[name]
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, wasm
}

// TestSiteHandler: .wasm goes out as application/wasm, gzipped to a browser
// that accepts gzip and plain to one that does not; only GET and HEAD; no
// way out of the folder; a .gz older than its file is not sent.
func TestSiteHandler(t *testing.T) {
	dir, wasm := site(t)
	srv := httptest.NewServer(siteHandler(http.Dir(dir)))
	defer srv.Close()
	get := func(method, path, accept string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		req.Header.Set("Accept-Encoding", accept) // set: the client then does not decompress by itself
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}

	resp, body := get("GET", "/packlab.wasm", "gzip, deflate, br")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/wasm" || resp.Header.Get("Content-Encoding") != "gzip" ||
		!strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
		t.Fatalf("GET /packlab.wasm with gzip: %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Equal(plain, wasm) || len(body) >= len(wasm) {
		t.Errorf("the gzipped .wasm (%d bytes) decompresses to %d bytes, want the %d of packlab.wasm", len(body), len(plain), len(wasm))
	}
	for _, accept := range []string{"", "identity", "gzip;q=0", "br"} {
		resp, body = get("GET", "/packlab.wasm", accept)
		if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, wasm) || resp.Header.Get("Content-Type") != "application/wasm" {
			t.Errorf("Accept-Encoding %q: encoding %q, %d bytes, type %q; want packlab.wasm as it is", accept, resp.Header.Get("Content-Encoding"), len(body), resp.Header.Get("Content-Type"))
		}
	}
	resp, body = get("GET", "/", "gzip")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "<title>packlab") {
		t.Errorf("GET /: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp, _ = get("GET", "/js/lab.js", "")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET /js/lab.js: %d %v", resp.StatusCode, resp.Header)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/index.html", http.StatusMethodNotAllowed},
		{"GET", "/missing.js", http.StatusNotFound},
		{"GET", "/css/", http.StatusNotFound}, // no listings
		{"GET", "/../../etc/passwd", http.StatusNotFound},
		{"HEAD", "/packlab.wasm", http.StatusOK},
	} {
		if resp, _ := get(c.method, c.path, ""); resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
		}
	}

	// A .gz of another file (its length differs) or older than its file
	// is stale: the file goes out plain.
	gz := filepath.Join(dir, "packlab.wasm.gz")
	good, _ := os.ReadFile(gz)
	if err := os.WriteFile(filepath.Join(dir, "packlab.wasm"), append(wasm, '!'), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(gz, time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	resp, body = get("GET", "/packlab.wasm", "gzip")
	if resp.Header.Get("Content-Encoding") != "" || len(body) != len(wasm)+1 {
		t.Errorf("with the .gz of an older packlab.wasm: encoding %q, %d bytes; want packlab.wasm plain", resp.Header.Get("Content-Encoding"), len(body))
	}
	os.WriteFile(filepath.Join(dir, "packlab.wasm"), wasm, 0o644)
	os.WriteFile(gz, good, 0o644)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(gz, old, old); err != nil {
		t.Fatal(err)
	}
	resp, body = get("GET", "/packlab.wasm", "gzip")
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(body, wasm) {
		t.Errorf("with a .gz older than its file: encoding %q, %d bytes; want packlab.wasm plain", resp.Header.Get("Content-Encoding"), len(body))
	}
}

// TestEnsureSite: without the packlab source (or Go) a built folder is
// served as it is, and a missing one is a clear error saying what to do;
// with the source, a folder older than a source file is stale.
func TestEnsureSite(t *testing.T) {
	built, _ := site(t)
	t.Chdir(t.TempDir()) // no go.mod of packlab here or above
	if err := ensureSite(context.Background(), built, io.Discard); err != nil {
		t.Errorf("a built site, nothing to build it from: %v, want it served as it is", err)
	}
	missing := filepath.Join(t.TempDir(), "web")
	err := ensureSite(context.Background(), missing, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--dir "+missing+": no built site there") || !strings.Contains(err.Error(), "make web") {
		t.Errorf("no site and no source: %v, want an error naming the folder and 'make web'", err)
	}

	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module github.com/packlab/packlab\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(src, "frontend", "js"), 0o755); err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(src, "frontend", "js", "lab.js")
	if err := os.WriteFile(js, []byte("//"), 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Hour)
	for _, p := range []string{js, filepath.Join(src, "go.mod")} {
		os.Chtimes(p, past, past)
	}
	if stale, why, err := siteStale(src, built); err != nil || stale {
		t.Errorf("a site newer than its sources: stale %v (%s), %v", stale, why, err)
	}
	now := time.Now().Add(time.Minute)
	os.Chtimes(js, now, now)
	if stale, why, err := siteStale(src, built); err != nil || !stale || why != filepath.Join("frontend", "js", "lab.js") {
		t.Errorf("a source file newer than the site: stale %v (%q), %v; want stale because of frontend/js/lab.js", stale, why, err)
	}
	t.Chdir(filepath.Join(src, "frontend"))
	if root, err := sourceRoot(); err != nil || root != src {
		t.Errorf("sourceRoot from inside the source: %q, %v; want %q", root, err, src)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe: packlab serve on a free loopback port prints the URL, serves
// the folder, and stops when its context ends.
//
// With --open and no display (ssh, a container, CI), it says that it
// opened no browser and why, and serves all the same.
func TestServe(t *testing.T) {
	dir, wasm := site(t)
	t.Chdir(t.TempDir()) // serve the folder as it is: no source to rebuild from
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runContext(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--dir", dir, "--open"}, &out, &errOut)
	}()
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		url = regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(out.String())
	}
	if url == "" {
		cancel()
		t.Fatalf("no URL printed: %q %q", out.String(), errOut.String())
	}
	resp, err := http.Get(url + "packlab.wasm")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(body, wasm) {
		t.Errorf("GET packlab.wasm: %d, %d bytes", resp.StatusCode, len(body))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v after its context ended", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
	if strings.Contains(errOut.String(), "reachable from other machines") {
		t.Errorf("a loopback address warned: %q", errOut.String())
	}
	if runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		want := "packlab: --open: no display (DISPLAY and WAYLAND_DISPLAY are not set), so no browser was opened; open " + url + " in a browser yourself\n"
		if errOut.String() != want {
			t.Errorf("serve --open with no display: stderr %q, want %q", errOut.String(), want)
		}
	}
}

// TestBuildRefusesAFolderOfOtherThings: building replaces the folder
// whole, so a folder with other files (and no stamp) is refused and kept.
func TestBuildRefusesAFolderOfOtherThings(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := buildSite(context.Background(), t.TempDir(), dir, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is not a site packlab built") {
		t.Errorf("building over a folder of other files: %v", err)
	}
	if b, err := os.ReadFile(keep); err != nil || string(b) != "mine" {
		t.Errorf("the folder's file is gone: %v", err)
	}
	file := filepath.Join(dir, "notes.txt")
	if err := buildSite(context.Background(), t.TempDir(), file, io.Discard); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("building over a file: %v", err)
	}
}

// TestBuildSite builds the real site from this source: every part is there,
// the .wasm is WebAssembly and its .gz copy is the same bytes.
func TestBuildSite(t *testing.T) {
	if testing.Short() {
		t.Skip("builds packlab.wasm (seconds to a minute); skipped with -short")
	}
	root, err := sourceRoot()
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(t.TempDir(), "web")
	var log bytes.Buffer
	if err := buildSite(context.Background(), root, dir, &log); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"index.html", "wasm_exec.js", "packlab.wasm", "packlab.wasm.gz", siteStamp,
		"js/backend-wasm.js", "js/wasm-worker.js", "js/backend.js", "js/lab.js", "css/lab.css", "vendor/echarts.min.js"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Errorf("the site has no %s: %v", name, err)
		}
	}
	wasm, _ := os.ReadFile(filepath.Join(dir, "packlab.wasm"))
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		t.Errorf("packlab.wasm starts %q, want WebAssembly's magic", wasm[:min(len(wasm), 8)])
	}
	f, _ := os.Open(filepath.Join(dir, "packlab.wasm.gz"))
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.Equal(plain, wasm) {
		t.Error("packlab.wasm.gz is not packlab.wasm")
	}
	if stale, why, err := siteStale(root, dir); err != nil || stale {
		t.Errorf("a site just built is stale (%s): %v", why, err)
	}
	// No file of the site names the folder it was built from (issue 14:
	// packlab-site.json held the absolute source path; a site may be
	// published as it is).
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(root)) {
				t.Errorf("%s names the source folder %s", p, root)
			}
		}
		return nil
	})
	t.Log(strings.TrimSpace(log.String()))
}
