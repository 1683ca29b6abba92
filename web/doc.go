// Package web holds the browser lab's end-to-end test: `packlab serve` on
// 127.0.0.1, the served site in real headless Chromium driven by chromedp,
// and the lab used as a person would (see browser_test.go). `make test-web`
// runs it; it is skipped unless PACKLAB_WEB_TEST=1.
package web
