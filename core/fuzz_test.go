package core

import (
	"encoding/binary"
	"testing"
)

// FuzzLayouts decodes bytes into a sequence of Insert / Get / Has operations
// on small keys (so they collide and repeat) and checks every layout against
// the builtin map after each one, then the invariants at the end.
//
//	go test ./core -run=NONE -fuzz=FuzzLayouts -fuzztime=1m
func FuzzLayouts(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0, 2, 1, 0})
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f"))
	f.Add(make([]byte, 300))
	f.Fuzz(func(t *testing.T, ops []byte) {
		for _, l := range Layouts() {
			for _, mlf := range []float64{0.5, 0.99} {
				m, _ := New[uint16, uint8](l, Options{MaxLoadFactor: mlf})
				oracle := map[uint16]uint8{}
				for i := 0; i+3 <= len(ops); i += 3 {
					op, key, val := ops[i]%3, binary.LittleEndian.Uint16(ops[i+1:])%700, ops[i+1]^ops[i+2]
					switch op {
					case 0:
						_, had := oracle[key]
						if !had {
							oracle[key] = val
						}
						if m.Insert(key, val) == had {
							t.Fatalf("%s mlf %v: op %d Insert(%d) disagrees with the builtin map (present: %v)", l, mlf, i/3, key, had)
						}
					case 1:
						got, ok := m.Get(key)
						want, wok := oracle[key]
						if got != want || ok != wok {
							t.Fatalf("%s mlf %v: op %d Get(%d) = %d, %v; want %d, %v", l, mlf, i/3, key, got, ok, want, wok)
						}
					case 2:
						if _, want := oracle[key]; m.Has(key) != want {
							t.Fatalf("%s mlf %v: op %d Has(%d) != %v", l, mlf, i/3, key, want)
						}
					}
				}
				if m.Len() != len(oracle) {
					t.Fatalf("%s: Len %d, want %d", l, m.Len(), len(oracle))
				}
				if err := m.CheckInvariants(); err != nil {
					t.Fatalf("%s: %v", l, err)
				}
			}
		}
	})
}
