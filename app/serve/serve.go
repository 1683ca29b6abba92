// Package serve is `packlab serve`: the browser lab over HTTP on this
// machine, and the builder of its static site (the folder `make web`
// makes, build/web/):
//
//	index.html            frontend/index.html, with backend-wasm.js plugged in
//	                      before backend.js and the progress label "RSS now"
//	                      named for what the browser measures (wasm memory)
//	css/ js/              frontend/css, frontend/js (the same files the
//	                      desktop window shows)
//	vendor/echarts.min.js experiments' pinned ECharts
//	wasm_exec.js          the Go toolchain's $(go env GOROOT)/lib/wasm/wasm_exec.js
//	packlab.wasm          ./cmd/packlab-wasm built with GOOS=js GOARCH=wasm
//	*.gz                  gzip copies of the big files, for servers that
//	                      send them to browsers that accept gzip
//	packlab-site.json     what built the folder, and when
//
// Any static host serves the folder as it is. packlab serve builds it first
// when it is missing or older than the sources (with the Go toolchain and the
// packlab source at hand), serves .wasm as application/wasm, and sends the
// .gz copy of a file to a browser that accepts gzip.
package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/packlab/packlab/app"
	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/frontend"
)

// Usage is `packlab serve -h`.
const Usage = `packlab serve [flags] — the browser lab (the core in WebAssembly) on this machine

  --addr HOST:PORT      where to listen (default 127.0.0.1:8080; port 0 picks a free one)
  --dir DIR             the site folder (default build/web); built first when it
                        is missing or older than the sources and the Go toolchain
                        and the packlab source are here
  --open                open the lab in the default browser
  --allow-host NAME     answer requests for NAME too (comma-separated); by default
                        only localhost and addresses (an IP literal), so that a page
                        of another site cannot reach the lab through DNS rebinding
  --build               build the site folder and exit (what 'make web' runs)

A binary built with the site inside ('make web-binary') serves it with no
folder and no Go toolchain, unless --dir is given.

The folder is a static site: any web server can serve it as it is.
` + flags.Rules

// siteStamp is written last into a built site: what built it, from what.
const siteStamp = "packlab-site.json"

// Site is the record of a built site folder.
type Site struct {
	BuiltAt   string `json:"built_at"`
	GoVersion string `json:"go_version"`
	Packlab   string `json:"packlab"` // the version of packlab that built it (no path: the site may be published)
}

// Flags defines serve's flags on fs, which the command line parses, and
// returns `packlab serve`: its flags checked, it builds the site folder or
// serves it until ctx is cancelled.
func Flags(fs *flag.FlagSet) flags.Action {
	o := &options{}
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "listen address")
	fs.StringVar(&o.dir, "dir", filepath.Join("build", "web"), "site folder")
	fs.BoolVar(&o.open, "open", false, "open the browser")
	fs.BoolVar(&o.buildOnly, "build", false, "build the site and exit")
	fs.Func("allow-host", "a host name to answer to", func(s string) error {
		for _, h := range strings.Split(s, ",") {
			h = strings.ToLower(strings.TrimSpace(h))
			if h == "" || strings.ContainsAny(h, "/:@ ") {
				return flags.Usagef("--allow-host %s: not a host name (allowed: names like lab.example.com, comma-separated)", s)
			}
			o.allowHosts = append(o.allowHosts, h)
		}
		return nil
	})
	return func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
		if err := o.check(fs, args); err != nil {
			return err
		}
		return o.command(ctx, stdout, stderr)
	}
}

// command is `packlab serve` once its flags are checked.
func (o *options) command(ctx context.Context, stdout, stderr io.Writer) error {
	if o.buildOnly {
		src, err := sourceRoot()
		if err != nil {
			return err
		}
		return buildSite(ctx, src, o.dir, stderr)
	}
	// The port and the folder are checked before any site is built: a port
	// in use or a --dir that is a file is said at once, not after a build.
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return flags.Usagef("--addr %s: cannot listen: %v (allowed: a free port of an address of this machine, or port 0 for any free one)", o.addr, errors.Unwrap(err))
	}
	defer ln.Close()
	if st, err := os.Stat(o.dir); err == nil && !st.IsDir() {
		return flags.Usagef("--dir %s: is a file (allowed: a site folder, e.g. build/web, made when missing)", o.dir)
	}
	if EmbeddedSite() == nil || o.dirSet {
		// A folder of other things is refused now, not after "building
		// the browser lab" has been said (buildSite would refuse it then).
		if abs, err := filepath.Abs(o.dir); err == nil {
			if err := replaceable(abs); err != nil {
				return flags.Usagef("--dir %s: %v (allowed: a site folder 'make web' built, or a new or empty one)", o.dir, err)
			}
		}
	}
	root, what, closeRoot, err := o.site(ctx, stderr)
	if err != nil {
		return err
	}
	defer closeRoot()
	return o.serve(ctx, ln, root, what, stdout, stderr)
}

// options is serve's flags, checked.
type options struct {
	addr, dir    string
	dirSet, open bool
	buildOnly    bool
	allowHosts   []string
}

// check checks serve's flags once fs has parsed them; args are the
// arguments that are not flags.
func (o *options) check(fs *flag.FlagSet, args []string) error {
	if len(args) > 0 {
		return flags.Usagef("serve: unexpected argument %q (flags start with --)", args[0])
	}
	if err := flags.CheckConflicts(fs, []flags.Conflict{
		{A: "open", B: "build", Why: "--build only builds the site folder"}, {A: "addr", B: "build", Why: "--build only builds the site folder"},
	}); err != nil {
		return err
	}
	if err := checkAddr(o.addr); err != nil {
		return err
	}
	if strings.TrimSpace(o.dir) == "" {
		return flags.Usagef(`--dir "": needs a folder (allowed: a site folder, e.g. build/web)`)
	}
	_, o.dirSet = flags.Given(fs, "dir")
	return nil
}

// site is what to serve and how to name it: the site built into this
// binary (make web-binary: no folder, no toolchain needed) unless --dir is
// given, else the site folder, built first when missing or stale.
func (o *options) site(ctx context.Context, stderr io.Writer) (root http.FileSystem, what string, closeRoot func(), err error) {
	if site := EmbeddedSite(); site != nil && !o.dirSet {
		return http.FS(site), "the site built into this binary", func() {}, nil
	}
	if err := ensureSite(ctx, o.dir, stderr); err != nil {
		return nil, "", nil, err
	}
	r, closeRoot, err := siteFolder(o.dir) // serve_limits.go: no link out of it
	if err != nil {
		return nil, "", nil, fmt.Errorf("--dir %s: %w", o.dir, err)
	}
	return r, o.dir, closeRoot, nil
}

// serve answers on ln until ctx is cancelled (a clean stop) or the server
// fails, opening the browser first with --open.
func (o *options) serve(ctx context.Context, ln net.Listener, root http.FileSystem, what string, stdout, stderr io.Writer) error {
	url := "http://" + ln.Addr().String() + "/"
	srv := newSiteServer(root, o.allowHosts)
	ln = newLimitListener(ln, serveLimits.conns)
	fmt.Fprintf(stdout, "packlab: the browser lab is at %s (serving %s; Ctrl-C stops)\n", url, what)
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !isLoopback(host) {
		fmt.Fprintf(stderr, "packlab: note: %s is reachable from other machines\n", host)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if o.open {
		if err := openBrowser(url); err != nil {
			fmt.Fprintf(stderr, "packlab: --open: %v, so no browser was opened; open %s in a browser yourself\n", err, url)
		}
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serving %s: %w", url, err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return nil
	}
}

func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return flags.Usagef("--addr %s: not HOST:PORT (allowed: e.g. 127.0.0.1:8080, localhost:0)", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil { // :99999, :http
		return flags.Usagef("--addr %s: port %s is not a number from 0 to 65535 (allowed: e.g. 127.0.0.1:8080, localhost:0)", addr, port)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ensureSite makes sure dir holds a built site: it builds it when it is
// missing, or older than the sources, and the toolchain and the source are
// here. With neither a site nor a way to build one, the error says what to do.
func ensureSite(ctx context.Context, dir string, stderr io.Writer) error {
	_, statErr := os.Stat(filepath.Join(dir, siteStamp))
	have := statErr == nil
	src, srcErr := sourceRoot()
	if srcErr != nil {
		if have {
			return nil // a built site and nothing to build it from: serve it
		}
		return fmt.Errorf("--dir %s: no built site there (%s is missing), and it cannot be built here: %v; build it with 'make web' in the packlab source, or give --dir a folder 'make web' built",
			dir, siteStamp, srcErr)
	}
	if have {
		stale, why, err := siteStale(src, dir)
		if err != nil {
			return err
		}
		if !stale {
			return nil
		}
		fmt.Fprintf(stderr, "packlab: %s is older than %s: rebuilding it\n", dir, why)
	} else {
		fmt.Fprintf(stderr, "packlab: building the browser lab into %s (once)\n", dir)
	}
	return buildSite(ctx, src, dir, stderr)
}

// sourceRoot finds the packlab source and a Go toolchain to build it with:
// the folder of go.mod declaring module github.com/packlab/packlab, from
// the current folder upwards.
func sourceRoot() (string, error) {
	if _, err := exec.LookPath("go"); err != nil {
		return "", errors.New("no Go toolchain on PATH (go)")
	}
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && modulePath(b) == "github.com/packlab/packlab" {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("not inside the packlab source (no go.mod of github.com/packlab/packlab in this folder or above)")
		}
		d = up
	}
}

func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// siteInputs are the source folders and files a site is built from.
var siteInputs = []string{"go.mod", "go.sum", "core", "experiments", "app", "frontend", "cmd/packlab-wasm"}

// siteStale reports whether a source file is newer than the site's stamp,
// and names the newest one.
func siteStale(src, dir string) (bool, string, error) {
	st, err := os.Stat(filepath.Join(dir, siteStamp))
	if err != nil {
		return true, siteStamp, nil
	}
	built := st.ModTime()
	var newest string
	var newestT time.Time
	for _, in := range siteInputs {
		root := filepath.Join(src, filepath.FromSlash(in))
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				if name := d.Name(); name == "node_modules" || name == "testdata" || (strings.HasPrefix(name, ".") && p != root) {
					return fs.SkipDir
				}
				return nil
			}
			if strings.HasSuffix(p, "_test.go") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			if info.ModTime().After(newestT) {
				newest, newestT = p, info.ModTime()
			}
			return nil
		})
		if err != nil {
			return false, "", fmt.Errorf("checking the sources of %s: %w", dir, err)
		}
	}
	if newestT.After(built) {
		rel, _ := filepath.Rel(src, newest)
		return true, rel, nil
	}
	return false, "", nil
}

// buildSite builds the static site from the source at src into dir: into a
// fresh folder beside it, which then replaces dir whole.
func buildSite(ctx context.Context, src, dir string, stderr io.Writer) error {
	start := time.Now()
	goBin, err := exec.LookPath("go")
	if err != nil {
		return errors.New("building the browser lab needs the Go toolchain (go) on PATH")
	}
	goroot, err := exec.CommandContext(ctx, goBin, "env", "GOROOT").Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	wasmExec := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js")

	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := replaceable(abs); err != nil {
		return fmt.Errorf("--dir %s: %w", dir, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fmt.Errorf("--dir %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".building-")
	if err != nil {
		return fmt.Errorf("--dir %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)

	if err := writeSite(ctx, goBin, wasmExec, src, tmp); err != nil {
		return err
	}
	if err := swapIn(tmp, abs, dir); err != nil {
		return err
	}
	wasm, _ := os.Stat(filepath.Join(abs, "packlab.wasm"))
	gz, _ := os.Stat(filepath.Join(abs, "packlab.wasm.gz"))
	if wasm != nil && gz != nil {
		fmt.Fprintf(stderr, "packlab: built %s in %.1f s (packlab.wasm %.1f MB, %.1f MB gzipped)\n",
			dir, time.Since(start).Seconds(), float64(wasm.Size())/1e6, float64(gz.Size())/1e6)
	}
	return nil
}

// writeSite writes the site into tmp: packlab.wasm built from src,
// wasm_exec.js from the toolchain, the frontend, ECharts, the browser's
// index.html, gzip copies of the big files and the stamp.
func writeSite(ctx context.Context, goBin, wasmExec, src, tmp string) error {
	// packlab.wasm
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(tmp, "packlab.wasm"), "./cmd/packlab-wasm")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building packlab.wasm (GOOS=js GOARCH=wasm go build ./cmd/packlab-wasm): %v\n%s", err, strings.TrimSpace(out.String()))
	}
	// wasm_exec.js, the frontend, ECharts.
	if err := copyFile(wasmExec, filepath.Join(tmp, "wasm_exec.js")); err != nil {
		return fmt.Errorf("copying the toolchain's wasm_exec.js: %w", err)
	}
	fe := filepath.Join(src, "frontend")
	for _, sub := range []string{"css", "js"} {
		if err := copyTree(filepath.Join(fe, sub), filepath.Join(tmp, sub)); err != nil {
			return fmt.Errorf("copying the frontend: %w", err)
		}
	}
	if err := copyFile(filepath.Join(src, "experiments", "report", "assets", "echarts.min.js"), filepath.Join(tmp, filepath.FromSlash(frontend.EChartsPath))); err != nil {
		return fmt.Errorf("copying ECharts: %w", err)
	}
	page, err := os.ReadFile(filepath.Join(fe, "index.html"))
	if err != nil {
		return fmt.Errorf("reading the frontend's page: %w", err)
	}
	page, err = browserPage(page)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "index.html"), page, 0o644); err != nil {
		return err
	}
	if err := gzipLarge(tmp); err != nil {
		return fmt.Errorf("compressing the site: %w", err)
	}
	stamp, _ := json.MarshalIndent(Site{BuiltAt: time.Now().UTC().Format(time.RFC3339), GoVersion: runtime.Version(), Packlab: app.Version}, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, siteStamp), append(stamp, '\n'), 0o644); err != nil {
		return err
	}

	return nil
}

// swapIn puts the built folder tmp in place of abs (the user's --dir dir),
// the old one kept until the new one is there.
func swapIn(tmp, abs, dir string) error {
	old := ""
	if _, err := os.Stat(abs); err == nil {
		old = tmp + ".old"
		if err := os.Rename(abs, old); err != nil {
			return fmt.Errorf("--dir %s: replacing it: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, abs); err != nil {
		if old != "" {
			_ = os.Rename(old, abs)
		}
		return fmt.Errorf("--dir %s: %w", dir, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return os.Chmod(abs, 0o755)
}

// replaceable refuses to build over a folder that is neither missing, nor
// empty, nor a site built before (with its siteStamp): building replaces the
// folder whole, and --dir might name one with other things in it.
func replaceable(abs string) error {
	st, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return errors.New("is a file, not a folder")
	}
	if _, err := os.Stat(filepath.Join(abs, siteStamp)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("has files and is not a site packlab built (no %s): building would replace it; give a new or empty folder", siteStamp)
	}
	return nil
}

// The page's edits for the browser, each found exactly once: the wasm
// backend plugged in, the progress label named for what is measured, and
// the head's scripts deferred (see browserPage).
var pageEdits = []struct{ old, new, why string }{
	{`<script src="js/backend.js"></script>`,
		`<script src="js/backend-wasm.js"></script>` + "\n" + `<script src="js/backend.js"></script>`,
		"plug the WebAssembly backend in before backend.js"},
	{`<div class="k">RSS now</div>`, `<div class="k">wasm memory</div>`,
		"name what the browser measures instead of RSS"},
}

// blockingScript is a classic script that stops the page from drawing until
// it has loaded and run.
var blockingScript = regexp.MustCompile(`<script src="([^"]+)"></script>`)

// browserPage is frontend/index.html for the browser build. Besides the
// edits above, every blocking script becomes deferred: they still run in
// the same order, before DOMContentLoaded (when lab.js starts), but the page
// draws first. Measured in headless Chromium with a fresh profile on
// loopback, ECharts (1 MB) in the head held the first paint at 760-1020 ms;
// deferred, 320-550 ms.
func browserPage(page []byte) ([]byte, error) {
	s := string(page)
	for _, e := range pageEdits {
		if n := strings.Count(s, e.old); n != 1 {
			return nil, fmt.Errorf("frontend/index.html: cannot %s: %q appears %d times (want once)", e.why, e.old, n)
		}
		s = strings.Replace(s, e.old, e.new, 1)
	}
	s = blockingScript.ReplaceAllString(s, `<script src="$1" defer></script>`)
	return []byte(s), nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

func copyTree(from, to string) error {
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		return copyFile(p, filepath.Join(to, rel))
	})
}

// gzipLarge writes NAME.gz beside every file of 1 KiB or more that
// compresses (the .wasm, scripts, styles, the page).
func gzipLarge(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch path.Ext(p) {
		case ".wasm", ".js", ".css", ".html", ".json":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 1024 {
			return err
		}
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		w.Write(b)
		if err := w.Close(); err != nil {
			return err
		}
		if z.Len() >= len(b) {
			return nil
		}
		return os.WriteFile(p+".gz", z.Bytes(), 0o644)
	})
}

// siteHandler serves the site folder: GET and HEAD only, no directory
// listings, .wasm as application/wasm, and NAME.gz for NAME to a browser
// that accepts gzip, when it is a copy of NAME (see gzipFor). Browsers revalidate every file (Cache-Control:
// no-cache), so a rebuilt site is seen at the next reload.
func siteHandler(root http.FileSystem) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := path.Clean("/" + r.URL.Path)
		if strings.HasSuffix(name, "/") || name == "/" {
			name = path.Join(name, "index.html")
		}
		f, err := root.Open(name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		st, err := f.Stat()
		if err != nil || st.IsDir() {
			f.Close()
			if err == nil {
				if idx, err := root.Open(path.Join(name, "index.html")); err == nil {
					idx.Close()
					http.Redirect(w, r, name+"/", http.StatusMovedPermanently)
					return
				}
			}
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		typ := mime.TypeByExtension(path.Ext(name))
		switch path.Ext(name) {
		case ".wasm":
			typ = "application/wasm"
		case ".js":
			typ = "text/javascript; charset=utf-8"
		}
		if typ != "" {
			h.Set("Content-Type", typ)
		}
		h.Set("Cache-Control", "no-cache")
		body, modTime := io.ReadSeeker(f), st.ModTime()
		if acceptsGzip(r) {
			if gz, err := root.Open(name + ".gz"); err == nil {
				if gst, err := gz.Stat(); err == nil && gzipFor(gz, gst, st) {
					f.Close()
					f, body, modTime = gz, gz, gst.ModTime()
					h.Set("Content-Encoding", "gzip")
				} else {
					gz.Close()
				}
			}
			h.Add("Vary", "Accept-Encoding")
		} else if gz, err := root.Open(name + ".gz"); err == nil {
			gz.Close()
			h.Add("Vary", "Accept-Encoding")
		}
		defer f.Close()
		http.ServeContent(w, r, name, modTime, body)
	})
}

// gzipFor reports whether the open gzip file gz (stat gst) is a copy of the
// file of stat st: not older than it (a second's grace, for copies made in
// any order) and holding its length (gzip's trailer keeps the length mod
// 2^32). It leaves gz at its start.
func gzipFor(gz http.File, gst, st fs.FileInfo) bool {
	if gst.IsDir() || gst.Size() < 18 || gst.ModTime().Before(st.ModTime().Add(-time.Second)) {
		return false
	}
	var trailer [4]byte
	if _, err := gz.Seek(-4, io.SeekEnd); err != nil {
		return false
	}
	if _, err := io.ReadFull(gz, trailer[:]); err != nil {
		return false
	}
	if _, err := gz.Seek(0, io.SeekStart); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(trailer[:]) == uint32(st.Size())
}

// acceptsGzip reads Accept-Encoding: gzip with a non-zero quality.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(enc), "gzip") {
			continue
		}
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
	}
	return false
}

// openBrowser opens url in the default browser. Where browsers need an X11
// or Wayland display (Linux, the BSDs) and there is none, as over ssh or in
// a container, it says so rather than starting xdg-open to fail unseen; a
// launcher that fails within browserWait is reported too.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return errors.New("no display (DISPLAY and WAYLAND_DISPLAY are not set)")
		}
		cmd = exec.Command("xdg-open", url)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			msg := strings.Join(strings.Fields(out.String()), " ")
			if msg != "" {
				msg = ": " + msg
			}
			return fmt.Errorf("%s failed (%v)%s", filepath.Base(cmd.Path), err, msg)
		}
	case <-time.After(browserWait):
		// Still going: a launcher that runs the browser itself.
	}
	return nil
}

// browserWait is how long openBrowser waits to hear whether the launcher
// failed; launchers hand over to the browser and exit in milliseconds.
const browserWait = 3 * time.Second
