package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/text"
)

// Error is every error the lab's API returns: the form field or the action
// it concerns, and one line for the person. A face shows Message next to
// the element named Field (a form field such as "rows" or "shards", or an
// action: "run", "cancel", "export", "chart", "history", "source").
//
// The desktop binding hands it to the page as the JSON object
// {"field": ..., "message": ...}; Error() is "field: message".
type Error struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// errorf makes an *Error for field.
func errorf(field, format string, args ...any) *Error {
	return &Error{Field: field, Message: fmt.Sprintf(format, args...)}
}

// fieldOfFlag maps the command-line flags that experiments' errors name to
// the form's fields.
var fieldOfFlag = map[string]string{
	"--layout":          "layouts",
	"--key":             "key",
	"--value":           "value",
	"--attributes":      "attributes",
	"--rows":            "rows",
	"--shards":          "shards",
	"--max-load-factor": "max_load_factor",
	"--keys":            "keys",
	"--source":          "source",
	"--header":          "header",
	"--key-column":      "key_column",
	"--value-column":    "value_column",
	"--columns":         "columns",
	"--skip-bad-rows":   "skip_bad_rows",
	"--seed":            "seed",
	"--repeats":         "repeats",
	"--miss-rate":       "miss_rate",
	"--no-read":         "no_read",
	"--huge-pages":      "huge_pages",
	"--preallocate":     "preallocate",
	"--settle":          "settle",
	"--force":           "run",
}

// flagWords turns the flags a message may mention into the form's words.
var flagWords = strings.NewReplacer(
	// The command line's advice to list layouts: the form ticks them.
	"ch_ layouts or rows, e.g. --layout ch_hashed,ch_sparse_hashed,ch_hashed_array,packed_row,compact_row", "only ch_ layouts and rows ticked: ch_hashed, ch_sparse_hashed, ch_hashed_array, packed_row, compact_row",
	"--no-read", "“skip lookups”",
	"--preallocate", "“preallocate”",
	"--source", "a file source",
	"--keys", "synthetic keys",
	"--force", "force",
)

// ErrorOf turns any error of the lab into an *Error: a field error of
// experiments names its form field, the memory guard's refusal belongs to
// "run", and anything else goes to fallback (the action that failed). A nil
// error gives nil.
func ErrorOf(err error, fallback string) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var fe *experiments.FieldError
	if errors.As(err, &fe) {
		field, ok := fieldOfFlag[fe.Flag]
		if !ok {
			field = fallback
		}
		return &Error{Field: field, Message: fieldMessage(fe)}
	}
	var me *experiments.MemoryError
	if errors.As(err, &me) {
		return &Error{Field: "run", Message: refusal(me.Check)}
	}
	// Errors that experiments words for the command line, "--source F: ...",
	// go to that flag's field, without the flag.
	msg := err.Error()
	if flag, rest, ok := strings.Cut(msg, " "); ok && strings.HasPrefix(flag, "--") {
		if field, ok := fieldOfFlag[strings.TrimSuffix(flag, ":")]; ok {
			return &Error{Field: field, Message: rest}
		}
	}
	return &Error{Field: fallback, Message: msg}
}

// fieldMessage is a FieldError without its flag, which the page shows
// beside the field it names: `500: out of range (allowed: 1 to 128)`.
func fieldMessage(fe *experiments.FieldError) string {
	s := fe.Value
	if s == "" {
		s = "“”"
	}
	s += ": " + flagWords.Replace(fe.Problem)
	if fe.Allowed != "" {
		s += " (allowed: " + flagWords.Replace(fe.Allowed) + ")"
	}
	return s
}

// refusal is the guard's "no" with its numbers, for the page.
func refusal(c experiments.MemoryCheck) string {
	big := c.LargestEstimate()
	about := "about "
	if big.Estimated {
		about = "at most about "
	}
	bound := ""
	if c.AvailableFrom != "" {
		bound = " (bounded by " + c.AvailableFrom + ")"
	}
	return fmt.Sprintf("Not run: %s at %s rows needs %s%s at its peak (tables %s, loader %s, read %s, worker runtime %s), but only %s of %s is available%s.",
		c.Largest, text.Rows(big.Rows), about, text.Bytes(c.NeedBytes),
		text.Bytes(big.TablePeakBytes), text.Bytes(big.LoaderBytes),
		text.Bytes(big.ReadBytes), text.Bytes(c.RuntimeBytes),
		text.Bytes(c.AvailableBytes), text.Bytes(c.TotalBytes), bound)
}
