//go:build !js

package server

import (
	"context"
	"errors"
	"github.com/packlab/packlab/experiments/fault"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/server/servertest"
)

// TestReloadWillNotFit: a server whose max_server_memory_usage holds a
// dictionary but not its reload beside it: inspect's finding says so with
// the figures, and a verification that would not fit is refused before it
// makes anything.
func TestReloadWillNotFit(t *testing.T) {
	node := servertest.StartWithConfig(t, "  <max_server_memory_usage>175000000</max_server_memory_usage>\n")
	node.Table(t, "src", "s String", "sipHash64(number), repeat('z', 4 + number % 29)", 1000000)
	node.Dictionary(t, "d", "src", "s String", "LIFETIME(0) LAYOUT(HASHED())")
	ins, err := Inspect(context.Background(), Settings{URL: node.NativeURL()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := ins.Dictionaries[0]
	t.Logf("limit %d, holds %d, real %d, reload peak %d: %q", d.ServerMemoryLimitBytes, d.ServerTrackedBytes, d.RealBytes, d.ReloadPeakBytes, d.Findings)
	if d.ServerMemoryLimitBytes != 175000000 {
		t.Errorf("server_memory_limit_bytes %d, want the configured 175000000", d.ServerMemoryLimitBytes)
	}
	found := false
	for _, f := range d.Findings {
		found = found || strings.HasPrefix(f, "a reload will not fit") && strings.Contains(f, "166.9 MiB") // the limit, as printed
	}
	if need := d.ServerTrackedBytes + d.ReloadPeakBytes - d.RealBytes; need > d.ServerMemoryLimitBytes && !found {
		t.Errorf("the reload needs %d beside what the server holds, over its limit %d, and no finding says so: %q", need, d.ServerMemoryLimitBytes, d.Findings)
	} else if need <= d.ServerMemoryLimitBytes {
		t.Errorf("the test's dictionary fits (%d under %d): make it bigger", need, d.ServerMemoryLimitBytes)
	}

	// And ClickHouse agrees: the reload fails on the limit, the serving
	// dictionary kept.
	_, rerr := node.Query("SYSTEM RELOAD DICTIONARY d")
	t.Logf("the reload: %v", rerr)
	if rerr == nil || !strings.Contains(rerr.Error(), "MEMORY_LIMIT_EXCEEDED") {
		t.Errorf("the reload the finding says will not fit: %v, want MEMORY_LIMIT_EXCEEDED", rerr)
	}

	_, err = Verify(context.Background(), Settings{URL: node.NativeURL()}, VerifyRequest{Layout: "HASHED", Attributes: dict.Fixed(core.MustType("UInt64")), Rows: 3_000_000})
	var ie *fault.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "nothing was made") {
		t.Errorf("a verification over the limit: %v, want a refusal", err)
	}
	// The dictionary's advice built beside it does not fit either.
	_, err = VerifyAdvice(context.Background(), Settings{URL: node.NativeURL()}, ins, "d", nil)
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "nothing was made") {
		t.Errorf("an advice's verification over the limit: %v, want a refusal", err)
	}
	if left := strings.TrimSpace(node.Exec(t, "SELECT count() FROM system.databases WHERE name LIKE 'packlab_verify_%'")); left != "0" {
		t.Errorf("a refusal made %s databases", left)
	}
}
