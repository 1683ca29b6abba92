package result

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/text"
)

// Run labels: the name a run goes by in a table row, a bar or a line, its
// layout and those of its settings that differ between the runs shown.

// LabelParts says which settings a run label shows after the layout.
type LabelParts uint16

const (
	LabelTypes LabelParts = 1 << iota
	LabelRows
	LabelShards
	LabelMLF
	LabelSelect   // the loader's shard selection
	LabelBlock    // the loader's block rows
	LabelThreads  // the measuring process's threads
	LabelHuge     // transparent huge pages for the slabs
	LabelPrealloc // tables reserved for the rows before the load
	LabelSettle   // the idle before each load
	LabelLoader   = LabelSelect | LabelBlock | LabelThreads
	LabelAll      = LabelTypes | LabelRows | LabelShards | LabelMLF | LabelLoader | LabelHuge | LabelPrealloc | LabelSettle
)

func (p LabelParts) Without(q LabelParts) LabelParts { return p &^ q }

// usesMaxLoadFactor reports whether r's layout's growth follows
// max_load_factor: hashed_array's key index always grows at 0.5, Go's map
// and a reference map (the result says so) have their own rules, so their
// MLF is not a setting worth a label.
func usesMaxLoadFactor(r Result) bool { return !r.IsReference() && UsesMaxLoadFactor(r.Layout) }

// UsesMaxLoadFactor reports whether a layout (a --layout name) grows at
// max_load_factor: not hashed_array, gomap or a reference map.
func UsesMaxLoadFactor(layout string) bool {
	if l, err := core.ParseLayout(layout); err == nil {
		layout = string(l)
	}
	switch core.Layout(layout) {
	case core.LayoutHashedArray, core.LayoutGoMap:
		return false
	}
	if d, ok := dict.FindClickHouseDictionary(layout); ok {
		return d.TakesMaxLoadFactor()
	}
	return !IsReference(layout) // a reference map grows by its library's rule
}

// differingParts finds which settings differ between results.
func differingParts(results []Result) LabelParts {
	var p LabelParts
	if len(results) == 0 {
		return p
	}
	first := results[0]
	var own *Result // the first of packlab's own runs: a reference map has no shards and no loader of packlab's
	firstMLF, haveMLF := 0.0, false
	for i, r := range results {
		if r.KeyType != first.KeyType || ValueText(r) != ValueText(first) {
			p |= LabelTypes
		}
		if r.Rows != first.Rows {
			p |= LabelRows
		}
		if r.Preallocate != first.Preallocate {
			p |= LabelPrealloc
		}
		if r.SettleSeconds != first.SettleSeconds {
			p |= LabelSettle
		}
		switch {
		case r.IsReference():
		case own == nil:
			own = &results[i]
		default:
			if r.Shards != own.Shards {
				p |= LabelShards
			}
			if ShardSelectOf(r) != ShardSelectOf(*own) {
				p |= LabelSelect
			}
			if BlockRowsOf(r) != BlockRowsOf(*own) {
				p |= LabelBlock
			}
			if r.Threads != own.Threads {
				p |= LabelThreads
			}
			if HugePagesOf(r) != HugePagesOf(*own) {
				p |= LabelHuge
			}
		}
		if usesMaxLoadFactor(r) {
			if !haveMLF {
				firstMLF, haveMLF = r.MaxLoadFactor, true
			} else if r.MaxLoadFactor != firstMLF {
				p |= LabelMLF
			}
		}
	}
	return p
}

// settingsLabel names a run by its layout and the settings in parts.
func settingsLabel(r Result, parts LabelParts) string {
	var b strings.Builder
	ref := r.IsReference()
	if r.Layout == "" {
		b.WriteString("(no layout)")
	} else {
		b.WriteString(r.Layout)
	}
	if ref {
		b.WriteString(" (C++)") // a reference map, not packlab's
	}
	if parts&LabelTypes != 0 {
		fmt.Fprintf(&b, " %s/%s", text.OrDash(r.KeyType), text.OrDash(ValueText(r)))
	}
	if parts&LabelRows != 0 {
		fmt.Fprintf(&b, " %s rows", text.Rows(r.Rows))
	}
	if ref {
		parts &^= LabelShards | LabelLoader | LabelHuge
	}
	if r.IsClickHouse() {
		parts &^= LabelLoader | LabelHuge // ClickHouse loads as it does
	}
	if parts&LabelShards != 0 {
		fmt.Fprintf(&b, " SHARDS %d", r.Shards)
	}
	if parts&LabelMLF != 0 && usesMaxLoadFactor(r) {
		fmt.Fprintf(&b, " MLF %s", strconv.FormatFloat(r.MaxLoadFactor, 'f', -1, 64))
	}
	if parts&LabelSelect != 0 {
		b.WriteString(" " + ShardSelectOf(r))
	}
	if parts&LabelBlock != 0 {
		fmt.Fprintf(&b, " blocks %s", text.Rows(int64(BlockRowsOf(r))))
	}
	if parts&LabelThreads != 0 {
		if r.Threads > 0 {
			fmt.Fprintf(&b, " threads %d", r.Threads)
		} else {
			b.WriteString(" threads ?")
		}
	}
	if parts&LabelHuge != 0 {
		b.WriteString(" hugepages " + HugePagesOf(r))
	}
	if parts&LabelPrealloc != 0 && r.Preallocate {
		b.WriteString(" PREALLOCATE")
	}
	if parts&LabelSettle != 0 && r.SettleSeconds > 0 {
		b.WriteString(" settle " + text.Float(r.SettleSeconds) + "s")
	}
	return b.String()
}

// RunLabels names each run by its layout plus those settings, among the
// allowed parts, that differ between the results, plus the parts in always;
// a name that would repeat
// gets " #2", " #3"... so every bar and line has its own.
func RunLabels(results []Result, allowed, always LabelParts) []string {
	return numberRepeats(SettingsLabels(results, allowed, always))
}

// numberRepeats gives the second and later of labels that repeat " #2",
// " #3"..., in place, so that every row, bar and line has a name of its own.
func numberRepeats(labels []string) []string {
	seen := map[string]int{}
	for i, l := range labels {
		seen[l]++
		if seen[l] > 1 {
			labels[i] = fmt.Sprintf("%s #%d", l, seen[l])
		}
	}
	return labels
}

// SettingsLabels is runLabels without the numbering: runs that differ only
// in settings left out share a label (a line of a memory-vs-rows chart).
func SettingsLabels(results []Result, allowed, always LabelParts) []string {
	parts := differingParts(results)&allowed | always
	labels := make([]string, len(results))
	for i, r := range results {
		labels[i] = settingsLabel(r, parts)
	}
	return labels
}

// TableSettings names each run for the settings column: layout, SHARDS and,
// for layouts that follow it, MLF, as in "packed SHARDS 4 MLF 0.5"; key and
// value types and rows are added when they differ between the results.
func TableSettings(results []Result) []string {
	parts := differingParts(results)&(LabelTypes|LabelRows|LabelLoader|LabelHuge|LabelPrealloc|LabelSettle) | LabelShards | LabelMLF
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = settingsLabel(r, parts)
	}
	return numberRepeats(out)
}
