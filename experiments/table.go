package experiments

// Tables: results as the seed table of issue 4 prints them, one writer per
// format. Human formats (table, markdown) show sizes in GiB/MiB with two
// decimals and "-" for a figure that was not measured; csv shows the raw
// numbers; json is the Result objects themselves.

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Formats lists the formats WriteTable accepts.
func Formats() []string { return []string{"table", "markdown", "csv", "json"} }

// WriteTable writes results in one of Formats: "table" (aligned text for a
// terminal), "markdown", "csv" or "json" (a JSON array of the Result objects
// and nothing else). Rows keep the order of results.
func WriteTable(w io.Writer, results []Result, format string) error {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "table":
		return writeHuman(w, results, false)
	case "markdown":
		return writeHuman(w, results, true)
	case "csv":
		return writeCSV(w, results)
	case "json":
		return writeJSON(w, results)
	}
	return fmt.Errorf("unknown format %q (allowed: %s)", format, strings.Join(Formats(), ", "))
}

// column is one column of the human table.
type column struct {
	name    string
	numeric bool // right-aligned
	cell    func(r Result, settings string) string
}

// humanColumns follow the seed table of issue 4 (settings, load, read,
// read speed, bytes_allocated, RSS, peak RSS), with element_count and
// bytes/entry added.
var humanColumns = []column{
	{"settings", false, func(_ Result, s string) string { return s }},
	{"element_count", true, func(r Result, _ string) string { return GroupThousands(r.ElementCount) }},
	{"load (sec)", true, func(r Result, _ string) string {
		sp := r.spread()
		return withRange(measured(r.LoadSeconds, 3), sp.LoadSecondsMin, sp.LoadSecondsMax, 3)
	}},
	{"read (sec)", true, func(r Result, _ string) string {
		sp := r.spread()
		return withRange(measured(r.ReadSeconds, 3), sp.ReadSecondsMin, sp.ReadSecondsMax, 3)
	}},
	{"read (million rows/s)", true, func(r Result, _ string) string {
		sp := r.spread()
		lookups := r.ReadRowsPerSecond * r.ReadSeconds / 1e6 // million lookups a read
		return withRange(measured(r.ReadRowsPerSecond/1e6, 2), perSecond(lookups, sp.ReadSecondsMax), perSecond(lookups, sp.ReadSecondsMin), 2)
	}},
	{"bytes_allocated", true, func(r Result, _ string) string {
		if r.Estimated {
			return "~" + formatBytes(r.BytesAllocated) // read from Go's map, not computed
		}
		return formatBytes(r.BytesAllocated)
	}},
	{"RSS", true, func(r Result, _ string) string { return measuredBytes(r.RSSBytes) }},
	{"peak RSS", true, func(r Result, _ string) string { return measuredBytes(r.PeakRSSBytes) }},
	{"bytes/entry", true, func(r Result, _ string) string {
		if r.ElementCount <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(r.BytesAllocated)/float64(r.ElementCount), 'f', 2, 64)
	}},
}

// tableSettings names each run for the settings column: layout, SHARDS and,
// for layouts that follow it, MLF, as in "packed SHARDS 4 MLF 0.5"; key and
// value types and rows are added when they differ between the results.
func tableSettings(results []Result) []string {
	parts := differingParts(results)&(labelTypes|labelRows|labelLoader|labelHuge|labelPrealloc|labelSettle) | labelShards | labelMLF
	out := make([]string, len(results))
	for i, r := range results {
		out[i] = settingsLabel(r, parts)
	}
	return numberRepeats(out)
}

// humanCells returns the header and one row of cells per result.
func humanCells(results []Result) (header []string, rows [][]string) {
	for _, c := range humanColumns {
		header = append(header, c.name)
	}
	settings := tableSettings(results)
	for i, r := range results {
		row := make([]string, len(humanColumns))
		for j, c := range humanColumns {
			row[j] = c.cell(r, settings[i])
		}
		rows = append(rows, row)
	}
	return header, rows
}

// writeHuman writes results as aligned text for a terminal, or (md) as a
// markdown table.
func writeHuman(w io.Writer, results []Result, md bool) error {
	header, rows := humanCells(results)
	var b strings.Builder
	writeGrid(&b, header, humanNumeric(), rows, md)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeGrid draws a header and rows as aligned text, every cell through
// TerminalText, or (md) as a markdown table, every cell through
// markdownText; numeric columns are right-aligned.
func writeGrid(b *strings.Builder, header []string, numeric []bool, rows [][]string, md bool) {
	clean := make([][]string, len(rows))
	for i, row := range rows {
		clean[i] = make([]string, len(row))
		for j, c := range row {
			if md {
				clean[i][j] = markdownText(c)
			} else {
				clean[i][j] = TerminalText(c)
			}
		}
	}
	if md {
		writeMarkdownGrid(b, header, numeric, clean)
	} else {
		writeTextGrid(b, header, numeric, clean)
	}
}

// humanNumeric says which columns of humanCells are right-aligned.
func humanNumeric() []bool {
	n := make([]bool, len(humanColumns))
	for i, c := range humanColumns {
		n[i] = c.numeric
	}
	return n
}

// writeTextGrid draws a header and rows as aligned text, numeric columns
// right-aligned; cells are written as they are (escape them first).
func writeTextGrid(b *strings.Builder, header []string, numeric []bool, rows [][]string) {
	width := make([]int, len(header))
	for _, row := range append([][]string{header}, rows...) {
		for j, cell := range row {
			width[j] = max(width[j], utf8.RuneCountInString(cell))
		}
	}
	for _, row := range append([][]string{header}, rows...) {
		for j, cell := range row {
			pad := strings.Repeat(" ", width[j]-utf8.RuneCountInString(cell))
			if j > 0 {
				b.WriteString("  ")
			}
			switch {
			case numeric[j]:
				b.WriteString(pad + cell)
			case j < len(row)-1:
				b.WriteString(cell + pad)
			default:
				b.WriteString(cell)
			}
		}
		b.WriteByte('\n')
	}
}

// writeMarkdownGrid draws a header and rows as a markdown table; cells are
// written as they are (escape them with markdownText first).
func writeMarkdownGrid(b *strings.Builder, header []string, numeric []bool, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for _, n := range numeric {
		if n {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteByte('\n')
	for _, row := range rows {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
}

// TerminalText is s with every character that a terminal would act on
// rather than show written out as a visible escape: control characters (C0,
// DEL, C1, so ESC and OSC sequences), bidirectional controls, and bytes
// that are not UTF-8 ("\x1b", "\u202e", "\xff"). Text read from a result
// file goes through it before it reaches a terminal, so a crafted file
// cannot move the cursor, recolour the screen or retitle the window.
// MaxLabel is the most characters a name (a job's, a result's) is shown
// with; ShortText cuts a longer one for display, the result file keeps it
// whole.
const MaxLabel = 80

// ShortText is s cut to at most n characters for display, "…" in place of
// the rest, and how many characters were left out.
func ShortText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + fmt.Sprintf("… (%d more characters)", len(r)-(n-1))
}

func TerminalText(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x100 && unicode.IsControl(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// markdownText is a text cell of a markdown table: TerminalText, and the
// characters markdown would read as markup escaped: | (a column break),
// backticks (code spans), < and > (HTML, which renderers pass through).
var markdownEscaper = strings.NewReplacer("|", `\|`, "`", "\\`", "<", "&lt;", ">", "&gt;")

func markdownText(s string) string { return markdownEscaper.Replace(TerminalText(s)) }

// csvHeader names the csv columns after the Result JSON fields they hold;
// settings is the human label, bytes_per_entry = bytes_allocated / element_count.
var csvHeader = []string{
	"settings", "layout", "key_type", "value_type", "rows", "shards", "max_load_factor", "preallocate", "element_count",
	"load_seconds", "read_seconds", "read_rows_per_second", "bytes_allocated", "rss_bytes", "peak_rss_bytes",
	"bytes_per_entry", "repeats", "load_seconds_min", "load_seconds_max", "read_seconds_min", "read_seconds_max",
}

func writeCSV(w io.Writer, results []Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	settings := tableSettings(results)
	for i, r := range results {
		perEntry := ""
		if r.ElementCount > 0 {
			perEntry = f(float64(r.BytesAllocated) / float64(r.ElementCount))
		}
		var spread [4]string // empty for one load: no range measured
		if s := r.Spread; s != nil {
			spread = [4]string{f(s.LoadSecondsMin), f(s.LoadSecondsMax), f(s.ReadSecondsMin), f(s.ReadSecondsMax)}
		}
		if err := cw.Write(append([]string{
			settings[i], r.Layout, r.KeyType, r.ValueType, i64(r.Rows), strconv.Itoa(r.Shards), f(r.MaxLoadFactor),
			strconv.FormatBool(r.Preallocate), i64(r.ElementCount), f(r.LoadSeconds), f(r.ReadSeconds), f(r.ReadRowsPerSecond), i64(r.BytesAllocated),
			i64(r.RSSBytes), i64(r.PeakRSSBytes), perEntry, strconv.Itoa(max(r.Repeats, 1)),
		}, spread[:]...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeJSON(w io.Writer, results []Result) error {
	if results == nil {
		results = []Result{} // "[]", never "null"
	}
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results as JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// formatBytes writes a size for a table: the largest binary unit that keeps
// it at least 1, with two decimals.
func formatBytes(n int64) string { return bytesText(n, 2) }

// bytesText writes a byte count in the largest binary unit (B, KiB, MiB,
// GiB, ...) that keeps it at least 1, with dec decimals: the one byte
// formatter behind formatBytes and FormatBytes.
func bytesText(n int64, dec int) string {
	if n == math.MaxInt64 {
		// core's figures saturate here (core.SaturatingAdd): not 8 EiB but
		// more than any 64-bit count of bytes holds.
		return "over 8 EiB"
	}
	v := math.Abs(float64(n))
	sign := ""
	if n < 0 {
		sign = "-"
	}
	if v < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	const units = "KMGTPE"
	i := 0
	for v /= 1024; v >= 1024 && i < len(units)-1; i++ {
		v /= 1024
	}
	return fmt.Sprintf("%s%.*f %ciB", sign, dec, v, units[i])
}

// measuredBytes is formatBytes, or "-" when nothing was measured (0).
func measuredBytes(n int64) string {
	if n == 0 {
		return "-"
	}
	return formatBytes(n)
}

// measured writes a time or a speed with dec decimals, or "-" when it was
// not measured (0: the read phase was off) or is not a number.
// withRange adds the range of repeated runs to a median's cell, "0.520
// (0.500–0.550)", when there is one (lo and hi above 0: more than one
// repeat).
func withRange(cell string, lo, hi float64, dec int) string {
	if cell == "-" || !(lo > 0) || !(hi > 0) {
		return cell
	}
	return cell + " (" + measured(lo, dec) + "–" + measured(hi, dec) + ")"
}

// perSecond is n / seconds, or 0 when seconds is not above 0.
func perSecond(n, seconds float64) float64 {
	if !(seconds > 0) {
		return 0
	}
	return n / seconds
}

func measured(v float64, dec int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

// GroupThousands writes 1234567 as "1,234,567".
func GroupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
