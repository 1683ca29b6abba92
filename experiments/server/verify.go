//go:build !js

package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/text"
)

// A plan's ClickHouse answer, built on the user's own server (packlab plan
// --verify with a server): a database of its own, packlab_verify_<random>,
// holding a generated table of the planned shape and the planned
// dictionary over it; the dictionary loaded, then reloaded while the
// server's MemoryTracking is sampled; everything dropped at the end, also
// on an error or a cancel. It refuses before creating anything when the
// server's free memory under its limit cannot hold the reload's peak with
// a margin, and it never touches an object it did not make.

// VerifyDatabasePrefix starts the name of the database a verification
// makes.
const VerifyDatabasePrefix = "packlab_verify_"

// verifyMargin: the reload's peak must fit in the server's free memory
// with this much to spare.
const verifyMargin = 1.25

// VerifyRequest is the dictionary to build: the plan's ClickHouse answer.
type VerifyRequest struct {
	Layout        string           // ClickHouse's word: HASHED, SPARSE_HASHED, HASHED_ARRAY, COMPLEX_KEY_HASHED
	KeyType       string           // a COMPLEX_KEY_ layout's key column type (UUID; String over a table); "" is UInt64, a simple key's
	KeyMeanLen    float64          // a String key's mean length in bytes
	Shards        int              // SHARDS
	MaxLoadFactor float64          // MAX_LOAD_FACTOR (0: ClickHouse's default)
	Attributes    []dict.Attribute // the value first; a String's lengths as generated, or as From's columns hold them
	Rows          int64            // distinct random UInt64 keys, or From's distinct keys
	// From is the user's table the dictionary reads (plan --from), in
	// place of a table of Rows generated rows; nil: generated.
	From *VerifyFrom
}

// VerifyFrom is a table on the server a verification's dictionary reads:
// its key column and the columns of Attributes, in their order.
type VerifyFrom struct {
	Database, Table, KeyColumn string
	Columns                    []string
	MaxKey                     int64 // the table's largest id, for FLAT (0: not ids)
}

// connect checks req, then connects to the server of s.
func (req VerifyRequest) connect(ctx context.Context, s Settings) (dict.ClickHouseDictionary, *Conn, error) {
	cd, err := req.check()
	if err != nil {
		return cd, nil, err
	}
	c, err := Connect(ctx, s)
	return cd, c, err
}

// Verify builds req on the server of s and measures it; see above.
func Verify(ctx context.Context, s Settings, req VerifyRequest) (*Verification, error) {
	cd, c, err := req.connect(ctx, s)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	p, err := prepare(ctx, c, cd, req)
	if err != nil {
		return nil, err
	}
	return p.build(ctx)
}

// VerifyCluster verifies on every replica of cluster, one after another,
// each node reached on its native port as system.clusters lists it (with
// s's user, database, password and TLS): DDL per node, as a cluster
// without Keeper needs. Every node's free memory is checked before
// anything is made on any.
func VerifyCluster(ctx context.Context, s Settings, cluster string, req VerifyRequest) ([]*Verification, error) {
	cd, c, err := req.connect(ctx, s)
	if err != nil {
		return nil, err
	}
	if err := c.checkCluster(ctx, cluster); err != nil {
		c.Close()
		return nil, err
	}
	targets, err := c.replicaSettings(ctx, cluster, s)
	c.Close()
	if err != nil {
		return nil, err
	}
	var preps []*prepared
	defer func() {
		for _, p := range preps {
			p.c.Close()
		}
	}()
	for _, ns := range targets {
		nc, err := Connect(ctx, ns)
		if err != nil {
			return nil, err
		}
		p, err := prepare(ctx, nc, cd, req)
		if err != nil {
			nc.Close()
			return nil, err
		}
		preps = append(preps, p)
	}
	var out []*Verification
	for _, p := range preps {
		v, err := p.build(ctx)
		if v != nil {
			out = append(out, v)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// replicaSettings are s for each of cluster's replicas: its native
// address as system.clusters lists it, with the user, database and TLS c
// connected with (and s's password and timeouts).
func (c *Conn) replicaSettings(ctx context.Context, cluster string, s Settings) ([]Settings, error) {
	var out []Settings
	e := c.Endpoint
	err := c.Query(ctx, "SELECT host_address, port FROM system.clusters WHERE cluster = "+dict.QuoteString(cluster)+" ORDER BY shard_num, replica_num", func(r Rows) error {
		var host string
		var port uint16
		if err := r.Scan(&host, &port); err != nil {
			return err
		}
		ns := s
		ns.URL, ns.User, ns.Database, ns.Secure = "clickhouse://"+net.JoinHostPort(host, strconv.Itoa(int(port))), e.User, e.Database, e.TLS
		out = append(out, ns)
		return nil
	})
	return out, err
}

func (req VerifyRequest) check() (dict.ClickHouseDictionary, error) {
	cd, ok := modelledLayout(req.Layout)
	flatFrom := cd.Flat() && req.From != nil && req.From.MaxKey > 0 // FLAT over a table of ids from 0
	if !ok || cd.Flat() && !flatFrom {
		return cd, fault.New("layouts", req.Layout, "not a layout a verification builds", "HASHED, SPARSE_HASHED, HASHED_ARRAY, their COMPLEX_KEY_ forms, and FLAT over a table of ids")
	}
	_, err := dict.FixedType(cmp.Or(req.KeyType, "UInt64"))
	if err != nil && !(req.KeyType == "String" && req.From != nil) || req.KeyType != "" && !cd.ComplexKey {
		return cd, fault.New("key", req.KeyType, "not a key "+req.Layout+"'s verification builds", "UInt64, or in a COMPLEX_KEY_ layout a fixed-size type, or a table's String")
	}
	if req.Rows < 1 || len(req.Attributes) == 0 {
		return cd, fault.New("rows", strconv.FormatInt(req.Rows, 10), "nothing to build", "at least a row and an attribute")
	}
	if f := req.From; f != nil && (f.KeyColumn == "" || len(f.Columns) != len(req.Attributes)) {
		return cd, fault.New("from", f.Database+"."+f.Table, fmt.Sprintf("key column %q and %d columns for %d attributes", f.KeyColumn, len(f.Columns), len(req.Attributes)), "the key column and a column an attribute")
	}
	return cd, nil
}

// prepared is a verification modelled and checked against one server's
// free memory, nothing made yet: objects are, for the database named
// name, the statements that build its source (if any) and, last, the
// dictionary name.dict; warm is a query that reads the dictionary's rows of
// its source once.
type prepared struct {
	c       *Conn
	v       *Verification
	objects func(name string) []string
	warm    func(name string) string
}

// prepare models req as inspect would model it and refuses when the
// server's free memory under its limit cannot hold the reload's peak with
// a margin.
func prepare(ctx context.Context, c *Conn, cd dict.ClickHouseDictionary, req VerifyRequest) (*prepared, error) {
	v, err := c.newVerification(ctx, req.Rows)
	if err != nil {
		return nil, err
	}
	d := &Dictionary{ElementCount: req.Rows, sample: &sample{MeanLen: map[string]float64{}, Nulls: map[string]float64{}}}
	key := "key"
	if req.From != nil {
		key = req.From.KeyColumn
		d.sample.MaxKey = req.From.MaxKey // FLAT's arrays: the ids' range
	}
	keyType := cmp.Or(req.KeyType, "UInt64")
	if cd.ComplexKey {
		d.KeyNames, d.KeyTypes = []string{key}, []string{keyType}
		d.sample.MeanLen[key] = req.KeyMeanLen // a String's
	}
	cols := []string{dict.QuoteIdent(key) + " " + keyType}
	for i, a := range req.Attributes {
		name := dict.AttributeName(i)
		if req.From != nil {
			name = req.From.Columns[i]
		}
		cols = append(cols, dict.QuoteIdent(name)+" "+a.ColumnType())
		d.AttributeNames = append(d.AttributeNames, name)
		d.AttributeTypes = append(d.AttributeTypes, a.ColumnType())
		d.sample.MeanLen[name] = a.MeanLen()
		d.sample.Nulls[name] = float64(a.NullRows(req.Rows)) / float64(req.Rows)
	}
	attrs, problem := d.attributes()
	if problem != "" {
		return nil, fault.New("attributes", strings.Join(d.AttributeTypes, ","), problem, "fixed-size types, String, Nullable(T)")
	}
	f, problem := d.modelAs(cd, attrs, max(req.Shards, 1), req.MaxLoadFactor)
	if problem != "" {
		return nil, fmt.Errorf("the model: %s", problem)
	}
	v.ModelBytes, v.RealBytes, v.ModelReloadPeakBytes, v.Layout = f.model, f.real, f.reloadPeak, f.clause
	if err := v.checkFree(c.Endpoint.Host); err != nil {
		return nil, err
	}
	if fr := req.From; fr != nil {
		// The user's table, read as the plan's CREATE DICTIONARY reads it.
		src := dict.QuoteIdent(fr.Database) + "." + dict.QuoteIdent(fr.Table)
		objects := func(name string) []string {
			return []string{"CREATE DICTIONARY " + dict.QuoteIdent(name) + ".dict (" + strings.Join(cols, ", ") + ") PRIMARY KEY " + dict.QuoteIdent(key) +
				" SOURCE(CLICKHOUSE(DB " + dict.QuoteString(fr.Database) + " TABLE " + dict.QuoteString(fr.Table) + ")) LIFETIME(0) " + f.clause}
		}
		warm := func(string) string {
			return "SELECT count() FROM " + src + " WHERE NOT ignore(" + strings.Join(colNames(key, req.From.Columns), ", ") + ")"
		}
		return &prepared{c: c, v: v, objects: objects, warm: warm}, nil
	}
	objects := func(name string) []string {
		db := dict.QuoteIdent(name)
		return []string{
			"CREATE TABLE " + db + ".src (" + strings.Join(cols, ", ") + ") ENGINE = MergeTree ORDER BY tuple()",
			"INSERT INTO " + db + ".src " + dict.GeneratedRowsSQL(keyType, req.Attributes, req.Rows),
			"CREATE DICTIONARY " + db + ".dict (" + strings.Join(cols, ", ") + ") PRIMARY KEY key SOURCE(CLICKHOUSE(DB " + dict.QuoteString(name) +
				" TABLE 'src')) LIFETIME(0) " + f.clause,
		}
	}
	warm := func(name string) string {
		return "SELECT count() FROM " + dict.QuoteIdent(name) + ".src WHERE NOT ignore(*)"
	}
	return &prepared{c: c, v: v, objects: objects, warm: warm}, nil
}

// colNames is key and columns quoted, for a query.
func colNames(key string, columns []string) []string {
	out := []string{dict.QuoteIdent(key)}
	for _, c := range columns {
		out = append(out, dict.QuoteIdent(c))
	}
	return out
}

// newVerification is a verification on the server c is connected to, of
// rows rows: the server, its release, and the node's memory limit and what
// it holds now.
func (c *Conn) newVerification(ctx context.Context, rows int64) (*Verification, error) {
	if c.ReadOnly {
		return nil, &fault.InputError{Err: fmt.Errorf("ClickHouse at %s: the user %s is read-only (readonly = 1), and a verification makes a database of its own and a dictionary in it: nothing was made (allowed: a user who may create and drop a database)",
			c.Endpoint.Host, cmp.Or(c.Endpoint.User, "default"))}
	}
	nodes, err := c.nodes(ctx, "")
	if err != nil {
		return nil, err
	}
	v := &Verification{Server: c.Endpoint.String(), Release: c.Release, Rows: rows}
	if len(nodes) > 0 {
		v.Node, v.ServerMemoryLimitBytes, v.ServerTrackedBytes = nodes[0].Name, nodes[0].MemoryLimitBytes, nodes[0].TrackedBytes
	}
	return v, nil
}

// checkFree refuses a verification whose modelled reload peak, with
// verifyMargin to spare, is more than the server's free memory under its
// limit (nothing is checked where the limit is unknown).
func (v *Verification) checkFree(host string) error {
	lim := v.ServerMemoryLimitBytes
	if lim <= 0 {
		return nil
	}
	free := lim - v.ServerTrackedBytes
	if need := int64(float64(v.ModelReloadPeakBytes) * verifyMargin); need > free {
		return &fault.InputError{Err: fmt.Errorf("ClickHouse at %s: the verification's reload peaks at about %s (%s with a quarter to spare), and the server has %s free under its limit of %s (it holds %s): nothing was made",
			host, text.Bytes(v.ModelReloadPeakBytes), text.Bytes(need), text.Bytes(max(free, 0)), text.Bytes(lim), text.Bytes(v.ServerTrackedBytes))}
	}
	return nil
}

// verifySamplers is how many queries sample MemoryTracking at once during
// the reload: the connection's pool holds them beside the reload's own
// (Connect's MaxOpenConns, 4).
const verifySamplers = 3

// verifyReloads is the most reloads verify samples, and verifyMinSamples
// the samples after which it stops.
const verifyReloads, verifyMinSamples = 4, 40

// build makes the database, the table and the dictionary, measures, and
// drops the database, also on an error or a cancel.
func (p *prepared) build(ctx context.Context) (v *Verification, err error) {
	c, v := p.c, p.v
	var rnd [6]byte
	rand.Read(rnd[:])
	v.Database = VerifyDatabasePrefix + hex.EncodeToString(rnd[:])
	db := dict.QuoteIdent(v.Database)
	defer func() { // also on an error or a cancel: a context of its own
		cctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		// A statement the cancel cut short on this side may still be
		// finishing on the server ("New table appeared in database being
		// dropped"): try again, a few times.
		var derr error
		for try := 0; try < 20; try++ {
			if derr = c.Exec(cctx, "DROP DATABASE IF EXISTS "+db+" SYNC"); derr == nil || cctx.Err() != nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if derr != nil {
			err = fmt.Errorf("%v; and dropping %s failed, drop it by hand: %v", errOr(err), v.Database, derr)
			return
		}
		v.Dropped = true
	}()
	// The drop above is set first: a cancel may cut this statement short
	// on this side after the server made the database (its name is new,
	// random: nothing else has it).
	if err := c.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		return v, err
	}
	steps := p.objects(v.Database)
	v.DDL = steps[len(steps)-1]
	steps = append(steps, "SYSTEM JEMALLOC PURGE")
	for _, q := range steps {
		if err := c.Exec(ctx, q); err != nil && !strings.Contains(q, "JEMALLOC") {
			return v, err
		}
	}
	// The source read once before the base is taken: its first read fills
	// caches that stay (6.8 MB at 1e6 rows, TestInspectMemory), which a
	// serving server already holds and no reload adds; in the base they
	// would be 12 % of a reload's peak at 1e6 rows (CI saw 0.88x).
	var n uint64
	if err := c.Query(ctx, p.warm(v.Database), func(r Rows) error { return r.Scan(&n) }); err != nil {
		return v, err
	}
	tracked := func(ctx context.Context) (int64, error) {
		var t int64
		err := c.Query(ctx, "SELECT toInt64(value) FROM system.metrics WHERE metric = 'MemoryTracking'", func(r Rows) error { return r.Scan(&t) })
		return t, err
	}
	before, err := tracked(ctx)
	if err != nil {
		return v, err
	}
	dictName := db + ".dict"
	if err := c.Exec(ctx, "SYSTEM RELOAD DICTIONARY "+dictName); err != nil {
		return v, err
	}
	after, err := tracked(ctx)
	if err != nil {
		return v, err
	}
	v.TrackedGrowthBytes = after - before
	// The first load's time, before the samplers below share the server's
	// cores with the reload (on 2 cores they made a reload of 2e6 rows
	// take 5.35 s where the first load took 1.64).
	if err := c.Query(ctx, "SELECT loading_duration FROM system.dictionaries WHERE database = "+dict.QuoteString(v.Database)+" AND name = 'dict'", func(r Rows) error {
		var dur float32
		err := r.Scan(&dur)
		v.LoadSeconds = float64(dur)
		return err
	}); err != nil {
		return v, err
	}
	// The reload, MemoryTracking sampled beside it by verifySamplers
	// queries at once (the connection's pool holds them and the reload):
	// a growth's old buffer is in the tracker only for the moment of a
	// realloc, which one sampler misses now and then (experiments/dict/reload).
	// A short reload gives few samples (5 of a 1e5-row one once caught
	// 7.1 MiB of a 16.1 MiB peak), so it is reloaded again, up to
	// verifyReloads times, until the samples reach verifyMinSamples; the
	// peak is the highest seen.
	peak, samples := after, 0
	for range verifyReloads {
		var mu sync.Mutex
		var wg sync.WaitGroup
		sctx, stop := context.WithCancel(ctx)
		for range verifySamplers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for sctx.Err() == nil {
					// Under ctx, not sctx: a sample is never cut short (a
					// cancelled native query is a Cancel packet the server
					// must handle; the loop stops between samples).
					if t, err := tracked(ctx); err == nil {
						mu.Lock()
						peak = max(peak, t)
						samples++
						mu.Unlock()
					}
				}
			}()
		}
		rerr := c.Exec(ctx, "SYSTEM RELOAD DICTIONARY "+dictName)
		stop()
		wg.Wait()
		if rerr != nil {
			return v, rerr
		}
		if samples >= verifyMinSamples {
			break
		}
	}
	v.ReloadPeakBytes, v.Samples = peak-before, samples
	err = c.Query(ctx, "SELECT bytes_allocated, element_count FROM system.dictionaries WHERE database = "+dict.QuoteString(v.Database)+" AND name = 'dict'", func(r Rows) error {
		var ba, ec uint64
		if err := r.Scan(&ba, &ec); err != nil {
			return err
		}
		v.BytesAllocated, v.ElementCount = int64(ba), int64(ec)
		return nil
	})
	return v, err
}

func errOr(err error) string {
	if err == nil {
		return "the verification ended"
	}
	return err.Error()
}
