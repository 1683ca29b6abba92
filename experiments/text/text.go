// Package text is how every face and writer prints figures (bytes, rows,
// floats) and draws a grid of cells for a terminal or markdown, with
// untrusted text made safe for both.
package text

import (
	"fmt"
	"math"
	"math/bits"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Formats lists the text formats the writers accept (report.WriteTable,
// the plan).
func Formats() []string { return []string{"table", "markdown", "csv", "json"} }

// Grid draws a header and rows as aligned text, every cell through
// Terminal, or (md) as a markdown table, every cell through
// Markdown; numeric columns are right-aligned.
func Grid(b *strings.Builder, header []string, numeric []bool, rows [][]string, md bool) {
	clean := make([][]string, len(rows))
	for i, row := range rows {
		clean[i] = make([]string, len(row))
		for j, c := range row {
			if md {
				clean[i][j] = Markdown(c)
			} else {
				clean[i][j] = Terminal(c)
			}
		}
	}
	if md {
		writeMarkdownGrid(b, header, numeric, clean)
	} else {
		writeTextGrid(b, header, numeric, clean)
	}
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
// written as they are (escape them with Markdown first).
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

// Terminal is s with every character that a terminal would act on
// rather than show written out as a visible escape: control characters (C0,
// DEL, C1, so ESC and OSC sequences), bidirectional controls, and bytes
// that are not UTF-8 ("\x1b", "\u202e", "\xff"). Text read from a result
// file goes through it before it reaches a terminal, so a crafted file
// cannot move the cursor, recolour the screen or retitle the window.
func Terminal(s string) string {
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

// Markdown is a text cell of a markdown table: Terminal, and the
// characters markdown would read as markup escaped: | (a column break),
// backticks (code spans), < and > (HTML, which renderers pass through).
var markdownEscaper = strings.NewReplacer("|", `\|`, "`", "\\`", "<", "&lt;", ">", "&gt;")

func Markdown(s string) string { return markdownEscaper.Replace(Terminal(s)) }

// Bytes2 writes a size for a table: the largest binary unit that keeps
// it at least 1, with two decimals.
func Bytes2(n int64) string { return bytesText(n, 2) }

// bytesText writes a byte count in the largest binary unit (B, KiB, MiB,
// GiB, ...) that keeps it at least 1, with dec decimals: the one byte
// formatter behind Bytes2 and Bytes.
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

// Thousands writes 1234567 as "1,234,567".
func Thousands(n int64) string {
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

// Bytes writes a byte count with a binary unit: 512 B, 1.5 KiB,
// 20.0 MiB, 35.2 GiB.
func Bytes(n int64) string {
	if n < 0 {
		return "unknown"
	}
	return bytesText(n, 1)
}

// Rows writes a row count the short way ParseRows reads, exactly: 1e6 as
// "1M", 2.5e6 as "2.5M", 1234 as "1234"; from 1e15 on (a thousand T) with
// its exponent, 4.4e18 as "4.4e18", and a power of two from 2^32 on that no
// decimal writes short as "2^62", so that no figure of the plan's largest
// counts is a run of 19 digits.
func Rows(n int64) string {
	if n >= 1e15 {
		p := int64(1e15)
		exp := 15
		for n/p >= 10 {
			p, exp = p*10, exp+1
		}
		if n%(p/100) == 0 { // at most three significant digits
			return strconv.FormatFloat(float64(n)/float64(p), 'f', -1, 64) + "e" + strconv.Itoa(exp)
		}
	}
	if n >= 1<<32 && n&(n-1) == 0 {
		return "2^" + strconv.Itoa(bits.TrailingZeros64(uint64(n)))
	}
	for _, u := range []struct {
		v int64
		s string
	}{{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}} {
		if n >= u.v && n%(u.v/100) == 0 {
			return strconv.FormatFloat(float64(n)/float64(u.v), 'f', -1, 64) + u.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// Float writes f in the fewest digits that read back as f.
func Float(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// RowsRate writes rows per second the short way: 3.1M, 850K.
func RowsRate(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 2, 64) + "B"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "K"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func Round(v float64, dec int) float64 {
	s := strconv.FormatFloat(v, 'f', dec, 64)
	r, _ := strconv.ParseFloat(s, 64)
	return r
}

// OrDash is s, or "-" when s is empty (a cell with nothing to say).
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// MaxLabel is the most characters a name (a job's, a result's) is shown
// with; Short cuts a longer one for display, the result file keeps it
// whole.
const MaxLabel = 80

// Short is s cut to about n characters for display, "…" and how many
// characters were left out in place of the rest; s whole where that note
// would be longer than what it leaves out ("(Strin… (2 more characters))"
// said less than the two characters).
func Short(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	note := fmt.Sprintf("… (%d more characters)", len(r)-(n-1))
	if len(r)-(n-1) <= utf8.RuneCountInString(note) {
		return s
	}
	return string(r[:n-1]) + note
}

// Seconds writes a time in seconds as 0.42 s, 12.3 s, 4m05s, 2h10m or
// 7,626,539 days; "-" for none.
func Seconds(s *float64) string {
	if s == nil {
		return "-"
	}
	v := *s
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 2, 64) + " s"
	case v < 60:
		return strconv.FormatFloat(v, 'f', 1, 64) + " s"
	case v < 3600:
		return fmt.Sprintf("%dm%02ds", int(v)/60, int(v)%60)
	case v < 100*3600:
		return fmt.Sprintf("%dh%02dm", int(v)/3600, int(v)%3600/60)
	}
	if d := v / 86400; d < 1e15 {
		return Thousands(int64(math.Round(d))) + " days"
	}
	return fmt.Sprintf("%.3g days", v/86400) // no int64 holds it (+Inf: no speed)
}

// Count is n (its thousands separated) and the word for n of them: "1
// node", "2 nodes", "1 dictionary", "12,500 bad rows".
func Count[N int | int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Thousands(int64(n)) + " " + many
}

// OneLine is s on one line, each run of spaces, tabs and newlines one
// space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// RedactURL is the URL s with its password, if any, written xxxxx (a URL
// that does not parse: everything between its :// and its @ left out), so
// that an error may show it.
func RedactURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.User == nil {
		if i := strings.Index(s, "@"); i >= 0 {
			if j := strings.Index(s, "://"); j >= 0 && j < i {
				return s[:j+3] + "…@" + s[i+1:]
			}
		}
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
