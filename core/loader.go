package core

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The parallel loader, after ClickHouse's HashedDictionaryParallelLoader:
//
//	          source                 per-shard queues (Backlog blocks)   workers
//	producer: Next -> block --split--> [sub][sub][ ]  shard 0 ----------> table 0
//	                  by ShardOf       [sub][ ][ ]    shard 1 ----------> table 1
//	                                   ...                                ...
//	          <---------- used sub-blocks come back through a free list ---
//
// One producer goroutine reads the source in blocks of BlockRows rows and
// deals each row into the sub-block of its shard; a sub-block holds
// ceil(BlockRows/Shards) rows and is sent when full (and at the end), so a
// uniform source sends about one sub-block per shard per source block, as
// ClickHouse's scatter does, while a skewed one sends full sub-blocks to its
// hot shard instead of one huge one. With one shard the block read is sent
// as is. One worker goroutine per shard is the only writer of its table, so
// the tables take no locks. Sub-blocks are recycled through a per-shard free
// list: in the steady state a load allocates nothing but table growth.
//
// Every row is counted twice, independently: the producer sums rows and
// rowCheck per shard over what it sent, each worker over what it received.
// Load fails unless they agree, unless every table's Len equals the rows its
// worker inserted, and unless Rows == Elements + Duplicates. Each worker also
// sums PairChecksum over the pairs it inserted: the load's Checksum, which
// Verify recomputes from the tables.

// Defaults and limits of LoadConfig.
const (
	DefaultBlockRows = 65536 // ClickHouse's max_block_size
	MaxBlockRows     = 1 << 24
	// DefaultBacklog is the per-shard queue capacity, in blocks. Chosen
	// with BenchmarkBacklog (packed <UInt64,UInt16>, random keys, backlogs
	// interleaved in each round, 2-core lab machine, medians): at 3e6 rows
	// over 6 runs, Shards=8 loaded 9.3, 9.2, 10.1, 10.5, 11.5 and 12.3
	// Mrows/s with backlogs 1, 2, 4, 8, 16 and 64, Shards=2 6.3, 6.7, 6.1,
	// 6.6, 6.9 and 7.3; at 1e7 rows every backlog was within the noise
	// (+-8 %). A deeper queue lets the producer run ahead while workers
	// share the cores, so they switch less. 16 takes most of the gain for
	// (16+2) * BlockRows rows of buffers, 12 MB for <UInt64,UInt16>,
	// against 43 MB at 64. ClickHouse's default is 10,000.
	DefaultBacklog       = 16
	MaxBacklog           = 100_000
	DefaultProgressEvery = 100 * time.Millisecond
	MinProgressEvery     = time.Millisecond
)

// insertChunk is how many rows a worker inserts between two looks at the
// stop signal, and between two progress counter updates.
const insertChunk = 1024

// stopGrace bounds how long Load, once stopping, waits for the workers after
// the producer has returned. A worker stops within insertChunk rows, unless
// it is inside one Insert that grows a large table, which cannot be
// interrupted: moving 2^25 packed cells into 2^26 took 2.4 s on the 2-core
// lab machine (TestLoadCancelDeep). Load then returns without it, and the
// worker exits as soon as that Insert returns, touching nothing else, and
// the last goroutine out closes the failed load's tables (discard).
const stopGrace = 25 * time.Millisecond

// LoadConfig describes a load. The zero value of every field but Layout
// means its default.
type LoadConfig struct {
	Layout  Layout
	Options Options
	// Shards is the number of tables and workers, in [1, 128]; 0 means 1.
	Shards int
	// BlockRows is how many rows the producer asks the source for at a
	// time; 0 means 65,536.
	BlockRows int
	// Backlog is each shard's queue capacity, in blocks; 0 means
	// DefaultBacklog (chosen by measurement, see there).
	Backlog int
	// ShardSelect is how the producer turns a row's shard hash into its
	// shard; every choice gives ShardOf's answer, only the arithmetic
	// differs. "" means ShardSelectAuto.
	ShardSelect ShardSelect
	// Progress, if set, is called at least every ProgressEvery during the
	// load and once at the end, always from the goroutine that called Load.
	Progress func(LoadProgress)
	// ProgressEvery is the progress period; 0 means 100 ms.
	ProgressEvery time.Duration
}

// ShardSelect names the arithmetic that picks a row's shard.
type ShardSelect string

const (
	// ShardSelectAuto masks when the shard count is a power of two and
	// divides otherwise (x % 2^n == x & (2^n-1)): the default.
	ShardSelectAuto ShardSelect = "auto"
	// ShardSelectModulo always divides, as ClickHouse's loader does
	// (intHashCRC32(key) % shards).
	ShardSelectModulo ShardSelect = "modulo"
	// ShardSelectMask always masks; the shard count must be a power of two.
	ShardSelectMask ShardSelect = "mask"
)

// ShardSelects lists the choices of LoadConfig.ShardSelect.
func ShardSelects() []ShardSelect {
	return []ShardSelect{ShardSelectAuto, ShardSelectModulo, ShardSelectMask}
}

// LoadProgress is a snapshot of a running load.
type LoadProgress struct {
	Rows       int64   // rows the workers have inserted (or counted as duplicates) so far
	ShardRows  []int64 // the same, per shard
	SourceRows int64   // src.Rows(): total expected, or -1 when unknown
	Elapsed    time.Duration
}

// WorkerReport is one worker's share of a load.
type WorkerReport struct {
	Shard         int
	Rows          int64   // rows received
	Elements      int64   // rows inserted: keys new to the table
	Duplicates    int64   // rows whose key was already present (the first value was kept)
	BusySeconds   float64 // inserting
	WaitSeconds   float64 // blocked on an empty queue
	RowsPerSecond float64 // Rows / BusySeconds
}

// ProducerReport is where the producer's time went.
type ProducerReport struct {
	ReadSeconds  float64 // inside src.Next
	SplitSeconds float64 // dealing rows into sub-blocks and checksumming them
	WaitSeconds  float64 // blocked on a full queue
}

// LoadReport is the outcome of a complete load.
type LoadReport struct {
	Rows       int64   // rows read from the source (== Elements + Duplicates)
	Elements   int64   // distinct keys stored
	Duplicates int64   // rows whose key was already stored
	Skipped    int64   // bad rows the source skipped (src.Skipped())
	Seconds    float64 // wall time of the load
	Workers    []WorkerReport
	Producer   ProducerReport
	Checksum   uint64 // sum of PairChecksum over the pairs the tables kept
}

// loadHook, when set (by tests only), is called by each worker with its
// shard and the block's rows before it inserts a block, and by the producer
// with shard -1 after it reads a source block. Load reads it once, at start.
var loadHook func(shard, rows int)

func (c LoadConfig) normalize() (LoadConfig, error) {
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.Shards < MinShards || c.Shards > MaxShards {
		return c, fmt.Errorf("shards %d is out of range (allowed: %d to %d)", c.Shards, MinShards, MaxShards)
	}
	if c.BlockRows == 0 {
		c.BlockRows = DefaultBlockRows
	}
	if c.BlockRows < 1 || c.BlockRows > MaxBlockRows {
		return c, fmt.Errorf("block_rows %d is out of range (allowed: 1 to %d)", c.BlockRows, MaxBlockRows)
	}
	if c.Backlog == 0 {
		c.Backlog = DefaultBacklog
	}
	if c.Backlog < 1 || c.Backlog > MaxBacklog {
		return c, fmt.Errorf("backlog %d is out of range (allowed: 1 to %d blocks)", c.Backlog, MaxBacklog)
	}
	switch c.ShardSelect {
	case "":
		c.ShardSelect = ShardSelectAuto
	case ShardSelectAuto, ShardSelectModulo:
	case ShardSelectMask:
		if c.Shards&(c.Shards-1) != 0 {
			return c, fmt.Errorf("shard_select mask needs a power-of-two shard count, not %d (allowed: 1, 2, 4, ... 128; or modulo)", c.Shards)
		}
	default:
		return c, fmt.Errorf("shard_select %q is unknown (allowed: auto, modulo, mask)", c.ShardSelect)
	}
	if c.ProgressEvery == 0 {
		c.ProgressEvery = DefaultProgressEvery
	}
	if c.ProgressEvery < MinProgressEvery {
		return c, fmt.Errorf("progress_every %v is out of range (allowed: at least %v)", c.ProgressEvery, MinProgressEvery)
	}
	if err := c.Options.Validate(); err != nil {
		return c, err
	}
	if _, err := ParseLayout(string(c.Layout)); err != nil {
		return c, err
	}
	return c, nil
}

// Load reads src to its end into a new sharded map, with one producer and
// one worker per shard (see the top of loader.go). It does not close src.
//
// On any error, a panic in the producer, a worker or the source, or the
// cancellation of ctx, Load stops every goroutine and returns a nil map and
// the error; it never returns a partial load as complete. Cancellation
// returns promptly: the producer stops between blocks and the workers
// every 1024 rows; a worker caught inside an Insert that grows a
// large table is not waited for beyond stopGrace, and exits once that
// Insert returns. The source is never in use after Load returns. A failed
// load's tables are closed (their memory released) as soon as no worker
// can touch them; a slab that cannot be had fails the load with the
// *SlabError that names the layout and the size.
//
// The map returned is the caller's: Close it to release its memory at once.
func Load[K, V Bits](ctx context.Context, src Source[K, V], cfg LoadConfig) (*Sharded[K, V], LoadReport, error) {
	cfg, err := cfg.normalize()
	if err != nil {
		return nil, LoadReport{}, err
	}
	if src == nil {
		return nil, LoadReport{}, errors.New("load: no source")
	}
	if err := ctx.Err(); err != nil {
		return nil, LoadReport{}, fmt.Errorf("load cancelled before it started: %w", err)
	}
	m, err := NewSharded[K, V](cfg.Layout, cfg.Options, cfg.Shards)
	if err != nil {
		return nil, LoadReport{}, err
	}
	lctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	l := newLoader(m, src, cfg, lctx, cancel)
	start := time.Now()
	go l.produce()
	for s := range l.workers {
		go l.work(s)
	}

	var tick <-chan time.Time
	if cfg.Progress != nil {
		t := time.NewTicker(cfg.ProgressEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-l.allDone:
		case <-tick:
			cfg.Progress(l.progress(start))
			continue
		case <-l.stop:
			// The producer returns within one src.Next; after it, the
			// source is free for the caller to close.
			<-l.producerDone
			grace := time.NewTimer(stopGrace)
			select {
			case <-l.allDone:
			case <-grace.C:
			}
			grace.Stop()
		}
		break
	}
	if cfg.Progress != nil {
		cfg.Progress(l.progress(start))
	}
	if err := l.stopError(ctx, lctx); err != nil {
		l.discard()
		return nil, LoadReport{}, err
	}
	r, err := l.report(time.Since(start))
	if err != nil {
		l.discard()
		return nil, LoadReport{}, err
	}
	return m, r, nil
}

// discard closes a failed load's map, releasing its slabs, as soon as no
// goroutine of the load can touch it: at once if all have returned, else
// when the last one does (a worker caught in a long growth, see stopGrace).
func (l *loader[K, V]) discard() {
	l.discarded.Store(true)
	select {
	case <-l.allDone:
		l.closeMap.Do(l.m.Close)
	default:
	}
}

// loader is one load's shared state. Each field is written by one
// goroutine: the producer's by the producer, workers[s] by worker s.
type loader[K, V Bits] struct {
	m          *Sharded[K, V]
	src        Source[K, V]
	cfg        LoadConfig
	sourceRows int64
	subRows    int // rows per sub-block: ceil(BlockRows / Shards)
	// shardMask is Shards-1 when the producer picks shards with a mask,
	// else 0 (a division); see ShardSelect.
	shardMask uint64
	hook      func(shard, rows int)

	queues []chan *Block[K, V] // capacity Backlog; closed by the producer at the end
	free   []chan *Block[K, V] // used blocks coming back; capacity Backlog+2
	stop   <-chan struct{}     // closed on error or cancellation
	cancel context.CancelCauseFunc

	producer     producerState
	workers      []*workerState[K, V]
	remaining    atomic.Int32  // goroutines still running
	allDone      chan struct{} // closed when remaining reaches 0
	discarded    atomic.Bool   // the load failed: close m when remaining reaches 0
	closeMap     sync.Once
	producerDone chan struct{} // closed when the producer returns
}

type producerState struct {
	readRows int64    // rows the source gave, counted as they are read
	sentRows []int64  // per shard
	sentSum  []uint64 // per shard: sum of rowCheck over the rows sent
	report   ProducerReport
	finished bool // read the source to its end and closed the queues
}

type workerState[K, V Bits] struct {
	rows     atomic.Int64 // rows processed, for progress
	report   WorkerReport
	recvSum  uint64 // sum of rowCheck over the rows received
	keptSum  uint64 // sum of PairChecksum over the rows inserted
	finished bool   // drained its queue to the producer's close
	_        [64]byte
}

func newLoader[K, V Bits](m *Sharded[K, V], src Source[K, V], cfg LoadConfig, lctx context.Context, cancel context.CancelCauseFunc) *loader[K, V] {
	n := cfg.Shards
	l := &loader[K, V]{
		m: m, src: src, cfg: cfg,
		sourceRows:   src.Rows(),
		subRows:      (cfg.BlockRows + n - 1) / n,
		hook:         loadHook,
		queues:       make([]chan *Block[K, V], n),
		free:         make([]chan *Block[K, V], n),
		stop:         lctx.Done(),
		cancel:       cancel,
		workers:      make([]*workerState[K, V], n),
		allDone:      make(chan struct{}),
		producerDone: make(chan struct{}),
	}
	if n == 1 {
		l.subRows = cfg.BlockRows
	}
	if cfg.ShardSelect != ShardSelectModulo && n&(n-1) == 0 {
		l.shardMask = uint64(n - 1)
	}
	l.producer.sentRows = make([]int64, n)
	l.producer.sentSum = make([]uint64, n)
	for s := range n {
		l.queues[s] = make(chan *Block[K, V], cfg.Backlog)
		l.free[s] = make(chan *Block[K, V], cfg.Backlog+2)
		l.workers[s] = &workerState[K, V]{report: WorkerReport{Shard: s}}
	}
	l.remaining.Store(int32(n + 1))
	return l
}

// exit marks one goroutine as returned.
func (l *loader[K, V]) exit() {
	if l.remaining.Add(-1) == 0 {
		close(l.allDone)
		if l.discarded.Load() {
			l.closeMap.Do(l.m.Close)
		}
	}
}

// recoverAs turns a panic of the calling goroutine into the load's error.
func (l *loader[K, V]) recoverAs(who string) {
	if r := recover(); r != nil {
		if e, ok := r.(*SlabError); ok { // out of memory: the load's error, not a crash
			l.cancel(fmt.Errorf("load: %s: %w", who, e))
			return
		}
		l.cancel(&loadPanic{who: who, value: r, stack: debug.Stack()})
	}
}

// loadPanic is a panic in the producer, a worker or the source, as an error.
type loadPanic struct {
	who   string
	value any
	stack []byte
}

func (p *loadPanic) Error() string {
	return fmt.Sprintf("load: %s panicked: %v (%s)", p.who, p.value, panicSite(p.stack))
}

// panicSite is the first frame of a debug.Stack() that is not the runtime's
// or the recovering function's: where the panic happened.
func panicSite(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i := 1; i+1 < len(lines); i += 2 {
		fn, loc := lines[i], strings.TrimSpace(lines[i+1])
		if strings.HasPrefix(fn, "runtime/debug.") || strings.HasPrefix(fn, "runtime.") ||
			strings.Contains(fn, ").recoverAs(") || strings.HasPrefix(fn, "panic(") {
			continue
		}
		if j := strings.LastIndex(loc, " +0x"); j >= 0 {
			loc = loc[:j]
		}
		return fn[:max(strings.LastIndex(fn, "("), 0)] + " at " + loc
	}
	return "unknown site"
}

// stopped reports whether the load is stopping.
func (l *loader[K, V]) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// get returns an empty block for shard s, recycled when one is free.
func (l *loader[K, V]) get(s int) *Block[K, V] {
	select {
	case b := <-l.free[s]:
		return b
	default:
		return &Block[K, V]{Keys: make([]K, 0, l.subRows), Values: make([]V, 0, l.subRows)}
	}
}

// put returns a used block to shard s's free list, or drops it when the
// list is full (it never is in the steady state: Backlog+2 blocks per shard
// are in use at most, queued, inserting or being filled).
func (l *loader[K, V]) put(s int, b *Block[K, V]) {
	b.Reset()
	select {
	case l.free[s] <- b:
	default:
	}
}

// send queues b for shard s, counting the time blocked on a full queue. It
// returns false when the load is stopping.
func (l *loader[K, V]) send(s int, b *Block[K, V]) bool {
	select {
	case l.queues[s] <- b:
		return true
	default:
	}
	t := time.Now()
	ok := true
	select {
	case l.queues[s] <- b:
	case <-l.stop:
		ok = false
	}
	l.producer.report.WaitSeconds += time.Since(t).Seconds()
	return ok
}

// produce is the producer goroutine.
func (l *loader[K, V]) produce() {
	defer close(l.producerDone)
	defer l.exit()
	defer l.recoverAs("the producer")

	p := &l.producer
	n := len(l.queues)
	var read Block[K, V] // with several shards: the source block, dealt by d
	var d *dealer[K, V]
	if n > 1 {
		read = Block[K, V]{Keys: make([]K, 0, l.cfg.BlockRows), Values: make([]V, 0, l.cfg.BlockRows)}
		d = l.newDealer()
	}
	var rows int64
	for block := 0; ; block++ {
		if l.stopped() {
			return
		}
		b := &read
		if n == 1 {
			b = l.get(0)
		}
		t0 := time.Now()
		err := l.src.Next(b, l.cfg.BlockRows)
		t1 := time.Now()
		p.report.ReadSeconds += t1.Sub(t0).Seconds()
		if err != nil && err != io.EOF {
			l.cancel(fmt.Errorf("load: reading source block %d (rows %d and on): %w", block, rows, err))
			return
		}
		if len(b.Keys) != len(b.Values) || len(b.Keys) > l.cfg.BlockRows {
			l.cancel(fmt.Errorf("load: source block %d has %d keys and %d values, want equal counts of at most %d", block, len(b.Keys), len(b.Values), l.cfg.BlockRows))
			return
		}
		if l.hook != nil {
			l.hook(-1, b.Len())
		}
		rows += int64(b.Len())
		p.readRows = rows
		wait := p.report.WaitSeconds
		if n == 1 {
			var sum uint64
			for i, k := range b.Keys {
				sum += rowCheck(k, b.Values[i])
			}
			p.sentRows[0] += int64(b.Len())
			p.sentSum[0] += sum
			if b.Len() == 0 {
				l.put(0, b)
			} else if !l.send(0, b) {
				return
			}
		} else if !d.deal(b) {
			return
		}
		p.report.SplitSeconds += time.Since(t1).Seconds() - (p.report.WaitSeconds - wait)
		if err == io.EOF {
			break
		}
	}
	if d != nil && !d.flush() {
		return
	}
	for _, q := range l.queues {
		close(q)
	}
	p.finished = true
}

// rowCheck is one row's share of the count-and-checksum the producer and the
// workers keep of the rows passing through the queues. For a fixed value it
// is a bijection of keys of up to 8 bytes (an add, a multiply by an odd
// constant, an xorshift), so a lost, repeated or altered row changes the sum
// but for a 2^-64 chance. It takes two multiplies and no shardHash: the
// worker recomputes it for every row it receives, and the version that
// summed shardHash(key) cost a one-shard load 5 % of its rows/s (10 % for
// both checks of a row; PairChecksum is the other half).
func rowCheck[K, V Bits](k K, v V) uint64 {
	klo, khi := ToUint64(k)
	vlo, vhi := ToUint64(v)
	x := (klo ^ bits.RotateLeft64(khi, 32)) + (vlo^bits.RotateLeft64(vhi, 32)+0x9e3779b97f4a7c15)*0xd6e8feb86659fd93
	x *= 0xbf58476d1ce4e5b9
	return x ^ x>>31
}

// dealer is the producer's side of the split: the sub-block it is filling
// for each shard.
type dealer[K, V Bits] struct {
	l    *loader[K, V]
	subs []subBlock[K, V] // one per shard
}

// subBlock is one shard's sub-block being filled. Its fields sit together
// so that dealing a row touches one small struct, not a block through a
// pointer and two slice headers.
type subBlock[K, V Bits] struct {
	b    *Block[K, V]
	keys []K // b.Keys[:subRows], filled up to n
	vals []V // b.Values[:subRows]
	n    int
	rows int64  // rows dealt to this shard in all
	sum  uint64 // sum of rowCheck over them
}

func (l *loader[K, V]) newDealer() *dealer[K, V] {
	d := &dealer[K, V]{l: l, subs: make([]subBlock[K, V], len(l.queues))}
	for s := range d.subs {
		d.refill(s)
	}
	return d
}

// refill gives shard s an empty sub-block.
func (d *dealer[K, V]) refill(s int) {
	b := d.l.get(s)
	n := d.l.subRows
	if cap(b.Keys) < n || cap(b.Values) < n {
		b.Keys, b.Values = make([]K, 0, n), make([]V, 0, n)
	}
	sub := &d.subs[s]
	sub.b, sub.keys, sub.vals, sub.n = b, b.Keys[:n], b.Values[:n], 0
}

// send queues shard s's sub-block, filled or not, and refills it. It
// returns false when the load is stopping.
func (d *dealer[K, V]) send(s int) bool {
	sub := &d.subs[s]
	b := sub.b
	b.Keys, b.Values = sub.keys[:sub.n], sub.vals[:sub.n]
	p := &d.l.producer
	p.sentRows[s], p.sentSum[s] = sub.rows, sub.sum
	if !d.l.send(s, b) {
		return false
	}
	d.refill(s)
	return true
}

// deal deals the rows of b into the per-shard sub-blocks, sending each one
// when it is full. It returns false when the load is stopping.
func (d *dealer[K, V]) deal(b *Block[K, V]) bool {
	subs := d.subs
	n := uint64(len(subs))
	mask := d.l.shardMask // n-1 when masking: ShardOf without a division
	keys, vals := b.Keys, b.Values[:len(b.Keys)]
	for lo := 0; lo < len(keys); lo += insertChunk {
		if d.l.stopped() {
			return false
		}
		hi := min(lo+insertChunk, len(keys))
		for i := lo; i < hi; i++ {
			k, v := keys[i], vals[i]
			h := shardHash(k)
			var s uint64
			if mask != 0 {
				s = h & mask
			} else {
				s = h % n
			}
			sub := &subs[s]
			j := sub.n
			sub.keys[j] = k
			sub.vals[j] = v
			sub.n = j + 1
			sub.rows++
			sub.sum += rowCheck(k, v)
			if j+1 == len(sub.keys) && !d.send(int(s)) {
				return false
			}
		}
	}
	return true
}

// flush sends every sub-block that holds rows.
func (d *dealer[K, V]) flush() bool {
	for s := range d.subs {
		if d.subs[s].n > 0 && !d.send(s) {
			return false
		}
	}
	return true
}

// work is shard s's worker goroutine: the only writer of table s.
func (l *loader[K, V]) work(s int) {
	defer l.exit()
	defer l.recoverAs(fmt.Sprintf("the worker of shard %d", s))

	w := l.workers[s]
	r := &w.report
	t := l.m.tables[s]
	q := l.queues[s]
	inserted := make([]bool, insertChunk)
	for {
		var b *Block[K, V]
		var ok bool
		select {
		case b, ok = <-q:
		default:
			t0 := time.Now()
			select {
			case b, ok = <-q:
			case <-l.stop:
				return
			}
			r.WaitSeconds += time.Since(t0).Seconds()
		}
		if !ok {
			w.finished = true
			return
		}
		t1 := time.Now()
		if l.hook != nil {
			l.hook(s, b.Len())
		}
		keys, vals := b.Keys, b.Values[:len(b.Keys)]
		for lo := 0; lo < len(keys); lo += insertChunk {
			hi := min(lo+insertChunk, len(keys))
			var recv, kept uint64
			ins := int64(InsertMany(t, keys[lo:hi], vals[lo:hi], inserted[:hi-lo]))
			for i := lo; i < hi; i++ {
				k, v := keys[i], vals[i]
				recv += rowCheck(k, v)
				if inserted[i-lo] {
					kept += PairChecksum(k, v)
				}
			}
			rows := int64(hi - lo)
			w.recvSum += recv
			w.keptSum += kept
			r.Rows += rows
			r.Elements += ins
			r.Duplicates += rows - ins
			w.rows.Add(rows)
			if l.stopped() {
				return
			}
		}
		r.BusySeconds += time.Since(t1).Seconds()
		l.put(s, b)
	}
}

// progress snapshots the workers' counters.
func (l *loader[K, V]) progress(start time.Time) LoadProgress {
	p := LoadProgress{ShardRows: make([]int64, len(l.workers)), SourceRows: l.sourceRows, Elapsed: time.Since(start)}
	for s, w := range l.workers {
		p.ShardRows[s] = w.rows.Load()
		p.Rows += p.ShardRows[s]
	}
	return p
}

// stopError is the error a stopped load returns, or nil if it was not
// stopped: ctx's error if the caller cancelled, else the first failure.
func (l *loader[K, V]) stopError(ctx, lctx context.Context) error {
	if lctx.Err() == nil {
		return nil
	}
	rows := int64(0)
	for _, w := range l.workers {
		rows += w.rows.Load()
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("load cancelled after %d rows: %w", rows, err)
	}
	return context.Cause(lctx)
}

// report checks the producer's and the workers' counts against each other
// and against the tables, and builds the report. It runs after every
// goroutine has returned.
func (l *loader[K, V]) report(wall time.Duration) (LoadReport, error) {
	p := &l.producer
	if !p.finished {
		return LoadReport{}, errors.New("load: the producer stopped before the end of the source")
	}
	r := LoadReport{Seconds: wall.Seconds(), Producer: p.report, Workers: make([]WorkerReport, len(l.workers))}
	for s, w := range l.workers {
		wr := w.report
		if !w.finished {
			return LoadReport{}, fmt.Errorf("load: the worker of shard %d stopped before its queue was closed", s)
		}
		if wr.Rows != p.sentRows[s] || w.recvSum != p.sentSum[s] {
			return LoadReport{}, fmt.Errorf("load: shard %d received %d rows (checksum %#x), the producer sent %d (checksum %#x)",
				s, wr.Rows, w.recvSum, p.sentRows[s], p.sentSum[s])
		}
		if got := int64(l.m.tables[s].Len()); got != wr.Elements {
			return LoadReport{}, fmt.Errorf("load: shard %d holds %d keys, its worker inserted %d", s, got, wr.Elements)
		}
		if wr.BusySeconds > 0 {
			wr.RowsPerSecond = float64(wr.Rows) / wr.BusySeconds
		}
		r.Workers[s] = wr
		r.Rows += wr.Rows
		r.Elements += wr.Elements
		r.Duplicates += wr.Duplicates
		r.Checksum += w.keptSum
	}
	if r.Rows != p.readRows {
		return LoadReport{}, fmt.Errorf("load: the source gave %d rows, the workers received %d", p.readRows, r.Rows)
	}
	if r.Rows != r.Elements+r.Duplicates {
		return LoadReport{}, fmt.Errorf("load: %d rows != %d elements + %d duplicates", r.Rows, r.Elements, r.Duplicates)
	}
	r.Skipped = l.src.Skipped()
	if l.sourceRows >= 0 && r.Rows+r.Skipped != l.sourceRows {
		return LoadReport{}, fmt.Errorf("load: the source announced %d rows but produced %d (and skipped %d)", l.sourceRows, r.Rows, r.Skipped)
	}
	return r, nil
}

// Verify recounts the map's elements and checksum through All() and compares
// them with what the load reported.
func (s *Sharded[K, V]) Verify(r LoadReport) error {
	var n int64
	var sum uint64
	for k, v := range s.All() {
		n++
		sum += PairChecksum(k, v)
	}
	if n != r.Elements || sum != r.Checksum {
		return fmt.Errorf("verify: the map holds %d elements with checksum %#x, the load reported %d with checksum %#x", n, sum, r.Elements, r.Checksum)
	}
	if l := int64(s.Len()); l != n {
		return fmt.Errorf("verify: Len() is %d but All() yields %d pairs", l, n)
	}
	return nil
}
