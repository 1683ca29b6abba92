//go:build !js

package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/text"
)

// Options are what an inspection reads beyond the system tables.
type Options struct {
	Cluster  string // inspect every replica of this cluster (clusterAllReplicas)
	NoSample bool   // no query of a dictionary's source for its String lengths
}

// Inspect connects, reads every dictionary of the server (or of every
// replica of opt.Cluster), models each and advises. It reads only.
func Inspect(ctx context.Context, s Settings, opt Options) (*Inspection, error) {
	start := time.Now()
	c, err := Connect(ctx, s)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	ins := &Inspection{Server: c.Endpoint.String(), Release: c.Release, Cluster: opt.Cluster}
	if opt.Cluster != "" {
		if err := c.checkCluster(ctx, opt.Cluster); err != nil {
			return nil, err
		}
	}
	if ins.Nodes, err = c.nodes(ctx, opt.Cluster); err != nil {
		return nil, err
	}
	var missing string
	if opt.Cluster != "" {
		missing = c.missingReplicas(ctx, opt.Cluster, len(ins.Nodes))
	}
	if ins.Dictionaries, err = c.dictionaries(ctx, opt.Cluster); err != nil {
		return nil, err
	}
	ddl, err := c.createQueries(ctx, opt.Cluster)
	if err != nil {
		return nil, err
	}
	limits := map[string]Node{}
	for _, n := range ins.Nodes {
		limits[n.Name] = n
	}
	samples := map[string]nodeSamples{}
	for i := range ins.Dictionaries {
		d := &ins.Dictionaries[i]
		d.readDDL(ddl[d.Node+"\x00"+d.Database+"\x00"+d.Name])
		n := limits[d.Node]
		d.ServerMemoryLimitBytes, d.ServerTrackedBytes = n.MemoryLimitBytes, n.TrackedBytes
		if !opt.NoSample && d.needsSample() {
			// One query per source table and set of columns: dictionaries
			// over the same table share it, and so do a cluster's nodes.
			src, _ := sourceTable(d.DDL, d.Database, d.Node)
			// As the query reads them (names, or EXPRESSIONs), and the
			// names the sample keeps them under: two dictionaries with the
			// same EXPRESSION under two names shared one sample, the
			// second's name not in it ("not modelled").
			var cols []string
			for _, c := range d.stringColumns() {
				cols = append(cols, c, d.columnSQL(c))
			}
			cols = append(cols, "\x01")
			for _, c := range d.nullableColumns() {
				cols = append(cols, c, d.columnSQL(c))
			}
			key := src.db + "\x00" + src.table + "\x00" + src.where + "\x00" + strings.Join(cols, "\x00") + "\x00" + d.word + "\x00" + strings.Join(d.KeyNames, "\x00")
			if src.table == "" {
				key = "\x01" + d.Database + "\x00" + d.Name
			}
			if _, ok := samples[key]; !ok {
				samples[key] = c.sample(ctx, d, opt.Cluster)
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			d.sample = samples[key].of(d.Node)
		}
		v := c.Version
		if nv, ok := dict.ParseRelease(n.Release); ok {
			v = nv // a cluster's nodes may run different releases: each its own
		}
		d.model(v)
	}
	ins.Findings = append(releases(ins.Nodes), disagreements(ins.Dictionaries)...)
	if opt.Cluster != "" && c.ReadOnly {
		ins.Findings = append(ins.Findings, "the user is read-only (readonly = 1) and may not set skip_unavailable_shards: a replica that does not answer fails the inspection, where it would be left out")
	}
	if missing != "" {
		ins.Findings = append([]string{missing}, ins.Findings...)
	}
	ins.Seconds = time.Since(start).Seconds()
	return ins, nil
}

// from is the system table t on the node, or on every replica of cluster.
func from(cluster, t string) string {
	if cluster == "" {
		return t
	}
	return "clusterAllReplicas(" + dict.QuoteString(cluster) + ", " + t + ")"
}

// skipDown ends a query over a cluster's replicas: one that does not answer
// is left out (each replica is a shard to clusterAllReplicas), where it
// failed the whole inspection with "code 279: All connection tries failed"
// (missingReplicas says which were left out). Not for a read-only user,
// whose every query it failed (the inspection then says so).
func (c *Conn) skipDown(cluster string) string {
	if cluster == "" || c.ReadOnly {
		return "" // a read-only user may not set it (READONLY, code 164)
	}
	return " SETTINGS skip_unavailable_shards = 1"
}

// missingReplicas is a finding when fewer of cluster's replicas answered
// than system.clusters lists: how many, and those with connection errors
// (system.clusters.errors_count), by the names it gives them.
func (c *Conn) missingReplicas(ctx context.Context, cluster string, answered int) string {
	var listed uint64
	var failing []string
	err := c.Query(ctx, "SELECT count(), groupArrayIf(host_name || ':' || toString(port), errors_count > 0) FROM system.clusters WHERE cluster = "+dict.QuoteString(cluster), func(r Rows) error {
		return r.Scan(&listed, &failing)
	})
	if err != nil || int(listed) <= answered {
		return ""
	}
	f := fmt.Sprintf("%d of the %d replicas of cluster %s answered; the others are left out of this inspection", answered, listed, cluster)
	if len(failing) > 0 {
		f += " (with connection errors: " + strings.Join(failing, ", ") + ")"
	}
	return f
}

// nodeExpr names the node a row comes from: the host and its native port
// (test clusters on one host share the host name).
const nodeExpr = "hostName() || ':' || toString(tcpPort())"

func (c *Conn) checkCluster(ctx context.Context, cluster string) error {
	n := 0
	err := c.Query(ctx, "SELECT count() FROM system.clusters WHERE cluster = "+dict.QuoteString(cluster), func(r Rows) error {
		var v uint64
		err := r.Scan(&v)
		n = int(v)
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		var names []string
		c.Query(ctx, "SELECT DISTINCT cluster FROM system.clusters ORDER BY cluster LIMIT 20", func(r Rows) error {
			var s string
			err := r.Scan(&s)
			names = append(names, s)
			return err
		})
		allowed := "a cluster of system.clusters on this server"
		if len(names) > 0 {
			allowed = strings.Join(names, ", ")
		}
		return fault.New("cluster", cluster, "no such cluster on "+c.Endpoint.Host, allowed)
	}
	return nil
}

// nodes reads each node's memory limit and what it holds now.
func (c *Conn) nodes(ctx context.Context, cluster string) ([]Node, error) {
	byName := map[string]*Node{}
	var order []string
	get := func(name string) *Node {
		if n, ok := byName[name]; ok {
			return n
		}
		byName[name] = &Node{Name: name}
		order = append(order, name)
		return byName[name]
	}
	// version() and hostName() are evaluated on each replica.
	err := c.Query(ctx, "SELECT "+nodeExpr+", toInt64(value), version() FROM "+from(cluster, "system.metrics")+" WHERE metric = 'MemoryTracking'"+c.skipDown(cluster), func(r Rows) error {
		var name, release string
		var v int64
		if err := r.Scan(&name, &v, &release); err != nil {
			return err
		}
		n := get(name)
		n.TrackedBytes, n.Release = v, release
		return nil
	})
	if err != nil {
		return nil, err
	}
	// system.server_settings is from 23.3 on; system.asynchronous_metrics
	// is not in every build (clickhouse-local has none): each is optional.
	c.Query(ctx, "SELECT "+nodeExpr+", toInt64OrZero(value) FROM "+from(cluster, "system.server_settings")+" WHERE name = 'max_server_memory_usage'"+c.skipDown(cluster), func(r Rows) error {
		var name string
		var v int64
		if err := r.Scan(&name, &v); err != nil {
			return err
		}
		if v > 0 {
			n := get(name)
			n.MemoryLimitBytes, n.MemoryLimitFrom = v, "max_server_memory_usage"
		}
		return nil
	})
	c.Query(ctx, "SELECT "+nodeExpr+", toInt64(value) FROM "+from(cluster, "system.asynchronous_metrics")+" WHERE metric = 'OSMemoryTotal'"+c.skipDown(cluster), func(r Rows) error {
		var name string
		var v int64
		if err := r.Scan(&name, &v); err != nil {
			return err
		}
		if n := get(name); n.MemoryLimitBytes == 0 && v > 0 {
			n.MemoryLimitBytes, n.MemoryLimitFrom = v, "the host's memory (OSMemoryTotal)"
		}
		return nil
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sort.Strings(order)
	out := make([]Node, len(order))
	for i, name := range order {
		out[i] = *byName[name]
	}
	return out, nil
}

// dictionaries reads system.dictionaries in one query (on every replica
// of cluster).
func (c *Conn) dictionaries(ctx context.Context, cluster string) ([]Dictionary, error) {
	var out []Dictionary
	q := "SELECT " + nodeExpr + ", database, name, toString(status), origin, type, `key.names`, `key.types`, `attribute.names`, `attribute.types`," +
		" bytes_allocated, element_count, load_factor, source, lifetime_min, lifetime_max, loading_duration, last_exception FROM " +
		from(cluster, "system.dictionaries") + " ORDER BY 1, database, name" + c.skipDown(cluster)
	err := c.Query(ctx, q, func(r Rows) error {
		var d Dictionary
		var ba, ec, lmin, lmax uint64
		var lf float64
		var dur float32
		if err := r.Scan(&d.Node, &d.Database, &d.Name, &d.Status, &d.Origin, &d.Type, &d.KeyNames, &d.KeyTypes, &d.AttributeNames, &d.AttributeTypes,
			&ba, &ec, &lf, &d.Source, &lmin, &lmax, &dur, &d.LastException); err != nil {
			return err
		}
		d.BytesAllocated, d.ElementCount, d.LoadFactor = int64(ba), int64(ec), lf
		d.LifetimeMin, d.LifetimeMax, d.LoadingSeconds = int64(lmin), int64(lmax), float64(dur)
		out = append(out, d)
		return nil
	})
	return out, err
}

// createQueries reads every DDL dictionary's CREATE DICTIONARY (system.tables
// holds it, with the layout's parameters system.dictionaries drops), keyed
// by node, database and name.
func (c *Conn) createQueries(ctx context.Context, cluster string) (map[string]string, error) {
	out := map[string]string{}
	err := c.Query(ctx, "SELECT "+nodeExpr+", database, name, create_table_query FROM "+from(cluster, "system.tables")+" WHERE engine = 'Dictionary'"+c.skipDown(cluster), func(r Rows) error {
		var node, db, name, q string
		if err := r.Scan(&node, &db, &name, &q); err != nil {
			return err
		}
		out[node+"\x00"+db+"\x00"+name] = q
		return nil
	})
	return out, err
}

// sourceRef is a dictionary's source table on the server it is read
// from, and the WHERE its dictionary loads it with ("" for every row).
type sourceRef struct{ db, table, where string }

// sourceTable finds SOURCE(CLICKHOUSE(... TABLE 't' [DB 'd'] [WHERE 'c']
// ...)) on the server node ("host:native port", as nodeExpr names it; ""
// when not known) in a CREATE DICTIONARY: a source with no HOST, or this
// host's name or a loopback one, and no PORT or this server's.
func sourceTable(ddl, defaultDB, node string) (src sourceRef, problem string) {
	params, ok := clickHouseSource(ddl)
	if !ok {
		return sourceRef{}, "its source is not a ClickHouse table"
	}
	if nc := params["NAME"]; nc != "" {
		// Its host and table are the collection's, which
		// system.named_collections shows as [HIDDEN]: a TABLE beside
		// NAME may be another server's, so nothing is read.
		return sourceRef{}, "its source is the named collection " + nc + ", whose host and table the server does not show"
	}
	host, port := node, ""
	if i := strings.LastIndexByte(node, ':'); i >= 0 {
		host, port = node[:i], node[i+1:]
	}
	if h := params["HOST"]; h != "" && h != "localhost" && h != "127.0.0.1" && h != "::1" && (host == "" || !strings.EqualFold(h, host)) {
		return sourceRef{}, "its source is another server's table"
	}
	if p := params["PORT"]; p != "" && port != "" && p != port {
		// Another server on the same host: its table of that name is
		// not this one's.
		return sourceRef{}, "its source is the server at port " + p + " of its host, not this one (native port " + port + ")"
	}
	if params["QUERY"] != "" || params["TABLE"] == "" {
		return sourceRef{}, "its source is a query, not a table"
	}
	return sourceRef{db: cmp.Or(params["DB"], defaultDB), table: params["TABLE"], where: params["WHERE"]}, ""
}

// clickHouseSource is the parameters of SOURCE(CLICKHOUSE(...)) in a
// CREATE DICTIONARY, by their upper-case names; false for another source.
func clickHouseSource(ddl string) (map[string]string, bool) {
	name, params, ok := sourceParams(ddl)
	return params, ok && name == "CLICKHOUSE"
}

// sourceParams is the source's name (CLICKHOUSE, MYSQL, ...) and its
// parameters by their upper-case names, in a CREATE DICTIONARY's
// SOURCE(NAME(...)).
func sourceParams(ddl string) (string, map[string]string, bool) {
	_, name, words, ok := dict.ClauseCall(ddl, "SOURCE")
	if !ok {
		return "", nil, false
	}
	params := map[string]string{}
	for i := 0; i+1 < len(words); i += 2 {
		params[strings.ToUpper(words[i])] = words[i+1]
	}
	return name, params, true
}

// nodeSamples are a source's samples by node ("" for the one node of an
// inspection without a cluster).
type nodeSamples map[string]*sample

// of is node's sample.
func (ns nodeSamples) of(node string) *sample {
	if s, ok := ns[""]; ok {
		return s
	}
	if s, ok := ns[node]; ok {
		return s
	}
	return &sample{Problem: "its source table on " + node + " gave no rows"}
}

// sample reads, in one aggregate over the whole source table, the mean
// length and NULL share of every String key part and attribute, the NULL
// share of every other Nullable attribute, and FLAT's largest key. Not a
// sample of its first rows: a table sorted by what it holds gave a prefix
// unlike the whole (a String growing along 2e5 rows, its first 100,000
// read: the model 12.5 % under bytes_allocated, TestInspectTargets'
// d_growing). The cost is at most what a reload of the dictionary reads
// (its columns); ClickHouse reads a String's lengths from its offsets
// alone (8 bytes a row: 2e6 rows, 16 MB read). On a cluster each replica's
// own table is read (clusterAllReplicas, grouped by node): the shards of a
// sharded table hold other rows, and each node's dictionary loads its
// own (a node with Strings 4 times longer than the connected one's was
// modelled with the connected one's lengths, TestClusterReplicasDisagree).
func (c *Conn) sample(ctx context.Context, d *Dictionary, cluster string) nodeSamples {
	src, problem := sourceTable(d.DDL, d.Database, d.Node)
	if problem != "" {
		return nodeSamples{"": {Problem: problem}}
	}
	cols := d.stringColumns()
	nullable := d.nullableColumns()
	flat := d.word == "FLAT"
	// query reads the String columns' lengths as they are, or, asText, as
	// the load casts them to String: an attribute String over a number, a
	// Date, a UUID or an Enum, which length() refuses ("Illegal type
	// UInt16 of argument of function length": the dictionary was "not
	// modelled"). A String column's lengths come from its offsets alone,
	// toString() would read its bytes: asText only where that failed.
	query := func(asText bool) string {
		var exprs []string
		for _, col := range cols {
			q := d.columnSQL(col)
			if asText {
				q = "toString(" + q + ")"
			}
			exprs = append(exprs, dict.MeanLengthSQL(q), dict.NullsSQL(q))
		}
		for _, col := range nullable {
			exprs = append(exprs, dict.NullsSQL(d.columnSQL(col)))
		}
		if flat {
			exprs = append(exprs, "toInt64(max(toUInt64("+d.columnSQL(d.KeyNames[0])+")))")
		}
		node := "''"
		if cluster != "" {
			node = nodeExpr
		}
		q := "SELECT " + strings.Join(append([]string{node, "count()"}, exprs...), ", ") + " FROM " + from(cluster, dict.QuoteIdent(src.db)+"."+dict.QuoteIdent(src.table))
		if src.where != "" {
			// The rows the dictionary loads: its WHERE, the server's own
			// expression (a dictionary over half a table took the other
			// half's lengths).
			q += " WHERE (" + src.where + ")"
		}
		if cluster != "" {
			q += " GROUP BY 1" + c.skipDown(cluster)
		}
		return q
	}
	out := nodeSamples{}
	scan := func(r Rows) error {
		var name string
		var n uint64
		dest := []any{&name, &n}
		means := make([]float64, len(cols))
		nulls := make([]uint64, len(cols))
		for i := range cols {
			dest = append(dest, &means[i], &nulls[i])
		}
		fixedNulls := make([]uint64, len(nullable))
		for i := range nullable {
			dest = append(dest, &fixedNulls[i])
		}
		var maxKey int64
		if flat {
			dest = append(dest, &maxKey)
		}
		if err := r.Scan(dest...); err != nil {
			return err
		}
		s := &sample{Rows: int64(n), MaxKey: maxKey, MeanLen: map[string]float64{}, Nulls: map[string]float64{}}
		if n == 0 {
			// Emptied since the dictionary loaded: its Strings were
			// modelled at a length of 0 and FLAT's largest key at 0
			// (2,336 bytes where bytes_allocated said 65,696).
			s.Problem = "its source table gives no rows now: it changed since the dictionary loaded"
		}
		for i, col := range cols {
			s.MeanLen[col] = means[i]
			if n > 0 {
				s.Nulls[col] = float64(nulls[i]) / float64(n)
			}
		}
		for i, col := range nullable {
			if n > 0 {
				s.Nulls[col] = float64(fixedNulls[i]) / float64(n)
			}
		}
		out[name] = s
		return nil
	}
	err := c.Query(ctx, query(false), scan)
	// Again as text where ClickHouse refused it, not after a timeout (a
	// source slower than the query timeout would take two).
	if ce := (*Error)(nil); errors.As(err, &ce) && ce.Kind == Refused && len(cols) > 0 && ctx.Err() == nil {
		out = nodeSamples{}
		if c.Query(ctx, query(true), scan) == nil {
			err = nil
		}
	}
	if err != nil && cluster != "" {
		// A replica without the table fails the whole read: the connected
		// node's table then stands for every node's, and the note says so.
		one := c.sample(ctx, d, "")
		if s := one[""]; s.Problem == "" {
			s.From = "the connected node's table (the replicas' own could not be read: " + text.Short(text.OneLine(err.Error()), 200) + ")"
		}
		return one
	}
	if err != nil {
		return nodeSamples{"": {Problem: "its source could not be read: " + err.Error()}}
	}
	return out
}

// columnSQL is the source column col as the dictionary's query reads it:
// its EXPRESSION where it has one (the table has no such column: a String
// computed by one was "not modelled", its source's query refused).
func (d *Dictionary) columnSQL(col string) string {
	if e, ok := d.exprs[col]; ok {
		return "(" + e + ")"
	}
	return dict.QuoteIdent(col)
}

// disagreements compares each dictionary across the nodes that hold it:
// its rows, its layout, whether it loaded. It writes a finding on each
// node's row and returns them for the inspection.
// releases is a finding when the nodes run different releases: each
// node's dictionaries are then modelled and advised for its own.
func releases(nodes []Node) []string {
	var per []string
	differ := false
	for _, n := range nodes {
		per = append(per, n.Name+" "+cmp.Or(n.Release, "?"))
		differ = differ || n.Release != nodes[0].Release
	}
	if !differ {
		return nil
	}
	return []string{"the nodes run different releases: " + strings.Join(per, ", ") + "; each node's dictionaries are modelled and advised for its own"}
}

func disagreements(ds []Dictionary) []string {
	groups := map[string][]int{}
	var order []string
	for i, d := range ds {
		k := d.Database + "\x00" + d.Name
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var out []string
	for _, k := range order {
		idx := groups[k]
		if len(idx) < 2 {
			continue
		}
		var diffs []string
		first := ds[idx[0]]
		for _, what := range []struct {
			name string
			get  func(Dictionary) string
		}{
			{"rows", func(d Dictionary) string { return strconv.FormatInt(d.ElementCount, 10) }},
			{"layout", func(d Dictionary) string { return d.Layout }},
			{"status", func(d Dictionary) string { return d.Status }},
			{"structure", func(d Dictionary) string {
				return strings.Join(d.KeyTypes, ",") + "|" + strings.Join(d.AttributeTypes, ",")
			}},
		} {
			same := true
			for _, i := range idx[1:] {
				same = same && what.get(ds[i]) == what.get(first)
			}
			if same {
				continue
			}
			var per []string
			for _, i := range idx {
				v := what.get(ds[i])
				if what.name == "rows" {
					n, _ := strconv.ParseInt(v, 10, 64)
					v = text.Thousands(n)
				}
				per = append(per, ds[i].Node+" "+v)
			}
			diffs = append(diffs, what.name+": "+strings.Join(per, ", "))
		}
		if len(diffs) == 0 {
			continue
		}
		f := fmt.Sprintf("replicas disagree on %s: %s", first.Database+"."+first.Name, strings.Join(diffs, "; "))
		out = append(out, f)
		for _, i := range idx {
			ds[i].Findings = append(ds[i].Findings, f)
		}
	}
	return out
}
