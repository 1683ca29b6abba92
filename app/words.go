package app

import (
	"strings"

	"github.com/packlab/packlab/experiments/planner"
)

// formWords turns the command line's words in the engine's texts (its
// notes under a table, the plan's lines) into the form's, for the window
// and the page, which have no flags. The command line prints them as the
// engine words them.
var formWords = strings.NewReplacer(
	`--settle 8 (the form's "Idle first")`, "an idle of 8 s before each load (“Idle first” under More options)",
	" (--memory)", " (the memory budget)",
	"(--first-load-only; ", "(“first load only”; ",
	"; --first-load-only checks the first load)", "; “first load only” checks the first load)",
	" setups in all with --format json or csv)", " setups in all)",
	"(--prefer read or load to rank by them)", "(Prefer fastest reads or fastest load ranks by them)",
	"give --max-key N when the keys are integers from 0 to N (ids)", "give the Largest key N when the keys are integers from 0 to N (ids)",
	"`packlab plan` does it unless --no-calibrate; in the lab, tick", "tick",
)

// formLines is formWords over each line.
func formLines(lines []string) []string {
	if lines == nil {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = formWords.Replace(l)
	}
	return out
}

// formPlan is the plan's words in the form's.
func formPlan(d planner.PlanDetails) planner.PlanDetails {
	for _, s := range []*string{&d.Headline, &d.Answer, &d.Rule, &d.TableTitle} {
		*s = formWords.Replace(*s)
	}
	d.RunnersUp, d.RuledOut, d.HowMade = formLines(d.RunnersUp), formLines(d.RuledOut), formLines(d.HowMade)
	d.Answers = append([]planner.PlanAnswer(nil), d.Answers...)
	for i := range d.Answers {
		a := &d.Answers[i]
		a.Line, a.Why, a.Lines = formWords.Replace(a.Line), formWords.Replace(a.Why), formLines(a.Lines)
		a.Snippet.Note = formWords.Replace(a.Snippet.Note)
	}
	for i := range d.Rows {
		d.Rows[i] = formLines(d.Rows[i])
	}
	for i := range d.Snippets {
		d.Snippets[i].Note = formWords.Replace(d.Snippets[i].Note)
	}
	return d
}
