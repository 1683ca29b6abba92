package report

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

	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// WriteTable writes results in one of Formats: "table" (aligned text for a
// terminal), "markdown", "csv" or "json" (a JSON array of the Result objects
// and nothing else). Rows keep the order of results.
func WriteTable(w io.Writer, results []result.Result, format string) error {
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
	return fmt.Errorf("unknown format %q (allowed: %s)", format, strings.Join(text.Formats(), ", "))
}

// column is one column of the human table.
type column struct {
	name    string
	numeric bool // right-aligned
	cell    func(r result.Result, settings string) string
}

// humanColumns follow the seed table of issue 4 (settings, load, read,
// read speed, bytes_allocated, RSS, peak RSS), with element_count and
// bytes/entry added.
var humanColumns = []column{
	{"settings", false, func(_ result.Result, s string) string { return s }},
	{"element_count", true, func(r result.Result, _ string) string { return text.Thousands(r.ElementCount) }},
	{"load (sec)", true, func(r result.Result, _ string) string {
		sp := r.SpreadOrZero()
		return withRange(measured(r.LoadSeconds, 3), sp.LoadSecondsMin, sp.LoadSecondsMax, 3)
	}},
	{"read (sec)", true, func(r result.Result, _ string) string {
		sp := r.SpreadOrZero()
		return withRange(measured(r.ReadSeconds, 3), sp.ReadSecondsMin, sp.ReadSecondsMax, 3)
	}},
	{"read (million rows/s)", true, func(r result.Result, _ string) string {
		sp := r.SpreadOrZero()
		lookups := r.ReadRowsPerSecond * r.ReadSeconds / 1e6 // million lookups a read
		return withRange(measured(r.ReadRowsPerSecond/1e6, 2), perSecond(lookups, sp.ReadSecondsMax), perSecond(lookups, sp.ReadSecondsMin), 2)
	}},
	{"bytes_allocated", true, func(r result.Result, _ string) string {
		if r.Estimated {
			return "~" + text.Bytes2(r.BytesAllocated) // read from Go's map, not computed
		}
		return text.Bytes2(r.BytesAllocated)
	}},
	{"RSS", true, func(r result.Result, _ string) string { return measuredBytes(r.RSSBytes) }},
	{"peak RSS", true, func(r result.Result, _ string) string { return measuredBytes(r.PeakRSSBytes) }},
	{"bytes/entry", true, func(r result.Result, _ string) string {
		if r.ElementCount <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(r.BytesAllocated)/float64(r.ElementCount), 'f', 2, 64)
	}},
}

// humanCells returns the header and one row of cells per result.
func humanCells(results []result.Result) (header []string, rows [][]string) {
	for _, c := range humanColumns {
		header = append(header, c.name)
	}
	settings := result.TableSettings(results)
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
func writeHuman(w io.Writer, results []result.Result, md bool) error {
	header, rows := humanCells(results)
	var b strings.Builder
	text.Grid(&b, header, humanNumeric(), rows, md)
	_, err := io.WriteString(w, b.String())
	return err
}

// Cells is the human table as cells, for a face that draws its own grid
// (the window): its header, which columns are numeric, and a row per
// result, each cell as the terminal table prints it (text.Terminal).
func Cells(results []result.Result) (header []string, numeric []bool, rows [][]string) {
	header, rows = humanCells(results)
	for _, row := range rows {
		for j, c := range row {
			row[j] = text.Terminal(c)
		}
	}
	return header, humanNumeric(), rows
}

// humanNumeric says which columns of humanCells are right-aligned.
func humanNumeric() []bool {
	n := make([]bool, len(humanColumns))
	for i, c := range humanColumns {
		n[i] = c.numeric
	}
	return n
}

// csvHeader names the csv columns after the Result JSON fields they hold;
// settings is the human label, bytes_per_entry = bytes_allocated / element_count.
var csvHeader = []string{
	"settings", "layout", "key_type", "value_type", "rows", "shards", "max_load_factor", "preallocate", "element_count",
	"load_seconds", "read_seconds", "read_rows_per_second", "bytes_allocated", "rss_bytes", "peak_rss_bytes",
	"bytes_per_entry", "repeats", "load_seconds_min", "load_seconds_max", "read_seconds_min", "read_seconds_max",
}

func writeCSV(w io.Writer, results []result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	settings := result.TableSettings(results)
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

func writeJSON(w io.Writer, results []result.Result) error {
	if results == nil {
		results = []result.Result{} // "[]", never "null"
	}
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding results as JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// measuredBytes is FormatBytes2, or "-" when nothing was measured (0).
func measuredBytes(n int64) string {
	if n == 0 {
		return "-"
	}
	return text.Bytes2(n)
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
