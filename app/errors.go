package app

import (
	"errors"
	"fmt"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/fault"
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

// controlOfField is the form's control of each field of
// config.Config (its JSON name) that the engine's errors name; an
// error of a field not here goes to the action that failed.
var controlOfField = map[string]string{
	"layouts":         "layouts",
	"key":             "key",
	"value":           "value",
	"attributes":      "attributes", // attributes[i]: the one list of them
	"rows":            "rows",
	"shards":          "shards",
	"max_load_factor": "max_load_factor",
	"keys":            "keys",
	"source":          "source",
	"header":          "header",
	"key_column":      "key_column",
	"value_column":    "value_column",
	"columns":         "columns",
	"skip_bad_rows":   "skip_bad_rows",
	"seed":            "seed",
	"repeats":         "repeats",
	"miss_rate":       "miss_rate",
	"no_read":         "no_read",
	"huge_pages":      "huge_pages",
	"preallocate":     "preallocate",
	"settle_seconds":  "settle",
	"force":           "run",
}

// controlOf is field's form control, or "" when the form has none.
func controlOf(field string) string { return controlOfField[fault.Base(field)] }

// wordOfField is how the form's texts name a field the engine's texts
// name ({field}, package fault): by what the form shows, not by a flag.
var wordOfField = map[string]string{
	"layouts":          "ticking",
	"no_read":          "“skip lookups”",
	"preallocate":      "“preallocate”",
	"source":           "a file source",
	"keys":             "synthetic keys",
	"force":            "force",
	"in_process":       "running in this process",
	"settle_seconds":   "“Idle first” (under More options)",
	"memory_bytes":     "the memory budget",
	"first_load_only":  "“first load only”",
	"prefer":           "Prefer",
	"max_key":          "the Largest key",
	"calibrate":        "“measure missing speeds first”",
	"no_calibrate":     "unticking “measure missing speeds first”",
	"calibration_rows": "the calibration's rows",
	"attributes":       "the attributes",
	"max_load_factor":  "the max load factor",
	"miss_rate":        "the miss rate",
	"key_column":       "the key column",
	"value_column":     "the value column",
	"skip_bad_rows":    "“skip bad rows”",
	"huge_pages":       "huge pages",
	"results_dir":      "the results folder",
	"password":         "its own field",
	"connect_timeout":  "the Connect timeout",
	"query_timeout":    "the Query timeout",
}

// formName is fault's Namer of the window and the page.
func formName(field string) string { return wordOfField[fault.Base(field)] }

// formWords is an engine's text (a note, a plan's line) in the form's
// words: its {field}s named as the form shows them.
func formWords(s string) string { return fault.Fields(s, formName) }

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
	var fe *fault.FieldError
	if errors.As(err, &fe) {
		field := controlOf(fe.Field)
		if field == "" {
			field = fallback
		}
		return &Error{Field: field, Message: fieldMessage(fe)}
	}
	var me *experiments.MemoryError
	if errors.As(err, &me) {
		return &Error{Field: "run", Message: refusal(me.Verdict)}
	}
	return &Error{Field: fallback, Message: fault.Render(err, formName)}
}

// fieldMessage is a FieldError without its field, which the page shows
// beside the field's control: `500: out of range (allowed: 1 to 128)`.
func fieldMessage(fe *fault.FieldError) string {
	if fe.Switch {
		return fe.Detail(formName)
	}
	s := fe.Value
	if s == "" {
		s = "“”"
	}
	return s + ": " + fe.Detail(formName)
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
