//go:build js

package app_test

import "testing"

// checkClickHouseTab: the desktop smoke test does not run in js/wasm (it
// skips), and a test server cannot be started there.
func checkClickHouseTab(t *testing.T, bin, display, tmp string, script []byte, results, exports string) {
}
