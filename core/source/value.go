package source

// Text <-> bits for every supported type, as ClickHouse writes values in
// FORMAT TSV and CSV. ParseValue is what a file source runs on each field;
// FormatValue is its inverse, used to show results and to round-trip test.
//
// The bits are returned as (lo, hi): lo holds a value of up to 8 bytes in its
// low bytes (signed values as two's complement, floats as IEEE 754 bits) and
// hi is zero; a 16-byte value uses both words. core.FromUint64[T](lo, hi)
// turns them into a map's key or value.
//
// What each type accepts:
//
//	UInt8 ... UInt128   decimal digits with an optional '+'; range-checked
//	                    ("-0" is 0; any other negative is out of range)
//	Int8 ... Int128     decimal digits with an optional sign; range-checked
//	Float32, Float64    what strconv.ParseFloat accepts, plus ClickHouse's
//	                    "nan", "-nan", "inf", "-inf"; "-0" keeps its sign bit.
//	                    Overflow ("1e39" for Float32) is out of range.
//	UUID                8-4-4-4-12 hex digits, either case (32 hex digits
//	                    without dashes are accepted too)
//	Date                YYYY-MM-DD, 1970-01-01 to 2149-06-06, stored as days
//	                    since 1970-01-01; or that day number, 0 to 65535
//	DateTime            YYYY-MM-DD hh:mm:ss (or with 'T'), read as UTC,
//	                    1970-01-01 00:00:00 to 2106-02-07 06:28:15, stored
//	                    as seconds since the epoch; or those seconds as a
//	                    plain integer, 0 to 4294967295
//
// UUID bits follow ClickHouse, which holds a UUID as a UInt128 whose low
// 64-bit word is the first half of the text and whose high word is the second
// half: for 61f0c404-5cb3-11e7-907b-a6006ad3dba0, lo = 0x61f0c4045cb311e7 and
// hi = 0x907ba6006ad3dba0. (That is why ClickHouse sorts UUIDs by their
// second half.)
//
// NaN: "nan" parses to the canonical quiet NaN (0x7ff8000000000000 for
// Float64, 0x7fc00000 for Float32) and "-nan" to the same with the sign bit.
// FormatValue prints any NaN as "nan" or "-nan", so a NaN with another
// payload does not round-trip bit for bit; every other value does.

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
)

// ParseValue parses s, as ClickHouse writes a value of type t in TSV or CSV,
// into the value's bits. The error names the value, the type and what is
// allowed, e.g. `"70000" is out of range for UInt16 (0 to 65535)`.
func ParseValue(t core.Type, s string) (lo, hi uint64, err error) {
	if !validShape(t) {
		return 0, 0, fmt.Errorf("cannot parse %s: unknown type %q (size %d)", quoteValue(s), t.Name, t.Size)
	}
	switch t.Kind {
	case core.KindUnsigned:
		return parseUnsignedText(t, s)
	case core.KindSigned:
		return parseSignedText(t, s)
	case core.KindFloat:
		return parseFloatText(t, s)
	case core.KindUUID:
		return parseUUIDText(t, s)
	case core.KindDate:
		return parseDateText(t, s)
	case core.KindDateTime:
		return parseDateTimeText(t, s)
	}
	return 0, 0, fmt.Errorf("cannot parse %s: type %s has an unknown kind %d", quoteValue(s), t.Name, t.Kind)
}

// FormatValue writes the bits of a value of type t as ClickHouse would in TSV
// (without CSV quoting). Bits above t's size are ignored.
func FormatValue(t core.Type, lo, hi uint64) string {
	if !validShape(t) {
		return fmt.Sprintf("<%s %#x %#x>", t.Name, hi, lo)
	}
	switch t.Kind {
	case core.KindUnsigned:
		if t.Size == 16 {
			return formatUint128(lo, hi)
		}
		return strconv.FormatUint(lo&sizeMask(t.Size), 10)
	case core.KindSigned:
		if t.Size == 16 {
			if int64(hi) < 0 {
				lo, hi = negate128(lo, hi)
				return "-" + formatUint128(lo, hi)
			}
			return formatUint128(lo, hi)
		}
		return strconv.FormatInt(signExtend(lo, t.Size), 10)
	case core.KindFloat:
		return formatFloatBits(t, lo)
	case core.KindUUID:
		return formatUUID(lo, hi)
	case core.KindDate:
		y, m, d := civilFromDays(int64(uint16(lo)))
		return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
	case core.KindDateTime:
		secs := int64(uint32(lo))
		y, m, d := civilFromDays(secs / 86400)
		r := secs % 86400
		return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", y, m, d, r/3600, r/60%60, r%60)
	}
	return fmt.Sprintf("<%s %#x %#x>", t.Name, hi, lo)
}

// knownType reports whether t is one of core.Types(): a hand-built Type with a
// wrong size or kind is refused rather than misread.
func knownType(t core.Type) bool {
	for _, u := range core.Types() {
		if u.Name == t.Name && u.Size == t.Size && u.Kind == t.Kind {
			return true
		}
	}
	return false
}

// validShape is the cheap check ParseValue runs on every field: a size
// that the kind allows, so that the bits are well defined.
func validShape(t core.Type) bool {
	switch t.Kind {
	case core.KindUnsigned, core.KindSigned:
		return t.Size == 1 || t.Size == 2 || t.Size == 4 || t.Size == 8 || t.Size == 16
	case core.KindFloat:
		return t.Size == 4 || t.Size == 8
	case core.KindUUID:
		return t.Size == 16
	case core.KindDate:
		return t.Size == 2
	case core.KindDateTime:
		return t.Size == 4
	}
	return false
}

// sizeMask keeps the low size bytes of a word (size <= 8).
func sizeMask(size int) uint64 {
	if size >= 8 {
		return math.MaxUint64
	}
	return 1<<(8*uint(size)) - 1
}

// signExtend reads the low size bytes of lo as a two's complement integer.
func signExtend(lo uint64, size int) int64 {
	shift := 64 - 8*uint(size)
	return int64(lo<<shift) >> shift
}

// quoteValue quotes a field for an error message, shortening a huge one.
func quoteValue(s string) string {
	const limit = 64
	if len(s) > limit {
		return strconv.Quote(s[:limit]) + "..."
	}
	return strconv.Quote(s)
}

// allowedText says what a type accepts, for error messages.
func allowedText(t core.Type) string {
	switch t.Kind {
	case core.KindUnsigned:
		if t.Size == 16 {
			return "0 to 340282366920938463463374607431768211455"
		}
		return "0 to " + strconv.FormatUint(sizeMask(t.Size), 10)
	case core.KindSigned:
		if t.Size == 16 {
			return "-170141183460469231731687303715884105728 to 170141183460469231731687303715884105727"
		}
		maxv := int64(sizeMask(t.Size) >> 1)
		return strconv.FormatInt(-maxv-1, 10) + " to " + strconv.FormatInt(maxv, 10)
	case core.KindFloat:
		if t.Size == 4 {
			return "a decimal number of magnitude up to 3.4028234663852886e38, nan, inf or -inf"
		}
		return "a decimal number of magnitude up to 1.7976931348623157e308, nan, inf or -inf"
	case core.KindUUID:
		return "8-4-4-4-12 hex digits, e.g. 61f0c404-5cb3-11e7-907b-a6006ad3dba0"
	case core.KindDate:
		return "YYYY-MM-DD from 1970-01-01 to 2149-06-06, or a day number 0 to 65535"
	case core.KindDateTime:
		return "YYYY-MM-DD hh:mm:ss (UTC) from 1970-01-01 00:00:00 to 2106-02-07 06:28:15, or seconds 0 to 4294967295"
	}
	return "nothing"
}

// NullText is a NULL as ClickHouse writes one in TSV and CSV: a cell of a
// type that is not Nullable cannot hold it.
const NullText = `\N`

func errOutOfRange(t core.Type, s string) error {
	return fmt.Errorf("%s is out of range for %s (%s)", quoteValue(s), t.Name, allowedText(t))
}

func errMalformed(t core.Type, s string) error {
	if s == NullText {
		return fmt.Errorf(`\N is NULL, and %s is not Nullable (allowed: %s)`, t.Name, allowedText(t))
	}
	return fmt.Errorf("%s is not a valid %s (allowed: %s)", quoteValue(s), t.Name, allowedText(t))
}

// splitSign removes one leading '+' or '-'.
func splitSign(s string) (neg bool, digits string) {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		return s[0] == '-', s[1:]
	}
	return false, s
}

// parseDecimal128 reads a non-empty run of decimal digits into a 128-bit
// magnitude. ok is false when s holds anything but digits; overflow is true
// when the digits are valid but the number needs more than 128 bits.
func parseDecimal128(s string) (lo, hi uint64, ok, overflow bool) {
	if len(s) == 0 {
		return 0, 0, false, false
	}
	// Up to 19 digits fit a uint64 whatever they are: one multiply-add each.
	n := min(len(s), 19)
	for i := 0; i < n; i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, 0, false, false
		}
		lo = lo*10 + uint64(d)
	}
	if len(s) == n {
		return lo, 0, true, false
	}
	for i := n; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, 0, false, false
		}
	}
	for i := n; i < len(s); i++ {
		d := uint64(s[i] - '0')
		// (hi, lo) = (hi, lo)*10 + d
		carry, l := bits.Mul64(lo, 10)
		h1, h := bits.Mul64(hi, 10)
		if h1 != 0 {
			return 0, 0, true, true
		}
		h, c := bits.Add64(h, carry, 0)
		if c != 0 {
			return 0, 0, true, true
		}
		l, c = bits.Add64(l, d, 0)
		h, c = bits.Add64(h, 0, c)
		if c != 0 {
			return 0, 0, true, true
		}
		lo, hi = l, h
	}
	return lo, hi, true, false
}

func negate128(lo, hi uint64) (uint64, uint64) {
	l, c := bits.Add64(^lo, 1, 0)
	h, _ := bits.Add64(^hi, 0, c)
	return l, h
}

func parseUnsignedText(t core.Type, s string) (lo, hi uint64, err error) {
	neg, digits := splitSign(s)
	lo, hi, ok, overflow := parseDecimal128(digits)
	if !ok {
		return 0, 0, errMalformed(t, s)
	}
	if overflow || (neg && (lo|hi) != 0) {
		return 0, 0, errOutOfRange(t, s)
	}
	if t.Size < 16 && (hi != 0 || lo > sizeMask(t.Size)) {
		return 0, 0, errOutOfRange(t, s)
	}
	return lo, hi, nil
}

func parseSignedText(t core.Type, s string) (lo, hi uint64, err error) {
	neg, digits := splitSign(s)
	lo, hi, ok, overflow := parseDecimal128(digits)
	if !ok {
		return 0, 0, errMalformed(t, s)
	}
	if overflow {
		return 0, 0, errOutOfRange(t, s)
	}
	if t.Size == 16 {
		// Magnitude at most 2^127-1, or 2^127 when negative.
		if hi > 1<<63 || (hi == 1<<63 && (lo != 0 || !neg)) {
			return 0, 0, errOutOfRange(t, s)
		}
		if neg {
			lo, hi = negate128(lo, hi)
		}
		return lo, hi, nil
	}
	limit := sizeMask(t.Size) >> 1 // the largest positive value
	if neg {
		limit++
	}
	if hi != 0 || lo > limit {
		return 0, 0, errOutOfRange(t, s)
	}
	if neg {
		lo = -lo
	}
	return lo & sizeMask(t.Size), 0, nil
}

const (
	float64QuietNaN = 0x7ff8000000000000
	float32QuietNaN = 0x7fc00000
)

func parseFloatText(t core.Type, s string) (lo, hi uint64, err error) {
	neg, rest := splitSign(s)
	if strings.EqualFold(rest, "nan") {
		if t.Size == 4 {
			lo = float32QuietNaN
			if neg {
				lo |= 1 << 31
			}
			return lo, 0, nil
		}
		lo = float64QuietNaN
		if neg {
			lo |= 1 << 63
		}
		return lo, 0, nil
	}
	if strings.IndexByte(s, '_') >= 0 { // strconv takes "1_0"; ClickHouse does not
		return 0, 0, errMalformed(t, s)
	}
	bitSize := 8 * t.Size
	f, perr := strconv.ParseFloat(s, bitSize)
	if perr != nil {
		if ne, ok := perr.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && !math.IsInf(f, 0) {
			// Underflow to zero is not an error in ClickHouse either.
			perr = nil
		}
	}
	if perr != nil {
		if ne, ok := perr.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, 0, errOutOfRange(t, s)
		}
		return 0, 0, errMalformed(t, s)
	}
	if t.Size == 4 {
		return uint64(math.Float32bits(float32(f))), 0, nil
	}
	return math.Float64bits(f), 0, nil
}

func formatFloatBits(t core.Type, lo uint64) string {
	var f float64
	bitSize := 64
	if t.Size == 4 {
		f = float64(math.Float32frombits(uint32(lo)))
		bitSize = 32
	} else {
		f = math.Float64frombits(lo)
	}
	switch {
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	// Plain notation where ClickHouse uses it (1000000, 0.001), exponent
	// notation for the very large and very small.
	if a := math.Abs(f); a == 0 || (a >= 1e-5 && a < 1e21) {
		return strconv.FormatFloat(f, 'f', -1, bitSize)
	}
	// ClickHouse writes the exponent bare: 1e308, 1.5e-7.
	text := strconv.FormatFloat(f, 'g', -1, bitSize)
	if i := strings.IndexByte(text, 'e'); i >= 0 {
		mant, exp := text[:i], text[i+1:]
		sign := ""
		if exp[0] == '-' {
			sign = "-"
		}
		exp = strings.TrimLeft(exp[1:], "0")
		text = mant + "e" + sign + exp
	}
	return text
}

func formatUint128(lo, hi uint64) string {
	if hi == 0 {
		return strconv.FormatUint(lo, 10)
	}
	// Peel off 19 decimal digits at a time.
	const chunk = 1e19
	var parts []uint64
	for hi != 0 {
		qh := hi / chunk
		ql, r := bits.Div64(hi%chunk, lo, chunk)
		parts = append(parts, r)
		hi, lo = qh, ql
	}
	var sb strings.Builder
	sb.WriteString(strconv.FormatUint(lo, 10))
	for i := len(parts) - 1; i >= 0; i-- {
		p := strconv.FormatUint(parts[i], 10)
		sb.WriteString(strings.Repeat("0", 19-len(p)))
		sb.WriteString(p)
	}
	return sb.String()
}

func hexNibble(c byte) (uint64, bool) {
	switch {
	case c >= '0' && c <= '9':
		return uint64(c - '0'), true
	case c >= 'a' && c <= 'f':
		return uint64(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return uint64(c-'A') + 10, true
	}
	return 0, false
}

func parseUUIDText(t core.Type, s string) (lo, hi uint64, err error) {
	var digits [32]byte
	switch len(s) {
	case 36:
		n := 0
		for i := 0; i < 36; i++ {
			if i == 8 || i == 13 || i == 18 || i == 23 {
				if s[i] != '-' {
					return 0, 0, errMalformed(t, s)
				}
				continue
			}
			digits[n] = s[i]
			n++
		}
	case 32:
		copy(digits[:], s)
	default:
		return 0, 0, errMalformed(t, s)
	}
	var words [2]uint64
	for i, c := range digits {
		v, ok := hexNibble(c)
		if !ok {
			return 0, 0, errMalformed(t, s)
		}
		words[i/16] = words[i/16]<<4 | v
	}
	// ClickHouse's order: the first half of the text is the low word.
	return words[0], words[1], nil
}

func formatUUID(lo, hi uint64) string {
	const hexDigits = "0123456789abcdef"
	var b [36]byte
	n := 0
	for w, word := range [2]uint64{lo, hi} {
		for i := 0; i < 16; i++ {
			pos := w*16 + i
			if pos == 8 || pos == 12 || pos == 16 || pos == 20 {
				b[n] = '-'
				n++
			}
			b[n] = hexDigits[word>>(60-4*uint(i))&0xf]
			n++
		}
	}
	return string(b[:])
}

// daysFromCivil is the day number of a proleptic Gregorian date relative to
// 1970-01-01 (Howard Hinnant's days_from_civil).
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	m = mp + 3
	if m > 12 {
		m -= 12
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func daysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// fixedDigits reads s[i:i+n] as a decimal number of exactly n digits.
func fixedDigits(s string, i, n int) (int64, bool) {
	if i+n > len(s) {
		return 0, false
	}
	var v int64
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// parseCivilDate reads YYYY-MM-DD at the start of s and checks the calendar.
func parseCivilDate(s string) (days int64, ok bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := fixedDigits(s, 0, 4)
	m, ok2 := fixedDigits(s, 5, 2)
	d, ok3 := fixedDigits(s, 8, 2)
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysInMonth(y, m) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// parsePlainUint reads a whole string of decimal digits (no sign) that fits
// in 64 bits.
func parsePlainUint(s string) (v uint64, ok, overflow bool) {
	lo, hi, ok, overflow := parseDecimal128(s)
	if ok && !overflow && hi != 0 {
		overflow = true
	}
	return lo, ok, overflow
}

// parseStoredCount parses a Date or DateTime written as its stored number
// (days or seconds since the epoch): a plain unsigned integer of at most
// max; "-0" is accepted as zero.
func parseStoredCount(t core.Type, s string, max uint64) (lo, hi uint64, err error) {
	neg, digits := splitSign(s)
	v, ok, overflow := parsePlainUint(digits)
	if !ok {
		return 0, 0, errMalformed(t, s)
	}
	if overflow || (neg && v != 0) || v > max {
		return 0, 0, errOutOfRange(t, s)
	}
	return v, 0, nil
}

func parseDateText(t core.Type, s string) (lo, hi uint64, err error) {
	if len(s) == 10 && s[4] == '-' {
		days, ok := parseCivilDate(s)
		if !ok {
			return 0, 0, errMalformed(t, s)
		}
		if days < 0 || days > math.MaxUint16 {
			return 0, 0, errOutOfRange(t, s)
		}
		return uint64(days), 0, nil
	}
	return parseStoredCount(t, s, math.MaxUint16)
}

func parseDateTimeText(t core.Type, s string) (lo, hi uint64, err error) {
	if len(s) == 19 && s[4] == '-' {
		days, ok := parseCivilDate(s)
		if !ok || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
			return 0, 0, errMalformed(t, s)
		}
		h, ok1 := fixedDigits(s, 11, 2)
		mi, ok2 := fixedDigits(s, 14, 2)
		sec, ok3 := fixedDigits(s, 17, 2)
		if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || sec > 59 {
			return 0, 0, errMalformed(t, s)
		}
		total := days*86400 + h*3600 + mi*60 + sec
		if total < 0 || total > math.MaxUint32 {
			return 0, 0, errOutOfRange(t, s)
		}
		return uint64(total), 0, nil
	}
	return parseStoredCount(t, s, math.MaxUint32)
}
