//go:build desktop

// This file is the only place that imports Wails (see doc.go).

package desktop

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/packlab/packlab/app"
	"github.com/packlab/packlab/frontend"
)

// Icon is the window's icon (build/appicon.png, which Wails' own build
// uses too); main sets it, as a package cannot embed a file above its
// folder.
var Icon []byte

// Environment the desktop app reads.
const (
	// envResults overrides the results folder (the smoke test uses a
	// temporary one).
	envResults = "PACKLAB_RESULTS_DIR"
	// The smoke test's hook, off unless envSmokeScript is set: after the page
	// has loaded, the script at envSmokeScript runs in it (WindowExecJS) and
	// reports through the bound smokeHook.Report, which writes the report to
	// envSmokeReport; the app quits once the file envSmokeReport+".quit"
	// appears, and has its window repainted (smokeHook.nudge) each time the
	// test writes envSmokeReport+".nudge". With envSmokeSaveDir set, save dialogs answer with that folder
	// and the proposed file name instead of asking.
	envSmokeScript  = "PACKLAB_SMOKE_SCRIPT"
	envSmokeReport  = "PACKLAB_SMOKE_REPORT"
	envSmokeSaveDir = "PACKLAB_SMOKE_SAVE_DIR"
)

// Open opens the lab window and returns when it is closed; opened is
// whether this binary has one.
func Open() (opened bool, err error) { return true, runDesktop() }

// BuiltIn says whether this binary has the lab window.
const BuiltIn = true

// desktopHost is the window's side of app.Options: Wails events and dialogs,
// usable once Wails has handed over its context.
type desktopHost struct {
	mu  sync.Mutex
	ctx context.Context
}

func (h *desktopHost) startup(ctx context.Context) {
	h.mu.Lock()
	h.ctx = ctx
	h.mu.Unlock()
}

func (h *desktopHost) context() context.Context {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ctx
}

func (h *desktopHost) emit(event string, data any) {
	if ctx := h.context(); ctx != nil {
		wruntime.EventsEmit(ctx, event, data)
	}
}

func filters(fs []app.FileFilter) []wruntime.FileFilter {
	out := make([]wruntime.FileFilter, len(fs))
	for i, f := range fs {
		out[i] = wruntime.FileFilter{DisplayName: f.Name, Pattern: f.Pattern}
	}
	return out
}

func (h *desktopHost) openFile(d app.FileDialog) (string, error) {
	ctx := h.context()
	if ctx == nil {
		return "", fmt.Errorf("the window is not ready")
	}
	return wruntime.OpenFileDialog(ctx, wruntime.OpenDialogOptions{Title: d.Title, Filters: filters(d.Filters)})
}

func (h *desktopHost) saveFile(d app.FileDialog) (string, error) {
	if dir := os.Getenv(envSmokeSaveDir); dir != "" {
		return filepath.Join(dir, d.DefaultName), nil
	}
	ctx := h.context()
	if ctx == nil {
		return "", fmt.Errorf("the window is not ready")
	}
	home, _ := os.UserHomeDir()
	return wruntime.SaveFileDialog(ctx, wruntime.SaveDialogOptions{
		Title: d.Title, DefaultFilename: d.DefaultName, DefaultDirectory: home,
		Filters: filters(d.Filters), CanCreateDirectories: true,
	})
}

func runDesktop() error {
	quietSettings()
	paintWithoutGPU()
	host := &desktopHost{}
	lab, err := app.New(app.Options{
		ResultsDir: os.Getenv(envResults),
		Emit:       host.emit,
		OpenFile:   host.openFile,
		SaveFile:   host.saveFile,
	})
	if err != nil {
		return err
	}
	bind := []any{lab}
	var smoke *smokeHook
	if os.Getenv(envSmokeScript) != "" {
		smoke = &smokeHook{host: host, script: os.Getenv(envSmokeScript), report: os.Getenv(envSmokeReport)}
		bind = append(bind, smoke)
	}
	return wails.Run(&options.App{
		Title:            "packlab",
		Width:            windowW,
		Height:           windowH,
		MinWidth:         980,
		MinHeight:        640,
		BackgroundColour: &options.RGBA{R: 244, G: 246, B: 249, A: 255},
		AssetServer:      &assetserver.Options{Assets: frontend.FS()},
		OnStartup:        host.startup,
		OnDomReady: func(ctx context.Context) {
			fitWindow(ctx)
			if smoke != nil {
				smoke.start(ctx)
			}
		},
		OnShutdown: func(context.Context) {
			// Stop a run that is still going: its worker process is killed.
			ids, _ := lab.Running()
			for _, id := range ids {
				_, _ = lab.Cancel(id)
			}
		},
		Bind:           bind,
		ErrorFormatter: func(err error) any { return app.ErrorOf(err, "") },
		Linux:          &linux.Options{Icon: Icon, ProgramName: "packlab", WebviewGpuPolicy: linux.WebviewGpuPolicyOnDemand},
	})
}

// The window's size where its screen has room for it.
const windowW, windowH = 1360, 880

// fitWindow sizes the window to its screen: where the screen has no room
// for windowW x windowH and a panel or two (a 1280x800 or 1366x768 laptop),
// the window takes the screen's size, placed on it, and is maximised (where
// a window manager does that, it leaves the panels be); GTK would open it
// centred and larger than the screen, its edges off it.
func fitWindow(ctx context.Context) {
	screens, err := wruntime.ScreenGetAll(ctx)
	if err != nil || len(screens) == 0 {
		return
	}
	sc := screens[0]
	for _, s := range screens {
		if s.IsCurrent {
			sc = s
		}
	}
	w, h := sc.Size.Width, sc.Size.Height
	const panels = 80
	if w <= 0 || h <= 0 || (w >= windowW+panels && h >= windowH+panels) {
		return
	}
	wruntime.WindowSetSize(ctx, min(w, windowW), min(h, windowH))
	wruntime.WindowSetPosition(ctx, 0, 0)
	wruntime.WindowMaximise(ctx)
}

// paintWithoutGPU turns WebKit's accelerated compositing off where the
// machine has no GPU to render with (no /dev/dri/renderD* node: a VM, a
// container, Xvfb, ssh -X), unless the person set
// WEBKIT_DISABLE_COMPOSITING_MODE or WEBKIT_DISABLE_DMABUF_RENDERER
// themselves. There WebKitGTK 2.50 composites through software GL and, on
// a busy machine, sometimes did not paint the page into the window: the
// desktop smoke test under load 10-14 found the whole window its
// background colour for 10 s, the page having drawn every chart, in 3 of
// 11 runs; with compositing off, in 4 of 23 (fewer, not none: see
// smokeHook.nudge). With a GPU, nothing changes.
func paintWithoutGPU() {
	for _, v := range []string{"WEBKIT_DISABLE_COMPOSITING_MODE", "WEBKIT_DISABLE_DMABUF_RENDERER"} {
		if _, set := os.LookupEnv(v); set {
			return
		}
	}
	if nodes, _ := filepath.Glob("/dev/dri/renderD*"); len(nodes) > 0 {
		return
	}
	os.Setenv("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
}

// quietSettings keeps GTK's settings in memory when there is no D-Bus
// session bus to reach dconf with (a bare X server, Xvfb, ssh -X): dconf
// could not save them anyway, and every file dialog would print a screenful
// of "dconf-WARNING: failed to commit changes to dconf". With a session bus,
// or GSETTINGS_BACKEND set by the person, nothing changes.
func quietSettings() {
	if os.Getenv("GSETTINGS_BACKEND") != "" || os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "bus")); err == nil {
			return // the session bus at its default address
		}
	}
	os.Setenv("GSETTINGS_BACKEND", "memory")
}

// smokeHook drives the real page for the desktop smoke test
// (app/desktop_test.go); it exists only when envSmokeScript is set.
type smokeHook struct {
	host   *desktopHost
	script string
	report string
	once   sync.Once
}

func (s *smokeHook) start(ctx context.Context) {
	s.once.Do(func() {
		js, err := os.ReadFile(s.script)
		if err != nil {
			_ = s.Report(fmt.Sprintf(`{"ok":false,"error":%q}`, "reading the smoke script: "+err.Error()))
			return
		}
		wruntime.WindowExecJS(ctx, string(js))
	})
}

// Mark tells the test that the script has reached a point it waits for:
// it writes the empty file <report>.<name>.
func (s *smokeHook) Mark(name string) error {
	return os.WriteFile(s.report+"."+filepath.Base(name), nil, 0o644)
}

// nudge hides the window and shows it again, as minimising and restoring
// it would: the test asks for it when the screen shows the window's
// background only, the page drawn but not painted into it (seen under
// heavy load with no GPU, the GTK main loop idle; a resize by a pixel did
// not repaint it, this did).
func (s *smokeHook) nudge() {
	ctx := s.host.context()
	if ctx == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "smoke: the window hidden and shown again")
	wruntime.WindowHide(ctx)
	time.Sleep(200 * time.Millisecond)
	wruntime.WindowShow(ctx)
}

// Report receives the script's findings (JSON), writes them for the test,
// and quits the app once the test has taken its screenshot.
func (s *smokeHook) Report(report string) error {
	// A failed script leaves what every goroutine is doing beside its
	// report, written before it, for the test to show: a Plan that never
	// answered timed the script out twice with no word of where it waited.
	var r struct {
		OK bool `json:"ok"`
	}
	if json.Unmarshal([]byte(report), &r) == nil && !r.OK {
		buf := make([]byte, 4<<20)
		_ = os.WriteFile(s.report+".goroutines", buf[:runtime.Stack(buf, true)], 0o644)
	}
	if err := os.WriteFile(s.report+".tmp", []byte(report), 0o644); err != nil {
		return err
	}
	if err := os.Rename(s.report+".tmp", s.report); err != nil {
		return err
	}
	go func() {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(s.report + ".quit"); err == nil {
				break
			}
			if err := os.Remove(s.report + ".nudge"); err == nil {
				s.nudge()
			}
			time.Sleep(50 * time.Millisecond)
		}
		if ctx := s.host.context(); ctx != nil {
			wruntime.Quit(ctx)
		}
	}()
	return nil
}
