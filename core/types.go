package core

import (
	"fmt"
	"strings"
	"unsafe"
)

// Kind is the family a ClickHouse fixed-size type belongs to. It decides how
// text is parsed into the type's bits; maps never look at it, since keys and
// values compare and hash by their bits alone.
type Kind uint8

const (
	KindUnsigned Kind = iota // UInt8 ... UInt128
	KindSigned               // Int8 ... Int128, two's complement
	KindFloat                // Float32, Float64: IEEE 754 bits, so NaN and -0.0 are keys of their own
	KindUUID                 // 16 bytes
	KindDate                 // days since 1970-01-01, unsigned 16-bit
	KindDateTime             // seconds since the Unix epoch, unsigned 32-bit
	KindRow                  // a row of several attributes side by side (RowType)
)

// RowType is the value type of a row: several attributes' bytes side by
// side with no padding, size bytes in all (1 to 16), named by the caller
// (e.g. "Tuple(UInt16, UInt32, Float64)"). A table carries it in the
// narrowest V that holds it, its low size bytes, and packed and compact keep
// only those (Options.ValueBytes); a synthetic source draws its values cut
// to them. Text is not parsed into a row.
func RowType(name string, size int) Type {
	return Type{Name: name, Size: size, Align: 1, Kind: KindRow}
}

// Type is one of ClickHouse's fixed-size key or value types.
type Type struct {
	Name  string `json:"name"`  // ClickHouse spelling, e.g. "UInt64"
	Size  int    `json:"size"`  // bytes; one of 1, 2, 4, 8, 16
	Align int    `json:"align"` // natural alignment in a C++ (and Go) struct: min(Size, wordAlign)
	Kind  Kind   `json:"-"`
}

// wordAlign is the alignment of an 8-byte integer in a struct on this
// platform: 8 on 64-bit ones and wasm, 4 on 32-bit x86 and ARM (as their C
// ABIs lay out a uint64_t inside a struct), so that PaddedCellBytes is the
// cells' size here, as every table's Stats are.
const wordAlign = int(unsafe.Alignof(struct{ x uint64 }{}.x))

var types = []Type{
	{"UInt8", 1, 1, KindUnsigned},
	{"UInt16", 2, 2, KindUnsigned},
	{"UInt32", 4, 4, KindUnsigned},
	{"UInt64", 8, wordAlign, KindUnsigned},
	{"UInt128", 16, wordAlign, KindUnsigned},
	{"Int8", 1, 1, KindSigned},
	{"Int16", 2, 2, KindSigned},
	{"Int32", 4, 4, KindSigned},
	{"Int64", 8, wordAlign, KindSigned},
	{"Int128", 16, wordAlign, KindSigned},
	{"Float32", 4, 4, KindFloat},
	{"Float64", 8, wordAlign, KindFloat},
	{"UUID", 16, wordAlign, KindUUID},
	{"Date", 2, 2, KindDate},
	{"DateTime", 4, 4, KindDateTime},
}

// Types returns every supported type, in ClickHouse's documentation order.
func Types() []Type { return append([]Type(nil), types...) }

// TypeNames returns the names of every supported type, for error messages and menus.
func TypeNames() []string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	return names
}

// ParseType finds a type by its ClickHouse name, ignoring case.
func ParseType(name string) (Type, error) {
	for _, t := range types {
		if strings.EqualFold(t.Name, strings.TrimSpace(name)) {
			return t, nil
		}
	}
	return Type{}, fmt.Errorf("unknown type %q (allowed: %s)", name, strings.Join(TypeNames(), ", "))
}

// MustType is ParseType for names known at compile time; it panics on a typo.
func MustType(name string) Type {
	t, err := ParseType(name)
	if err != nil {
		panic(err)
	}
	return t
}

func (t Type) String() string { return t.Name }

// PairBytes is the payload of one <K,V> pair: sizeof(K)+sizeof(V), the
// physical lower bound of any layout.
func PairBytes(k, v Type) int { return k.Size + v.Size }

// PaddedCellBytes is sizeof(struct{K;V}) with natural alignment, as a C++
// std::pair or a Go struct lays it out: V starts at the next multiple of its
// alignment, and the whole cell is rounded up to the larger alignment.
func PaddedCellBytes(k, v Type) int {
	return paddedCell(k.Size, k.Align, v.Size, v.Align)
}

func paddedCell(ks, ka, vs, va int) int {
	off := alignUp(ks, va)
	return alignUp(off+vs, max(ka, va))
}

func alignUp(n, a int) int { return (n + a - 1) / a * a }

// Bits is the set of Go types a map stores keys and values in: the raw bits
// of a ClickHouse type of 1, 2, 4, 8 or 16 bytes. Floats and signed types are
// stored as their bit patterns (uint64(math.Float64bits(f)), uint32(i) for
// an Int32, ...; core/source's ParseValue does it for text), so equality is bitwise and NaN
// or -0.0 are ordinary keys, as in ClickHouse.
type Bits interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64 | ~[2]uint64
}

// U128 holds the bits of a 16-byte type (UInt128, Int128, UUID): low word first.
type U128 = [2]uint64

// sizeOf is unsafe.Sizeof for a type parameter; the compiler folds it to a
// constant in every instantiation.
func sizeOf[T any]() uintptr {
	var t T
	return unsafe.Sizeof(t)
}

// FromUint64 builds the bits of T from the low bytes of lo and, for 16-byte
// types, hi as the upper word. Wider inputs are truncated, as a C cast would.
func FromUint64[T Bits](lo, hi uint64) T {
	var t T
	p := unsafe.Pointer(&t)
	switch sizeOf[T]() {
	case 1:
		*(*uint8)(p) = uint8(lo)
	case 2:
		*(*uint16)(p) = uint16(lo)
	case 4:
		*(*uint32)(p) = uint32(lo)
	case 8:
		*(*uint64)(p) = lo
	default:
		*(*U128)(p) = U128{lo, hi}
	}
	return t
}

// ToUint64 returns the bits of t as (low word, high word); hi is zero for
// types of 8 bytes or less.
func ToUint64[T Bits](t T) (lo, hi uint64) {
	p := unsafe.Pointer(&t)
	switch sizeOf[T]() {
	case 1:
		return uint64(*(*uint8)(p)), 0
	case 2:
		return uint64(*(*uint16)(p)), 0
	case 4:
		return uint64(*(*uint32)(p)), 0
	case 8:
		return *(*uint64)(p), 0
	default:
		w := *(*U128)(p)
		return w[0], w[1]
	}
}
