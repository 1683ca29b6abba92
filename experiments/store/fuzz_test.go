package store

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzResultFile: any bytes in a results folder are read as a result or
// refused with an error, never a panic, and a result read is in range.
func FuzzResultFile(f *testing.F) {
	for _, s := range []string{`{"id":"a","layout":"hashed","rows":10}`, `{"id":"n","layout":"hashed","rows":-5}`,
		`{"id":"f","layout":"hashed","load_seconds":1e308}`, `{"id":"x","layout":"hashed","rows":`, `{}`, `[]`, `null`,
		`{"id":"s","layout":"hashed","shards":1000}`, `{"id":"l","layout":"hashed","load_factor":2}`} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "r.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := (&Store{Dir: dir}).read(path)
		if err == nil && r.Validate() != nil {
			t.Errorf("read %q: a result out of range was accepted", data)
		}
	})
}
