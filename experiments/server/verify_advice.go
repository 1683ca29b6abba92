//go:build !js

package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/packlab/packlab/experiments/dict"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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
// or a name only one database of a node has) of ins, on the server it was
// read from, and measures it beside the model and beside the dictionary as
// it serves: on the node s reaches, or, for an inspection of a cluster, on
// every replica that holds it, one after another (each reached on its
// native port as system.clusters lists it, with s's user, database,
// password and TLS, as VerifyCluster reaches them). Each verification, or
// why there is none, is set on its dictionary (Verification,
// VerifyProblem). The error is a name no node has, a connection's, a
// cancel's, or, when nothing was built, the first refusal or failure.
func VerifyAdvice(ctx context.Context, s Settings, ins *Inspection, name string, starting AdviceStarting) (built int, err error) {
	s.QueryTimeout = loadTimeout(s.QueryTimeout, ins)
	found := false
	var first error
	err = onEveryNode(ctx, s, ins.Cluster, func(c *Conn, node string) error {
		d, n := ins.lookup(node, name)
		if n == 0 && ins.Cluster != "" {
			return nil // not on this replica
		}
		if n != 1 {
			_, err := ins.dictionaryOn(node, name)
			return err
		}
		found = true
		if err := c.tryAdvice(ctx, d, starting); err != nil {
			if ctx.Err() != nil {
				return err
			}
			first = cmp.Or(first, err)
			return nil
		}
		built++
		return nil
	})
	switch {
	case err != nil:
		return built, err
	case !found:
		_, err := ins.dictionaryOn("", name) // on no replica: every one's names
		return 0, err
	case built == 0:
		return 0, first
	}
	return built, nil
}

// VerifyEveryAdvice is VerifyAdvice for every dictionary of ins whose
// advice changes its layout, on its own node (every replica's, on a
// cluster), one after another: each copy dropped before the next is made,
// each checked against its server's free memory as it is then. One refused
// or failed says why in its VerifyProblem, and the others go on; the error
// is only a connection's, or a cancel's. built is how many were built and
// measured.
func VerifyEveryAdvice(ctx context.Context, s Settings, ins *Inspection, starting AdviceStarting) (built int, err error) {
	s.QueryTimeout = loadTimeout(s.QueryTimeout, ins)
	err = onEveryNode(ctx, s, ins.Cluster, func(c *Conn, node string) error {
		for i := range ins.Dictionaries {
			d := &ins.Dictionaries[i]
			if d.Node != node || d.Advice == nil || d.Advice.Layout == d.Layout {
				continue
			}
			if err := c.tryAdvice(ctx, d, starting); err != nil {
				if ctx.Err() != nil {
					return err
				}
				continue
			}
			built++
		}
		return nil
	})
	return built, err
}

// loadTimeout is a verification's query timeout: a load of the whole
// dictionary is one query (SYSTEM RELOAD DICTIONARY), which the query
// timeout (60 s by default) bounds, and the client's read deadline with it;
// 5e6 rows of HASHED with a String took 43 s to build, load and reload as
// SPARSE_HASHED on 2 cores, where the dictionary's own load took 5.6. So a
// verification allows the query timeout, or ten times the longest load of
// the inspection's dictionaries and a minute, whichever is longer.
func loadTimeout(query time.Duration, ins *Inspection) time.Duration {
	var longest float64
	for _, d := range ins.Dictionaries {
		longest = max(longest, d.LoadingSeconds)
	}
	return max(cmp.Or(query, DefaultQueryTimeout), time.Duration((10*longest+60)*float64(time.Second)))
}

// onEveryNode calls do with a connection to the server of s and the name
// of the node it reached (as Inspect names nodes), or, with a cluster, with
// each replica's in turn; a read-only user is refused first.
func onEveryNode(ctx context.Context, s Settings, cluster string, do func(c *Conn, node string) error) error {
	targets := []Settings{s}
	if cluster != "" {
		c, err := Connect(ctx, s)
		if err != nil {
			return err
		}
		targets, err = c.replicaSettings(ctx, cluster, s)
		c.Close()
		if err != nil {
			return err
		}
	}
	for _, t := range targets {
		c, err := Connect(ctx, t)
		if err != nil {
			return err
		}
		v, err := c.newVerification(ctx, 0)
		if err == nil {
			err = do(c, v.Node)
		}
		c.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// tryAdvice is verifyAdvice, which keeps why it built nothing on d
// (VerifyProblem: a refusal's problem alone, no field and no name, for the
// line is the dictionary's), but not after a cancel.
func (c *Conn) tryAdvice(ctx context.Context, d *Dictionary, starting AdviceStarting) error {
	_, err := c.verifyAdvice(ctx, d, starting)
	if err == nil || ctx.Err() != nil {
		return err
	}
	d.VerifyProblem = err.Error()
	if fe := (*fault.FieldError)(nil); errors.As(err, &fe) {
		d.VerifyProblem = fe.Detail(fault.Plain)
	}
	return err
}

// verifyAdvice builds d's advice on c's server; see VerifyAdvice.
func (c *Conn) verifyAdvice(ctx context.Context, d *Dictionary, starting AdviceStarting) (*Verification, error) {
	v, err := c.newVerification(ctx, 0)
	if err != nil {
		return nil, err
	}
	full := d.Database + "." + d.Name
	refuse := func(why string) error {
		return fault.New("verify", full, why, "a dictionary modelled from a table of this server")
	}
	switch {
	case d.Advice == nil:
		return nil, refuse("there is no advice to build (" + d.NotModelled + ")")
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
	source := "SOURCE(CLICKHOUSE(DB " + dict.QuoteString(src.db) + " TABLE " + dict.QuoteString(src.table)
	if src.where != "" {
		source += " WHERE " + dict.QuoteString(src.where)
	}
	switch {
	case params["PASSWORD"] != "":
		v.Notes = append(v.Notes, "its source's USER and PASSWORD are left out (the server shows the password as [HIDDEN]): the copy reads the table as a source with neither does")
	case params["USER"] != "":
		source += " USER " + dict.QuoteString(params["USER"])
	}
	// An UPDATE_FIELD makes the dictionary keep the rows it loaded beside
	// its tables, as the advice's model counts them: the copy too.
	for _, p := range []string{"UPDATE_FIELD", "UPDATE_LAG"} {
		if v := params[p]; v != "" {
			if _, err := strconv.ParseUint(v, 10, 64); err != nil {
				v = dict.QuoteString(v)
			}
			source += " " + p + " " + v
		}
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
			q := "SELECT count() FROM " + dict.QuoteIdent(src.db) + "." + dict.QuoteIdent(src.table) + " WHERE NOT ignore(" + strings.Join(cols, ", ") + ")"
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
	if ctx.Err() == nil { // a build cut short by a cancel measured nothing to keep
		d.Verification = v
	}
	return v, err
}

// lookup is the dictionary name among ins's rows of node: the one whose
// database.name it is, else the one of that name in the only database
// that has one; n is how many matched (more than 1: several databases
// have that name, and d is nil).
func (ins *Inspection) lookup(node, name string) (d *Dictionary, n int) {
	var byName []*Dictionary
	for i := range ins.Dictionaries {
		e := &ins.Dictionaries[i]
		if e.Node != node {
			continue
		}
		if e.Database+"."+e.Name == name {
			return e, 1
		}
		if e.Name == name {
			byName = append(byName, e)
		}
	}
	if len(byName) == 1 {
		return byName[0], 1
	}
	return nil, len(byName)
}

// dictionaryOn is lookup's dictionary, or an error that says why there is
// none and names the node's dictionaries (node "": every node's, for a
// name no replica has).
func (ins *Inspection) dictionaryOn(node, name string) (*Dictionary, error) {
	d, n := ins.lookup(node, name)
	if n == 1 {
		return d, nil
	}
	var names []string
	for _, e := range ins.Dictionaries {
		if node == "" || e.Node == node {
			names = append(names, e.Database+"."+e.Name)
		}
	}
	sort.Strings(names)
	names = slices.Compact(names)
	allowed := "one of " + strings.Join(names, ", ")
	if len(names) > 12 {
		allowed = fmt.Sprintf("one of %s, ... (%d in all, as the inspection lists them)", strings.Join(names[:12], ", "), len(names))
	}
	if len(names) == 0 {
		allowed = "a dictionary's name; there is none"
	}
	why := "no dictionary of that name on " + node
	if node == "" {
		why = "no dictionary of that name on any replica of " + ins.Cluster
	}
	if n > 1 {
		why = fmt.Sprintf("%d databases have a dictionary of that name", n)
		allowed = "database.name"
	}
	return nil, fault.New("verify", name, why, allowed)
}

// advisedCopy is ddl, a CREATE DICTIONARY, as the dictionary db.dict with
// LAYOUT layout, SOURCE source and LIFETIME(0) (the copy loads once: no
// background reload beside the measurement); false when ddl has no column
// list, LAYOUT or SOURCE.
func advisedCopy(ddl, db, layout, source string) (string, bool) {
	open, _, ok := dict.ColumnList(ddl)
	if !ok {
		return "", false
	}
	type edit struct {
		sp   dict.Span
		with string
	}
	var edits []edit
	for _, e := range []struct{ word, with string }{{"LAYOUT", layout}, {"SOURCE", source}, {"LIFETIME", "LIFETIME(0)"}} {
		sp, found := dict.Clause(ddl, e.word)
		if !found {
			if e.word == "LIFETIME" {
				continue // none: it never reloads by itself either
			}
			return "", false
		}
		edits = append(edits, edit{sp, e.with})
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].sp.Start > edits[j].sp.Start })
	out := ddl
	for _, e := range edits {
		out = out[:e.sp.Start] + e.with + out[e.sp.End:]
	}
	return "CREATE DICTIONARY " + dict.QuoteIdent(db) + ".dict " + out[open:], true
}
