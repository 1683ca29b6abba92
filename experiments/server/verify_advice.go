//go:build !js

package server

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/packlab/packlab/experiments/fault"
)

// An inspection's advice, built on the server it was read from (inspect's
// --verify and --verify-all): the dictionary's own CREATE DICTIONARY with the
// advised LAYOUT, in a database of its own (packlab_verify_<random>, as a
// plan's verification makes), over the dictionary's own source table under
// its own WHERE, LIFETIME(0); loaded, reloaded while MemoryTracking is
// sampled, measured, and dropped, also on an error or a cancel. The
// dictionary itself is never touched. It refuses before making anything
// when the advice's reload peak with a quarter to spare does not fit in
// the server's free memory, and for a dictionary whose source it cannot
// read as the dictionary does (another server, a query, a named
// collection, an XML definition).

// AdviceStarting, where given, is told of each advice about to be built:
// its dictionary (database.name), LAYOUT clause and rows.
type AdviceStarting func(of, layout string, rows int64)

// VerifyAdvice builds the advice of the dictionary name ("database.name",
// or a name only one database of the node has) of ins, on the server of s,
// and measures it beside the model and beside the dictionary as it serves.
// ins is Inspect's of that server (its rows for the node s reaches, on a
// cluster); the verification, or why there is none, is also set on its
// dictionary (Verification, VerifyProblem).
func VerifyAdvice(ctx context.Context, s Settings, ins *Inspection, name string, starting AdviceStarting) (*Verification, error) {
	c, node, err := connectToVerify(ctx, s)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	d, err := ins.dictionaryOn(node, name)
	if err != nil {
		return nil, err
	}
	v, err := c.verifyAdvice(ctx, d, starting)
	if err != nil && ctx.Err() == nil {
		d.VerifyProblem = problemOf(err)
	}
	return v, err
}

// VerifyEveryAdvice is VerifyAdvice for every dictionary of ins on the node
// s reaches whose advice changes its layout, one after another (each copy
// dropped before the next is made, each checked against the server's free
// memory as it is then). A dictionary refused or failed says why in its
// VerifyProblem, and the others go on; the error is only a connection's,
// or a cancel's. built is how many were built and measured.
func VerifyEveryAdvice(ctx context.Context, s Settings, ins *Inspection, starting AdviceStarting) (built int, err error) {
	c, node, err := connectToVerify(ctx, s)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	for i := range ins.Dictionaries {
		d := &ins.Dictionaries[i]
		if d.Node != node || d.Advice == nil || d.Advice.Layout == d.Layout {
			continue
		}
		v, err := c.verifyAdvice(ctx, d, starting)
		if ctx.Err() != nil {
			return built, ctx.Err()
		}
		if err != nil {
			d.VerifyProblem = problemOf(err)
			continue
		}
		if v != nil {
			built++
		}
	}
	return built, nil
}

// problemOf is a verification's error as its dictionary's line: a
// refusal's problem alone (no field, no name: the line is the
// dictionary's).
func problemOf(err error) string {
	if fe := (*fault.FieldError)(nil); errors.As(err, &fe) {
		return fe.Detail(fault.Plain)
	}
	return err.Error()
}

// connectToVerify connects to the server of s for a verification, and
// names the node it reached; a read-only user is refused here.
func connectToVerify(ctx context.Context, s Settings) (*Conn, string, error) {
	c, err := Connect(ctx, s)
	if err != nil {
		return nil, "", err
	}
	v, err := c.newVerification(ctx, 0)
	if err != nil {
		c.Close()
		return nil, "", err
	}
	return c, v.Node, nil
}

// verifyAdvice builds d's advice on c's server; see VerifyAdvice.
func (c *Conn) verifyAdvice(ctx context.Context, d *Dictionary, starting AdviceStarting) (*Verification, error) {
	v, err := c.newVerification(ctx, 0)
	if err != nil {
		return nil, err
	}
	full := d.Database + "." + d.Name
	refuse := func(why string) error {
		return fieldError("verify", full, why, "a dictionary modelled from a table of this server")
	}
	switch {
	case d.Advice == nil:
		return nil, refuse("not modelled (" + d.NotModelled + "): there is no advice to build")
	case d.DDL == "":
		return nil, refuse("its CREATE DICTIONARY cannot be read (" + strings.Join(d.Notes, "; ") + "), so its source cannot be built again")
	case d.ElementCount == 0:
		return nil, refuse("it holds no rows")
	}
	src, problem := sourceTable(d.DDL, d.Database, d.Node)
	if problem != "" {
		return nil, refuse(problem)
	}
	params, _ := clickHouseSource(d.DDL)
	source := "SOURCE(CLICKHOUSE(DB " + quoteString(src.db) + " TABLE " + quoteString(src.table)
	if src.where != "" {
		source += " WHERE " + quoteString(src.where)
	}
	switch {
	case params["PASSWORD"] != "":
		v.Notes = append(v.Notes, "its source's USER and PASSWORD are left out (the server shows the password as [HIDDEN]): the copy reads the table as a source with neither does")
	case params["USER"] != "":
		source += " USER " + quoteString(params["USER"])
	}
	source += "))"
	if _, ok := advisedCopy(d.DDL, "", d.Advice.Layout, source); !ok {
		return nil, refuse("its CREATE DICTIONARY has no column list, LAYOUT or SOURCE to rewrite")
	}
	v.Rows, v.Layout = d.ElementCount, d.Advice.Layout
	v.ModelBytes, v.RealBytes, v.ModelReloadPeakBytes = d.Advice.ModelBytes, d.Advice.SteadyBytes, d.Advice.ReloadPeakBytes
	v.Of, v.OfLayout, v.OfElementCount, v.OfBytesAllocated, v.OfRealBytes, v.OfLoadSeconds = full, d.Layout, d.ElementCount, d.BytesAllocated, d.RealBytes, d.LoadingSeconds
	if err := v.checkFree(c.Endpoint.Host); err != nil {
		return nil, err
	}
	cols := make([]string, 0, len(d.KeyNames)+len(d.AttributeNames))
	for _, col := range append(append([]string{}, d.KeyNames...), d.AttributeNames...) {
		cols = append(cols, d.columnSQL(col))
	}
	p := &prepared{c: c, v: v,
		objects: func(db string) []string {
			ddl, _ := advisedCopy(d.DDL, db, d.Advice.Layout, source)
			return []string{ddl}
		},
		warm: func(string) string {
			q := "SELECT count() FROM " + quoteIdent(src.db) + "." + quoteIdent(src.table) + " WHERE NOT ignore(" + strings.Join(cols, ", ") + ")"
			if src.where != "" {
				q += " AND (" + src.where + ")"
			}
			return q
		},
	}
	if starting != nil {
		starting(full, v.Layout, v.Rows)
	}
	v, err = p.build(ctx)
	d.Verification = v
	return v, err
}

// dictionaryOn is the dictionary name (database.name, or a name one
// database of the node holds) among ins's rows of node.
func (ins *Inspection) dictionaryOn(node, name string) (*Dictionary, error) {
	var byName []*Dictionary
	var names []string
	for i := range ins.Dictionaries {
		d := &ins.Dictionaries[i]
		if d.Node != node {
			continue
		}
		if d.Database+"."+d.Name == name {
			return d, nil
		}
		if d.Name == name {
			byName = append(byName, d)
		}
		names = append(names, d.Database+"."+d.Name)
	}
	if len(byName) == 1 {
		return byName[0], nil
	}
	sort.Strings(names)
	allowed := "one of " + strings.Join(names, ", ")
	if len(names) > 12 {
		allowed = fmt.Sprintf("one of %s, ... (%d in all, as the inspection lists them)", strings.Join(names[:12], ", "), len(names))
	}
	if len(names) == 0 {
		allowed = "a dictionary's name; the server " + node + " has none"
	}
	why := "no dictionary of that name on " + node
	if len(byName) > 1 {
		why = fmt.Sprintf("%d databases have a dictionary of that name", len(byName))
		allowed = "database.name"
	}
	return nil, fieldError("verify", name, why, allowed)
}

// advisedCopy is ddl, a CREATE DICTIONARY, as the dictionary db.dict with
// LAYOUT layout, SOURCE source and LIFETIME(0) (the copy loads once: no
// background reload beside the measurement); false when ddl has no column
// list, LAYOUT or SOURCE.
func advisedCopy(ddl, db, layout, source string) (string, bool) {
	open, _, ok := columnList(ddl)
	if !ok {
		return "", false
	}
	type edit struct {
		sp   span
		with string
	}
	var edits []edit
	for _, e := range []struct{ word, with string }{{"LAYOUT", layout}, {"SOURCE", source}, {"LIFETIME", "LIFETIME(0)"}} {
		sp, found := dictClause(ddl, e.word)
		if !found {
			if e.word == "LIFETIME" {
				continue // none: it never reloads by itself either
			}
			return "", false
		}
		edits = append(edits, edit{sp, e.with})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].sp.start > edits[j].sp.start })
	out := ddl
	for _, e := range edits {
		out = out[:e.sp.start] + e.with + out[e.sp.end:]
	}
	return "CREATE DICTIONARY " + quoteIdent(db) + ".dict " + out[open:], true
}
