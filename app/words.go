package app

import (
	"github.com/packlab/packlab/experiments/planner"
)

// The engine's notes under a table and the plan's lines name its fields
// ({max_key}, package fault); the window and the page name them as the
// form does (formWords, errors.go), the command line by its flags.

// formLines is formWords over each line.
func formLines(lines []string) []string {
	if lines == nil {
		return nil
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = formWords(l)
	}
	return out
}

// formPlan is the plan's words in the form's.
func formPlan(d planner.PlanDetails) planner.PlanDetails {
	for _, s := range []*string{&d.Headline, &d.Answer, &d.Rule, &d.TableTitle} {
		*s = formWords(*s)
	}
	d.RunnersUp, d.RuledOut, d.HowMade, d.Front = formLines(d.RunnersUp), formLines(d.RuledOut), formLines(d.HowMade), formLines(d.Front)
	d.Answers = append([]planner.PlanAnswer(nil), d.Answers...)
	for i := range d.Answers {
		a := &d.Answers[i]
		a.Line, a.Why, a.Lines = formWords(a.Line), formWords(a.Why), formLines(a.Lines)
		a.Snippet.Note = formWords(a.Snippet.Note)
	}
	for i := range d.Rows {
		d.Rows[i] = formLines(d.Rows[i])
	}
	for i := range d.Snippets {
		d.Snippets[i].Note = formWords(d.Snippets[i].Note)
	}
	return d
}
