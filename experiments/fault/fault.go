// Package fault is the engine's typed errors, which every room of the
// engine returns and every face words in its own language: a field's bad
// input (FieldError), a text that names fields (Errorf), a job stopped
// (ErrCancelled), bad input found by reading it (InputError).
//
// The engine names its configuration's fields by their JSON names
// ("shards", "max_load_factor", "attributes[2]"), never by a command-line
// flag or a form's label: a text that names a field writes it {shards}, and
// Words renders it with a face's Namer (the command line's --shards, the
// window's “Shards”); Error() renders it with Plain, the field's own name.
//
// It is a leaf (the standard library only), so that the results folder
// (experiments/store) and the drivers can return these errors without
// importing the engine's root.
package fault

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// ErrCancelled is wrapped by the error of a job stopped by its context.
var ErrCancelled = errors.New("cancelled")

// InputError is bad input found by reading it before any work, such as a
// malformed row of a source file (exit code 2, as a FieldError).
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Namer names a field (its JSON name, "attributes[2]" for one of a list) in
// a face's words; "" keeps the field's own name.
type Namer func(field string) string

// Plain is the engine's own naming: every field by its JSON name.
func Plain(field string) string { return field }

// Base is a field's name without its index: "attributes" of "attributes[2]".
func Base(field string) string {
	base, _, _ := strings.Cut(field, "[")
	return base
}

// FieldError is bad input in one field of a configuration: the field (its
// JSON name), the value as the user gave it, what is wrong, its cause if
// any, and what is allowed. Its text is one line, e.g.
// "shards 500: out of range (allowed: 1 to 128)".
type FieldError struct {
	Field   string // "shards", "attributes[2]": the configuration's JSON name
	Value   string // "500", exactly as the user gave it
	Problem string // "out of range"; names other fields as {name}
	Allowed string // "1 to 128", may be empty; names fields as {name}
	Switch  bool   // a yes/no field (skip_bad_rows): Value is not shown
	Err     error  // the cause, shown after Problem; nil if none
}

// New is a FieldError without a cause.
func New(field, value, problem, allowed string) error {
	return &FieldError{Field: field, Value: value, Problem: problem, Allowed: allowed}
}

// Of is New for one field's value and what it allows, waiting for the
// problem: a parser's bad("empty"), bad("not a number").
func Of(field, value, allowed string) func(problem string) error {
	return func(problem string) error { return New(field, value, problem, allowed) }
}

// Wrap is a FieldError whose problem has a cause (errors.Is and As reach it).
func Wrap(field, value, problem string, cause error, allowed string) error {
	return &FieldError{Field: field, Value: value, Problem: problem, Err: cause, Allowed: allowed}
}

func (e *FieldError) Error() string { return e.Words(Plain) }
func (e *FieldError) Unwrap() error { return e.Err }

// Words is the error's line with every field named by name:
// with a Namer that gives flags, --shards 500: out of range (allowed: 1 to 128).
func (e *FieldError) Words(name Namer) string {
	s := named(name, e.Field)
	if !e.Switch {
		s += " " + ShowValue(e.Value)
	}
	return s + ": " + e.Detail(name)
}

// Detail is the error without its field and value: what is wrong, its
// cause and what is allowed, fields named by name.
func (e *FieldError) Detail(name Namer) string {
	s := Fields(e.Problem, name)
	if e.Err != nil {
		if s != "" {
			s += ": "
		}
		s += Render(e.Err, name)
	}
	if e.Allowed != "" {
		s += " (allowed: " + Fields(e.Allowed, name) + ")"
	}
	return s
}

// Message is an error whose text names fields as {name} (Errorf).
type Message struct {
	format string
	args   []any
	err    error // the %w argument, if any
}

// Errorf is fmt.Errorf whose format may name fields as {name}: its text
// names them plainly, Words and Render as a face does. Only the format is
// read for fields, never the arguments (a path or a user's value).
func Errorf(format string, args ...any) error {
	m := &Message{format: format, args: args}
	if w, ok := fmt.Errorf(format, args...).(interface{ Unwrap() error }); ok {
		m.err = w.Unwrap()
	}
	return m
}

func (m *Message) Error() string { return m.Words(Plain) }
func (m *Message) Unwrap() error { return m.err }

// Words is the message with its fields named by name.
func (m *Message) Words(name Namer) string {
	return fmt.Errorf(Fields(m.format, name), m.args...).Error()
}

// fieldRef is {name} in a text: a field named by its JSON name, maybe
// indexed.
var fieldRef = regexp.MustCompile(`\{[a-z][a-z_]*(\[[0-9]+\])?\}`)

// Fields renders the {name}s of s with name.
func Fields(s string, name Namer) string {
	if !strings.Contains(s, "{") {
		return s
	}
	return fieldRef.ReplaceAllStringFunc(s, func(ref string) string {
		return named(name, ref[1:len(ref)-1])
	})
}

func named(name Namer, field string) string {
	if name == nil {
		return field
	}
	if s := name(field); s != "" {
		return s
	}
	return field
}

// worded is an error that names fields: FieldError, Message, and any
// type of the engine that words its own text (MemoryError).
type worded interface {
	error
	Words(Namer) string
}

// Render is err's whole text with the fields of each error in its chain
// named by name: each worded error's own text is replaced by its words, so
// a wrapped FieldError ("result X: ids Y: ...") reads in the face's words
// too.
func Render(err error, name Namer) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var walk func(e error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if w, ok := e.(worded); ok {
			// Rendered once: an error already in name's words (a face's
			// own wrapper of it) is left as it is.
			if plain, words := w.Error(), w.Words(name); plain != words && !strings.Contains(msg, words) {
				msg = strings.Replace(msg, plain, words, 1)
			}
			if _, isField := e.(*FieldError); isField {
				return // Words rendered its cause already
			}
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, c := range u.Unwrap() {
				walk(c)
			}
		}
	}
	walk(err)
	return msg
}

// ShowValue writes a value the user gave as a message shows it: as it is,
// or quoted when it is empty, has spaces at either end or holds a control
// character, so that the message shows exactly what was given.
func ShowValue(v string) string {
	if v == "" || strings.TrimSpace(v) != v || strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return strconv.Quote(v)
	}
	return v
}
