package text

import "testing"

func TestBytesBinary(t *testing.T) {
	for n, want := range map[int64]string{-1: "unknown", 0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 20 << 20: "20.0 MiB", 35 << 30: "35.0 GiB", 48 << 40: "48.0 TiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
