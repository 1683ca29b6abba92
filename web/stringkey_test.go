package web

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestBrowserStringKey picks a String key in the served page: the key's
// menu offers the String and tuple keys beside the fixed-size types;
// with packlab's layouts chosen, the engine's refusal (they cannot hold a
// String key; the ch_complex_key_ layouts can) stands beside the key's
// field, Run is disabled and the field marked; a fixed-size key again
// clears it. The page runs packlab's Go layouts only, so no layout it runs
// holds a String key: the desktop lab and the command line run them in
// ClickHouse (app's TestStringKeyFromTheForm).
func TestBrowserStringKey(t *testing.T) {
	chromium := browserFor(t)
	tmp, root := t.TempDir(), projectRoot(t)
	bin := buildPacklab(t, root, tmp)
	url, stopServe := serve(t, bin, root, filepath.Join(tmp, "web"))
	defer stopServe()

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(tmp, "profile")),
		chromedp.WindowSize(1440, 1000))
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	defer cancelCtx()
	ctx, cancelTimeout := context.WithTimeout(ctx, 4*time.Minute)
	defer cancelTimeout()
	var exceptions []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			exceptions = append(exceptions, exceptionText(e.ExceptionDetails))
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open the lab: %v", err)
	}
	waitFor(t, ctx, "the lab to be ready", `document.body.dataset.ready === "true"`, 90*time.Second)
	do(t, ctx, helpers)

	options := evalString(t, ctx, `Array.from(document.querySelectorAll("#key option")).map(o => o.value).join(",")`)
	for _, want := range []string{"UInt64", "String", "Tuple(String, UInt64)"} {
		if !strings.Contains(","+options+",", ","+want+",") {
			t.Errorf("the key's menu offers %s: no %s", options, want)
		}
	}

	do(t, ctx, `__t.layouts(["packed", "hashed"]); __t.set("rows", "1e5"); __t.set("key", "String")`)
	msg := waitText(t, ctx, "the key's error", `__t.err("key")`, 30*time.Second)
	for _, want := range []string{"String: layout ", "cannot hold a String or tuple key", "COMPLEX_KEY_", "ch_complex_key_hashed", "not in this page"} {
		if !strings.Contains(msg, want) {
			t.Errorf("beside the key the page says %q, want it to contain %q", msg, want)
		}
	}
	type state struct {
		RunDisabled, Invalid bool
		Banner               string
	}
	s := eval[state](t, ctx, `({runDisabled: document.getElementById("run").disabled,
		invalid: document.getElementById("key").classList.contains("invalid"),
		banner: document.getElementById("banner").textContent})`)
	if !s.RunDisabled || !s.Invalid || s.Banner != "" {
		t.Errorf("with a String key in packed and hashed: run disabled %v, key marked %v, banner %q; want disabled, marked, no banner", s.RunDisabled, s.Invalid, s.Banner)
	}

	do(t, ctx, `__t.set("key", "UInt64")`)
	waitFor(t, ctx, "the estimate with a UInt64 key", `__t.ready() && __t.err("key") === ""`, 30*time.Second)
	for _, e := range exceptions {
		t.Errorf("uncaught exception on the page: %s", e)
	}
}
