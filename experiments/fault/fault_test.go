package fault

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func flag(field string) string {
	return map[string]string{"shards": "--shards", "source": "--source", "attributes": "--attributes"}[Base(field)]
}

// TestWords: a field error names the field plainly, or as a face's Namer
// does, in its head and in its texts; its cause stays reachable.
func TestWords(t *testing.T) {
	e := &FieldError{Field: "shards", Value: "0", Problem: "out of range", Allowed: "1 to 128, a power of two with {source}"}
	if got, want := e.Error(), "shards 0: out of range (allowed: 1 to 128, a power of two with source)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := e.Words(flag), "--shards 0: out of range (allowed: 1 to 128, a power of two with --source)"; got != want {
		t.Errorf("Words(flag) = %q, want %q", got, want)
	}
	a := New("attributes[2]", "Foo", "unknown type", "")
	if got, want := Render(a, flag), "--attributes Foo: unknown type"; got != want {
		t.Errorf("attributes[2]: %q, want %q", got, want)
	}
	w := Wrap("source", "f.tsv", "cannot be read", fs.ErrPermission, "")
	outer := fmt.Errorf("result x: %w", w)
	if got, want := Render(outer, flag), "result x: --source f.tsv: cannot be read: permission denied"; got != want {
		t.Errorf("Render(wrapped) = %q, want %q", got, want)
	}
	if got, want := Render(&inWords{outer}, flag), "result x: --source f.tsv: cannot be read: permission denied"; got != want {
		t.Errorf("Render(rendered) = %q, want %q", got, want)
	}
	if !errors.Is(outer, fs.ErrPermission) {
		t.Error("the cause is not reachable through errors.Is")
	}
	m := Errorf("starting: %w (use {shards} 1)", errors.New("no {shards} here"))
	if got, want := Render(m, flag), "starting: no {shards} here (use --shards 1)"; got != want {
		t.Errorf("Errorf: %q, want %q (an argument is never read for fields)", got, want)
	}
}

// inWords is a face's wrapper whose text is its error in the face's words.
type inWords struct{ err error }

func (e *inWords) Error() string { return Render(e.err, flag) }
func (e *inWords) Unwrap() error { return e.err }
