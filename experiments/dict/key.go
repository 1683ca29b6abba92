package dict

// A dictionary's key as a run asks for it: a fixed-size type (the lab's
// keys as they are), or, for ClickHouse's COMPLEX_KEY_ layouts, a String
// or a tuple of parts with Strings, derived from the lab's keys. Its
// memory: ClickHouse serializes each row's key into the shard's arena as
// IColumn::serializeValueIntoArena does (a fixed-size part as its bytes; a
// String as its 8-byte size and its bytes, ColumnString) and keeps a
// StringRef to it in the cell.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
)

// KeyPart is one column of a dictionary's key.
type KeyPart struct {
	Type           core.Type // a fixed-size part's type; StringRef for a String
	MinLen, MaxLen int       // a String part's lengths, uniform between them
}

// IsString reports whether p is a String part.
func (p KeyPart) IsString() bool { return p.Type == StringRef }

// String is the part as a run's key names it: UInt64, String,
// String(16) or String(8..32).
func (p KeyPart) String() string {
	return Attribute{Type: p.Type, MinLen: p.MinLen, MaxLen: p.MaxLen}.String()
}

// ColumnType is the part's type in a CREATE DICTIONARY.
func (p KeyPart) ColumnType() string { return p.Type.Name }

// SerializedBytes is the least and most bytes the part takes in
// ClickHouse's arena for one row: a fixed-size part its size, a String its
// length and its bytes.
func (p KeyPart) SerializedBytes() (lo, hi int) {
	if p.IsString() {
		return StringKeyOverhead + p.MinLen, StringKeyOverhead + p.MaxLen
	}
	return p.Type.Size, p.Type.Size
}

// StringKeyOverhead is what a String key part's serialization adds to its
// bytes (ColumnString::serializeValueIntoArena): its 8-byte size. ClickHouse
// 26.7's ColumnString keeps no terminating zero, and serializes none:
// measured through it, 1e5 COMPLEX_KEY_HASHED keys of (String of 8 bytes,
// UInt32) fill an arena of 2,093,056 bytes (chunks of 4 KiB to 1 MiB), as
// 20 bytes a key do, where 21 (a zero) would have needed a 2 MiB chunk
// more; keys of String(16), String(24) and String(40) fill 4,190,208,
// 4,190,208 and 8,384,512 bytes, as 24, 32 and 48 bytes a key do (and as
// 25, 33 and 49 would: those could not tell).
const StringKeyOverhead = 8

// KeyCarrierMinLen is the shortest String that carries the lab's UInt64
// key (its 8 bytes first) when the key has no fixed-size part.
const KeyCarrierMinLen = 8

// MaxKeyParts is the most parts a tuple key takes.
const MaxKeyParts = 8

// Key is a dictionary's key: one part, or a Tuple of them.
type Key struct {
	Parts []KeyPart
	Tuple bool // given as Tuple(...), even of one part
}

// FixedKey is the key of one fixed-size part.
func FixedKey(t core.Type) Key { return Key{Parts: []KeyPart{{Type: t}}} }

// Derived reports whether the key is not the lab's keys as they are: a
// String, or a tuple. Only the COMPLEX_KEY_ layouts hold one.
func (k Key) Derived() bool {
	return k.Tuple || len(k.Parts) != 1 || k.Parts[0].IsString()
}

// String is the key as a run names it: UInt64, String(16),
// Tuple(String(8..32), UInt64).
func (k Key) String() string {
	if !k.Tuple && len(k.Parts) == 1 {
		return k.Parts[0].String()
	}
	parts := make([]string, len(k.Parts))
	for i, p := range k.Parts {
		parts[i] = p.String()
	}
	return "Tuple(" + strings.Join(parts, ", ") + ")"
}

// Carrier is the index of the part that carries the lab's keys: the first
// fixed-size part (the lab's keys of its type), else the first String,
// whose first 8 bytes are the lab's UInt64 key.
func (k Key) Carrier() int {
	for i, p := range k.Parts {
		if !p.IsString() {
			return i
		}
	}
	return 0
}

// LabKey is the type of the keys the lab generates and streams for k.
func (k Key) LabKey() core.Type {
	if c := k.Parts[k.Carrier()]; !c.IsString() {
		return c.Type
	}
	return core.MustType("UInt64")
}

// ColumnNames are the key's columns in a CREATE DICTIONARY: key, then
// key_2, key_3, ... for a tuple's parts.
func (k Key) ColumnNames() []string {
	names := make([]string, len(k.Parts))
	for i := range k.Parts {
		names[i] = KeyColumnName(i)
	}
	return names
}

// KeyColumnName is the i-th key part's column (0-based).
func KeyColumnName(i int) string {
	if i == 0 {
		return "key"
	}
	return "key_" + strconv.Itoa(i+1)
}

// SerializedBytes is the least and most bytes a row's key takes in
// ClickHouse's arena.
func (k Key) SerializedBytes() (lo, hi int) {
	for _, p := range k.Parts {
		a, b := p.SerializedBytes()
		lo, hi = lo+a, hi+b
	}
	return lo, hi
}

// arenaCopy is one copy of the key in the arena, as a String of its
// serialized bytes is one.
func (k Key) arenaCopy() Attribute {
	lo, hi := k.SerializedBytes()
	return Attribute{Type: StringRef, MinLen: lo, MaxLen: hi}
}

// ParseKey reads a run's key: a fixed-size type (core.ParseType's), a
// String with its lengths (String, String(16), String(8..32), as an
// attribute's), or Tuple(P1, P2, ...) of those. ok is false when s is none
// of them; problem, when s is a String or a tuple whose parts are out of
// range, says why.
func ParseKey(s string) (k Key, problem string, ok bool) {
	s = strings.TrimSpace(s)
	if t, err := core.ParseType(s); err == nil {
		return FixedKey(t), "", true
	}
	inner, isTuple := cutTuple(s)
	if !isTuple {
		p, problem, ok := ParseKeyPart(s)
		if !ok || problem != "" {
			return Key{}, problem, ok
		}
		k = Key{Parts: []KeyPart{p}}
	} else {
		fields := splitTopLevel(inner)
		if len(fields) > MaxKeyParts {
			return Key{}, "a tuple of " + strconv.Itoa(len(fields)) + " parts", true
		}
		k.Tuple = true
		for _, f := range fields {
			p, problem, ok := ParseKeyPart(strings.TrimSpace(f))
			if !ok || problem != "" {
				if ok {
					return Key{}, "part " + strconv.Quote(strings.TrimSpace(f)) + ": " + problem, true
				}
				return Key{}, "part " + strconv.Quote(strings.TrimSpace(f)) + " is not a key type", true
			}
			k.Parts = append(k.Parts, p)
		}
	}
	if c := k.Parts[k.Carrier()]; c.IsString() && c.MinLen < KeyCarrierMinLen {
		return Key{}, "a String that carries the lab's UInt64 keys is " + strconv.Itoa(KeyCarrierMinLen) + " bytes or longer, not " + c.String(), true
	}
	return k, "", true
}

// cutTuple is the inside of Tuple(...), case as ClickHouse takes it.
func cutTuple(s string) (string, bool) {
	if len(s) < len("Tuple()") || !strings.EqualFold(s[:6], "Tuple(") || s[len(s)-1] != ')' {
		return "", false
	}
	return s[6 : len(s)-1], true
}

// splitTopLevel splits s at the commas outside parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// ParseKeyPart reads one part of a key: a fixed-size type or a String with
// its lengths; problem says why a String's lengths are out of range.
func ParseKeyPart(s string) (KeyPart, string, bool) {
	if t, err := core.ParseType(s); err == nil {
		return KeyPart{Type: t}, "", true
	}
	lo, hi, problem, ok := ParseString(s)
	if !ok || problem != "" {
		return KeyPart{}, problem, ok
	}
	return KeyPart{Type: StringRef, MinLen: lo, MaxLen: hi}, "", true
}

// StringAllowed is what a String type may be, as ParseString takes it.
var StringAllowed = fmt.Sprintf("String (%d to %d bytes), String(16) or String(min..max), lengths in bytes: 0 <= min <= max, 1 <= max <= %d",
	DefaultStringMin, DefaultStringMax, MaxStringLen)

// ParseString reads a String type with the lengths of its values, and
// checks them: String (DefaultStringMin to DefaultStringMax bytes),
// String(16) or String(8..32), in any case. ok is false when s names no
// String (UInt16, Stringy); problem, when it names one whose lengths are
// not a run's, says which and why: not whole numbers of bytes (String(-1),
// String(1.5), String()), the shortest over the longest (String(40..20)),
// the longest over MaxStringLen, or 0.
func ParseString(s string) (lo, hi int, problem string, ok bool) {
	lo, hi, problem, ok = readString(s)
	switch {
	case !ok || problem != "":
		return 0, 0, problem, ok
	case lo > hi:
		return 0, 0, fmt.Sprintf("String's shortest length %d is over its longest, %d", lo, hi), true
	case hi > MaxStringLen:
		return 0, 0, fmt.Sprintf("String's longest length %d is over %d bytes", hi, MaxStringLen), true
	case hi == 0:
		return 0, 0, "String's longest length is 0 bytes", true
	}
	return lo, hi, "", true
}

// ParseStringLengths reads String, String(16) or String(8..32) as
// ParseString does, without checking the lengths it reads; ok is false
// for anything else.
func ParseStringLengths(s string) (lo, hi int, ok bool) {
	lo, hi, problem, ok := readString(s)
	return lo, hi, ok && problem == ""
}

// readString is ParseString before its lengths are checked: problem says
// why s, a String, has no lengths to read.
func readString(s string) (lo, hi int, problem string, ok bool) {
	s = strings.TrimSpace(s)
	if len(s) < 6 || !strings.EqualFold(s[:6], "String") {
		return 0, 0, "", false
	}
	rest := strings.TrimSpace(s[6:])
	switch {
	case rest == "":
		return DefaultStringMin, DefaultStringMax, "", true
	case rest[0] != '(':
		return 0, 0, "", false // Stringy: another name
	case rest[len(rest)-1] != ')':
		return 0, 0, "String( without its closing parenthesis", true
	}
	a, b, ranged := strings.Cut(rest[1:len(rest)-1], "..")
	if lo, problem = stringLength(a); problem != "" {
		return 0, 0, problem, true
	}
	hi = lo
	if ranged {
		if hi, problem = stringLength(b); problem != "" {
			return 0, 0, problem, true
		}
	}
	return lo, hi, "", true
}

// stringLength reads one of a String's lengths: a whole number of bytes;
// problem says why s is not one.
func stringLength(s string) (int, string) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	switch {
	case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-"):
		return 0, fmt.Sprintf("String's length %s is over %d bytes", s, MaxStringLen)
	case err != nil || n < 0:
		return 0, fmt.Sprintf("String's length %s is not a whole number of bytes", strconv.Quote(s))
	}
	return n, ""
}
