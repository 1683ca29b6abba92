package dict

import (
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
)

// TestClickHouseReloadModel: for the layouts it measured, the ClickHouse
// model gives ClickHouse's reload within 5 % and its first load's peak and
// steady bytes within 5 % (clickHouseReloads, 1e7 <UInt64,UInt16>).
func TestClickHouseReloadModel(t *testing.T) {
	const mib = 1 << 20
	for name, l := range map[string]core.Layout{"HASHED": core.LayoutHashed, "SPARSE_HASHED": core.LayoutPacked} {
		m := ClickHouseTableMemory(l, core.MustType("UInt16"), 1e7, core.Options{}, 1)
		got := [3]float64{float64(m.SteadyBytes) / mib, float64(m.FirstLoadPeakBytes) / mib, float64(m.ReloadPeakBytes) / mib}
		want := clickHouseReloads[name]
		for i, what := range []string{"steady", "first load peak", "reload peak"} {
			t.Logf("%s %s: model %.0f MiB, measured %.0f (%+.1f %%)", name, what, got[i], want[i], 100*(got[i]/want[i]-1))
			if r := got[i] / want[i]; r < 0.95 || r > 1.05 {
				t.Errorf("%s %s: model %.0f MiB is %.3fx ClickHouse's measured %.0f", name, what, got[i], r, want[i])
			}
		}
		if !m.Measured || !strings.Contains(m.Model, "jemalloc") {
			t.Errorf("%s: measured %v, model %q", name, m.Measured, m.Model)
		}
	}
}
