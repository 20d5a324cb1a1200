package sink_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

var (
	interleaveSeed  = flag.Uint64("interleave.seed", 0, "run TestInterleavings with this seed only")
	interleaveSteps = flag.Int("interleave.steps", 0, "steps per seed of TestInterleavings (0: 25 under -short, else 60)")
)

// TestInterleavings is a model-based test of the guarantee that a
// compaction, a merge-on-read delete or upsert, a zombie sink and a
// rollback of main, interleaved in any order, lose and duplicate no row.
// A seeded PRNG picks a sequence of operations on one merge-on-read
// table (two day partitions) fed by a sink from two source partitions:
// sink commits (with redelivered rows), users' deletes and upserts by
// key, compactions (the table's, of whole partitions or of selected
// files, and the sink's), a zombie sink that started a source partition
// earlier and commits late, rollbacks of main to any snapshot, and any
// of these armed to land between another one's planning and its commit
// (a hook in the commit lock, as in compact_race_test.go). The model
// keeps the expected state of every snapshot (positions, deleted ids,
// upserted values; a rollback restores the target's) and predicts each
// commit's outcome: a sink whose source partition the table moved since
// it read it must be fenced, any other commit must land. The table is
// compared with the model after every step; at the end the sink catches
// up to the end of the source and the table must hold every message
// once, minus the deletes, with the upserts. A failure prints the seed
// and the trace; -interleave.seed reruns one seed. TestInterleavingsUpsert
// (interleave_upsert_test.go) runs the same on the sink's upsert mode.
func TestInterleavings(t *testing.T) {
	t.Parallel()
	type run struct {
		v    int
		seed uint64
	}
	var runs []run
	for seed := range uint64(8) {
		runs = append(runs, run{2, seed + 1}, run{3, seed + 1})
	}
	steps := 60
	if testing.Short() { // three seeds, v3, v2, v3
		runs, steps = []run{runs[1], runs[2], runs[5]}, 25
	}
	if *interleaveSeed != 0 {
		runs = []run{{2, *interleaveSeed}, {3, *interleaveSeed}}
	}
	if *interleaveSteps > 0 {
		steps = *interleaveSteps
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("v%d/seed%d", r.v, r.seed), func(t *testing.T) {
			newInterleaving(t, r.v, r.seed, nil).run(steps)
		})
	}
}

// ivSP are the two source partitions of the stream.
var ivSP = [2]sink.SourcePartition{{Source: "test:events", Partition: 0}, {Source: "test:events", Partition: 1}}

// ivDay is the table partition (0 or 1: day0 or the day after) of the
// message at offset off: three messages of one day, then three of the
// other.
func ivDay(off int64) int { return int(off/3) % 2 }

func ivKey(day int) string { return "event_day=" + day0.AddDate(0, 0, day).Format(time.DateOnly) }

func ivID(part int, off int64) string { return fmt.Sprintf("p%d-%d", part, off) }

// ivMessages are the messages at offsets [from, to) of source partition
// part: id "p<part>-<offset>", seq the offset, on the day ivDay says.
func ivMessages(part int, from, to int64) ([]msg, []int64) {
	var ms []msg
	var offs []int64
	for o := from; o < to; o++ {
		at := day0.AddDate(0, 0, ivDay(o)).Add(12*time.Hour + time.Duration(o)*time.Second)
		ms = append(ms, msg{id: ivID(part, o), seq: o, at: at})
		offs = append(offs, o)
	}
	return ms, offs
}

// ivState is what the table must hold: the messages at offsets up to
// pos of each source partition, but those users deleted (del), with the
// values users upserted (val: id -> seq). In upsert mode
// (interleave_upsert_test.go) the table holds keys instead: one row per
// key, del and val unused.
type ivState struct {
	pos  [2]int64
	del  map[string]bool
	val  map[string]int64
	keys map[string]ivRow
}

func (s ivState) clone() ivState {
	return ivState{pos: s.pos, del: maps.Clone(s.del), val: maps.Clone(s.val), keys: maps.Clone(s.keys)}
}

// live reports whether the row of id (at offset off of part) is in the
// table.
func (s ivState) live(part int, off int64) bool { return off <= s.pos[part] && !s.del[ivID(part, off)] }

// rows is id -> seq of every row the table must hold.
func (s ivState) rows() map[string]int64 {
	out := map[string]int64{}
	for p := range 2 {
		for o := int64(0); o <= s.pos[p]; o++ {
			id := ivID(p, o)
			if s.del[id] {
				continue
			}
			out[id] = o
			if v, ok := s.val[id]; ok {
				out[id] = v
			}
		}
	}
	return out
}

// ivZombie is a sink that started a source partition and commits late.
type ivZombie struct {
	s        *sink.Sink
	lock     *hookLock
	part     int
	loaded   int64 // the table's position of part when it started
	from, to int64 // its pending rows, when written
}

// interleaving is one seeded run: the table, the actors and the model.
type interleaving struct {
	t     *testing.T
	ctx   context.Context
	seed  uint64
	v     int
	rng   *rand.Rand
	cat   catalog.Catalog // the live sink's
	other catalog.Catalog // the users' and the zombie's
	dir   string
	ident icetable.Identifier

	state ivState
	snaps map[int64]ivState // the expected state of every snapshot main held
	order []int64           // the snapshots of snaps, as recorded

	up *ivUpsert // the upsert mode's model; nil: the sink appends

	live     *sink.Sink
	liveLock *hookLock
	consumer [2]int64 // the offset up to which the live sink's source delivered (it resumes one past)
	written  int64    // the greatest offset handed to any sink
	zombie   *ivZombie

	step  int
	trace []string
	depth int // > 0 inside a hook
}

var ivPolicy = commit.Policy{Attempts: 10, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, Timeout: time.Minute}

// newInterleaving sets up a run: of the append mode when up is nil,
// else of the upsert mode up models.
func newInterleaving(t *testing.T, v int, seed uint64, up *ivUpsert) *interleaving {
	cat, dir := catalogtest.New(t)
	i := &interleaving{
		t: t, ctx: context.Background(), seed: seed, v: v,
		rng: rand.New(rand.NewPCG(seed, uint64(v))),
		cat: cat, other: catalogtest.Open(t, dir), dir: dir,
		state: ivState{pos: [2]int64{-1, -1}, del: map[string]bool{}, val: map[string]int64{}},
		snaps: map[int64]ivState{}, consumer: [2]int64{-1, -1}, up: up,
	}
	if up != nil {
		i.ident = upsertEventsTable(t, cat, v)
		i.state.keys = map[string]ivRow{}
	} else {
		i.ident = morEventsTable(t, cat, v)
	}
	i.openLive()
	return i
}

// sinkOptions are the options of every sink of the run, beside opts.
func (i *interleaving) sinkOptions(opts ...sink.Option) []sink.Option {
	if i.up != nil {
		opts = append(opts, sink.WithUpsert(ivChangeSpec))
	}
	return opts
}

// logf adds a line to the trace.
func (i *interleaving) logf(format string, args ...any) {
	i.trace = append(i.trace, fmt.Sprintf("%2d %s%s", i.step, strings.Repeat("  hook: ", i.depth), fmt.Sprintf(format, args...)))
}

// fatalf fails the run with the seed and the trace.
func (i *interleaving) fatalf(format string, args ...any) {
	i.t.Helper()
	name := "TestInterleavings"
	if i.up != nil {
		name = "TestInterleavingsUpsert"
	}
	i.t.Fatalf("seed %d, format v%d, step %d: %s\ntrace (rerun: go test -run '%s/v%d/' -interleave.seed %d):\n%s",
		i.seed, i.v, i.step, fmt.Sprintf(format, args...), name, i.v, i.seed, strings.Join(i.trace, "\n"))
}

func (i *interleaving) openLive() {
	i.liveLock = &hookLock{}
	s, err := sink.Open(i.ctx, i.cat, i.ident, i.sinkOptions(sink.WithCommitLock(i.liveLock), sink.WithRetry(ivPolicy),
		sink.WithoutSnapshotExpiry(), sink.WithSmallFileCompaction(3, 0))...)
	if err != nil {
		i.fatalf("open the live sink: %v", err)
	}
	i.live = s
	i.startLive()
}

// startLive resumes the live sink from the table's positions, which must
// be the model's.
func (i *interleaving) startLive() {
	pos, err := i.live.Start(i.ctx, ivSP[0], ivSP[1])
	if err != nil {
		i.fatalf("Start: %v", err)
	}
	for p := range 2 {
		if pos[ivSP[p]] != i.state.pos[p] {
			i.fatalf("Start returned %s at %d, want %d", ivSP[p], pos[ivSP[p]], i.state.pos[p])
		}
		i.consumer[p] = pos[ivSP[p]]
	}
	i.logf("live: Start at %v", i.consumer)
}

// writer opens a table writer of the users on the other catalog handle,
// with its own commit lock.
func (i *interleaving) writer(opts ...table.Option) (*table.Writer, *hookLock) {
	lock := &hookLock{}
	w, err := table.Open(i.ctx, i.other, i.ident, append([]table.Option{table.WithCommitLock(lock), table.WithRetry(ivPolicy)}, opts...)...)
	if err != nil {
		i.fatalf("open a writer: %v", err)
	}
	return w, lock
}

// record gives the current state to main's snapshots not seen yet (its
// ancestors down to the first one recorded).
func (i *interleaving) record() {
	tbl, err := i.cat.LoadTable(i.ctx, i.ident)
	if err != nil {
		i.fatalf("load: %v", err)
	}
	for s := tbl.CurrentSnapshot(); s != nil; {
		if _, ok := i.snaps[s.SnapshotID]; ok {
			return
		}
		i.snaps[s.SnapshotID] = i.state.clone()
		i.order = append(i.order, s.SnapshotID)
		if s.ParentSnapshotID == nil {
			return
		}
		s = tbl.SnapshotByID(*s.ParentSnapshotID)
	}
}

// check compares the table with the model: its rows and its positions.
func (i *interleaving) check(when string) {
	i.t.Helper()
	got := rowsBySeq(i.t, i.cat, i.ident)
	want := i.state.rows()
	var bad []string
	if i.up != nil {
		want = i.state.keyRows()
		bad = i.up.checkTombstones(i)
	}
	for _, id := range slices.Sorted(maps.Keys(got)) {
		seqs := got[id]
		w, ok := want[id]
		switch {
		case !ok:
			bad = append(bad, fmt.Sprintf("%s: rows %v, want none", id, seqs))
		case len(seqs) != 1 || seqs[0] != w:
			bad = append(bad, fmt.Sprintf("%s: rows %v, want [%d]", id, seqs, w))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[id]; !ok {
			bad = append(bad, fmt.Sprintf("%s: missing, want [%d]", id, want[id]))
		}
	}
	tbl, err := i.cat.LoadTable(i.ctx, i.ident)
	if err != nil {
		i.fatalf("load: %v", err)
	}
	pos, err := sink.Positions(tbl)
	if err != nil {
		i.fatalf("Positions: %v", err)
	}
	for p := range 2 {
		g, ok := pos[ivSP[p]]
		if !ok {
			g = -1
		}
		if g != i.state.pos[p] {
			bad = append(bad, fmt.Sprintf("position of %s %d, want %d", ivSP[p], g, i.state.pos[p]))
		}
	}
	if len(bad) > 0 {
		i.fatalf("%s: the table is not the model's:\n  %s", when, strings.Join(bad, "\n  "))
	}
}

func (i *interleaving) write(s *sink.Sink, part int, from, to int64) {
	var rec arrow.RecordBatch
	var offs []int64
	if i.up != nil {
		rec, offs = i.up.written(part, from, to)
	} else {
		var ms []msg
		ms, offs = ivMessages(part, from, to)
		rec = batch(ms)
	}
	defer rec.Release()
	i.written = max(i.written, to-1)
	if err := s.Write(i.ctx, ivSP[part], offs, rec); err != nil {
		i.fatalf("write %s [%d,%d): %v", ivSP[part], from, to, err)
	}
}

// armed runs op with hook (when not nil) set to run once at the next Lock
// of lock, and says in the trace whether it ran.
func (i *interleaving) armed(lock *hookLock, hook func(), op func()) {
	if hook == nil {
		op()
		return
	}
	fired := false
	lock.arm(func() {
		fired = true
		i.depth++
		defer func() { i.depth-- }()
		hook()
	})
	op()
	lock.arm(nil)
	if !fired {
		i.logf("(the hook did not run: no commit)")
	}
}

// liveCommit has the live sink write the next k messages of the source
// partitions parts, r already delivered ones before them, and commit.
// The commit must be fenced exactly when the table's position of one of
// parts is not where the live sink's source is (a rollback or a zombie
// moved it since the sink started or last committed it; rows committed
// over a gap would be lost, and the fence is what tells the sink to
// restart), and then the sink restarts from the table.
func (i *interleaving) liveCommit(parts []int, k, r int64, hook func()) {
	var ranges []string
	from, to := map[int]int64{}, map[int]int64{}
	for _, p := range parts {
		from[p], to[p] = max(0, i.consumer[p]+1-r), i.consumer[p]+1+k
		i.write(i.live, p, from[p], to[p])
		ranges = append(ranges, fmt.Sprintf("%s [%d,%d)", ivSP[p], from[p], to[p]))
	}
	i.logf("live: write %s, commit", strings.Join(ranges, ", "))
	var err error
	i.armed(i.liveLock, hook, func() { _, err = i.live.Commit(i.ctx) })
	var moved, gaps []string
	for _, p := range parts {
		if i.state.pos[p] != i.consumer[p] {
			moved = append(moved, fmt.Sprintf("%s: table at %d, source at %d", ivSP[p], i.state.pos[p], i.consumer[p]))
		}
		if from[p] > i.state.pos[p]+1 {
			gaps = append(gaps, fmt.Sprintf("%s: table at %d, rows from %d", ivSP[p], i.state.pos[p], from[p]))
		}
	}
	switch {
	case err == nil && len(gaps) > 0:
		i.fatalf("the live sink's commit landed over a gap, want ErrFenced (rows lost: %s)", strings.Join(gaps, "; "))
	case err == nil && len(moved) > 0:
		i.fatalf("the live sink's commit landed, want ErrFenced (%s)", strings.Join(moved, "; "))
	case err == nil:
		var rs []ivRange
		for _, p := range parts {
			rs = append(rs, ivRange{p, i.state.pos[p] + 1, to[p]})
		}
		i.landed(rs...)
		for _, p := range parts {
			i.state.pos[p], i.consumer[p] = to[p]-1, to[p]-1
		}
		i.record()
	case errors.Is(err, sink.ErrFenced) && len(moved) > 0:
		i.logf("live: fenced (%s)", strings.Join(moved, "; "))
		i.fencedTombstones()
		if i.depth == 0 {
			i.startLive()
		}
	default:
		i.fatalf("the live sink's commit: %v, want %s", err, map[bool]string{true: "ErrFenced or nil", false: "nil"}[len(moved) > 0])
	}
}

// pickIDs picks up to n ids of day day: offsets up to a little past what
// the table and the source hold (some live, some deleted, some not
// written yet) when unwritten, else only written ones.
func (i *interleaving) pickIDs(n int, day int, unwritten bool) (ids []string, at map[string]msg) {
	at = map[string]msg{}
	for range n * 8 {
		if len(ids) == n {
			break
		}
		p := i.rng.IntN(2)
		hi := i.state.pos[p]
		if unwritten {
			hi = max(hi, i.consumer[p]) + 3
		}
		if hi < 0 {
			continue
		}
		off := i.rng.Int64N(hi + 1)
		if day >= 0 && ivDay(off) != day {
			continue
		}
		id := ivID(p, off)
		if _, dup := at[id]; dup {
			continue
		}
		ms, _ := ivMessages(p, off, off+1)
		ids, at[id] = append(ids, id), ms[0]
	}
	return ids, at
}

// parseID is the source partition and offset of id.
func parseID(id string) (int, int64) {
	var p int
	var off int64
	if _, err := fmt.Sscanf(id, "p%d-%d", &p, &off); err != nil {
		panic(err)
	}
	return p, off
}

// userDelete is a user's merge-on-read Delete of ids in one day (armed
// with hook), as the model's step of either mode.
func (i *interleaving) userDelete(day int, ids []string, hook func()) commit.Result {
	i.logf("delete %s of %s", ids, ivKey(day))
	w, lock := i.writer()
	key, err := w.Key(ivKey(day))
	if err != nil {
		i.fatalf("key: %v", err)
	}
	var res commit.Result
	i.armed(lock, hook, func() { res, err = w.Delete(i.ctx, key, idKeys(ids...), "id") })
	if err != nil {
		i.fatalf("delete %v: %v", ids, err)
	}
	return res
}

// deleteRows deletes some ids of one day by key, merge-on-read.
func (i *interleaving) deleteRows(hook func()) {
	if i.up != nil {
		i.deleteKeys(hook)
		return
	}
	day := i.rng.IntN(2)
	ids, _ := i.pickIDs(1+i.rng.IntN(4), day, true)
	if len(ids) == 0 {
		i.logf("delete: no id to pick")
		return
	}
	res := i.userDelete(day, ids, hook)
	n := int64(0)
	for _, id := range ids {
		if p, off := parseID(id); i.state.live(p, off) {
			i.state.del[id] = true
			n++
		}
	}
	if res.DeletedRows != n {
		i.fatalf("delete %v deleted %d rows, want %d", ids, res.DeletedRows, n)
	}
	i.record()
}

// upsertRows upserts new values of some written ids (deleted ones come
// back), merge-on-read.
func (i *interleaving) upsertRows(hook func()) {
	if i.up != nil {
		i.upsertKeys(hook)
		return
	}
	ids, at := i.pickIDs(1+i.rng.IntN(3), -1, false)
	if len(ids) == 0 {
		i.logf("upsert: no id to pick")
		return
	}
	var rows []msg
	for j, id := range ids {
		m := at[id]
		m.seq = 1_000_000 + int64(i.step)*10 + int64(j)
		rows = append(rows, m)
	}
	i.logf("upsert %v", rows)
	w, lock := i.writer()
	rec := batch(rows)
	rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		i.fatalf("reader: %v", err)
	}
	defer rr.Release()
	i.armed(lock, hook, func() { _, err = w.Upsert(i.ctx, rr, "id") })
	if err != nil {
		i.fatalf("upsert %v: %v", ids, err)
	}
	for _, m := range rows {
		delete(i.state.del, m.id)
		i.state.val[m.id] = m.seq
	}
	i.record()
}

// compactions are the kinds of compaction the run picks from.
var compactions = []string{"table", "table-files", "table-all", "sink"}

// compact compacts one day with the table's compaction (of the whole
// partition, or of its selected files), every partition, or the live
// sink's.
func (i *interleaving) compact(kind string, hook func()) {
	day := i.rng.IntN(2)
	i.logf("compact (%s) %s", kind, ivKey(day))
	var err error
	var res commit.Result
	switch kind {
	case "sink":
		var key = must(i.live.Key(ivKey(day)))
		i.armed(i.liveLock, hook, func() { res, err = i.live.Compact(i.ctx, key) })
	case "table-all":
		w, lock := i.writer()
		i.armed(lock, hook, func() { _, err = w.CompactAll(i.ctx) })
	default:
		var opts []table.Option
		if kind == "table-files" {
			opts = append(opts, table.WithCompactPolicy(table.CompactPolicy{MinSmallFiles: 2, Scope: table.CompactFiles}))
		}
		w, lock := i.writer(opts...)
		key := must(w.Key(ivKey(day)))
		i.armed(lock, hook, func() { res, err = w.Compact(i.ctx, key) })
	}
	if err != nil {
		i.fatalf("compact (%s) %s: %v", kind, ivKey(day), err)
	}
	if res.Unchanged {
		i.logf("(unchanged)")
	}
	i.record()
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// openZombie starts a second sink on a source partition: the stale
// owner-to-be; it writes its rows now or when it commits.
func (i *interleaving) openZombie() {
	part := i.rng.IntN(2)
	lock := &hookLock{}
	s, err := sink.Open(i.ctx, i.other, i.ident, i.sinkOptions(sink.WithCommitLock(lock), sink.WithRetry(ivPolicy), sink.WithoutSnapshotExpiry())...)
	if err != nil {
		i.fatalf("open the zombie: %v", err)
	}
	pos, err := s.Start(i.ctx, ivSP[part])
	if err != nil {
		i.fatalf("zombie Start: %v", err)
	}
	if pos[ivSP[part]] != i.state.pos[part] {
		i.fatalf("zombie Start at %d, want %d", pos[ivSP[part]], i.state.pos[part])
	}
	z := &ivZombie{s: s, lock: lock, part: part, loaded: pos[ivSP[part]]}
	i.logf("zombie: Start %s at %d", ivSP[part], z.loaded)
	if i.rng.IntN(2) == 0 {
		z.from, z.to = z.loaded+1, z.loaded+1+1+i.rng.Int64N(4)
		i.write(s, part, z.from, z.to)
		i.logf("zombie: write [%d,%d)", z.from, z.to)
	}
	i.zombie = z
}

// zombieCommit has the zombie commit (after writing its rows, if it has
// not yet, and, at times, compacting): it must be fenced unless the
// table's position of its source partition is the one it started from
// (a rollback took it back there), and then land. Mostly the live sink
// moves on first, when it has not.
func (i *interleaving) zombieCommit(hook func()) {
	z := i.zombie
	i.zombie = nil
	if z.to == 0 {
		z.from, z.to = z.loaded+1, z.loaded+1+1+i.rng.Int64N(4)
		i.write(z.s, z.part, z.from, z.to)
		i.logf("zombie: write [%d,%d)", z.from, z.to)
	}
	if i.state.pos[z.part] == z.loaded && i.rng.IntN(8) != 0 && i.depth == 0 {
		i.liveCommit([]int{z.part}, 1+i.rng.Int64N(4), 0, nil)
	}
	if i.rng.IntN(3) == 0 {
		day := i.rng.IntN(2)
		i.logf("zombie: compact %s", ivKey(day))
		if _, err := z.s.Compact(i.ctx, must(z.s.Key(ivKey(day)))); err != nil {
			i.fatalf("zombie compact: %v", err)
		}
		i.record()
	}
	i.logf("zombie: commit %s [%d,%d) started at %d", ivSP[z.part], z.from, z.to, z.loaded)
	var err error
	i.armed(z.lock, hook, func() { _, err = z.s.Commit(i.ctx) })
	moved := i.state.pos[z.part] != z.loaded
	switch {
	case err == nil && moved:
		i.fatalf("the zombie's commit landed, want ErrFenced (table at %d, zombie started at %d)", i.state.pos[z.part], z.loaded)
	case err == nil:
		i.logf("zombie: landed (the table was back at its start)")
		i.landed(ivRange{z.part, z.from, z.to})
		i.state.pos[z.part] = z.to - 1
		i.record()
	case errors.Is(err, sink.ErrFenced) && moved:
		i.logf("zombie: fenced")
		i.fencedTombstones()
	default:
		i.fatalf("the zombie's commit: %v, want %s", err, map[bool]string{true: "ErrFenced", false: "nil"}[moved])
	}
	if err := z.s.Abort(i.ctx); err != nil {
		i.fatalf("zombie Abort: %v", err)
	}
}

// rollback sets main to an earlier snapshot of its ancestry (at times to
// any snapshot the table had) and takes the model back to its state. The
// live sink restarts now, is opened anew, or is left to learn it from
// its next commit's fence.
func (i *interleaving) rollback() {
	tbl, err := i.cat.LoadTable(i.ctx, i.ident)
	if err != nil {
		i.fatalf("load: %v", err)
	}
	cur := tbl.CurrentSnapshot().SnapshotID
	var cands []int64
	if i.rng.IntN(4) != 0 {
		for s := tbl.CurrentSnapshot(); s.ParentSnapshotID != nil; {
			s = tbl.SnapshotByID(*s.ParentSnapshotID)
			cands = append(cands, s.SnapshotID)
		}
		slices.Reverse(cands)
	} else {
		cands = slices.DeleteFunc(slices.Clone(i.order), func(id int64) bool { return id == cur })
	}
	if len(cands) == 0 {
		i.logf("rollback: no earlier snapshot")
		return
	}
	to := cands[i.rng.IntN(len(cands))]
	want, ok := i.snaps[to]
	if !ok {
		i.fatalf("snapshot %d has no recorded state", to)
	}
	i.logf("rollback to snapshot #%d (positions %v, %d deleted, keys %v)", slices.Index(i.order, to), want.pos, len(want.del), want.keyRows())
	rollback(i.t, i.cat, i.ident, to)
	i.state = want.clone()
	if i.depth > 0 {
		return // the sink in the middle of a call is not restarted; its fence tells it
	}
	switch i.rng.IntN(3) {
	case 0:
		i.startLive()
	case 1:
		if err := i.live.Close(i.ctx); err != nil {
			i.fatalf("close the live sink: %v", err)
		}
		i.logf("live: open anew")
		i.openLive()
	default:
		i.logf("live: not told")
	}
}

// simple runs one operation that is not armed; busy says which actors
// are in the middle of a call (the hook of their commit): "live",
// "zombie", or "upsert" (a user's upsert, which a rollback would let
// insert a row the sink then writes again).
func (i *interleaving) simple(busy string) {
	type op struct {
		name string
		ok   bool
		run  func()
	}
	// A user's Upsert (not a changelog write) reads and rewrites only the
	// partitions its rows go to: a sink commit that moves one of its keys
	// to the other day between its planning and its commit leaves the
	// key in both (documented: Writer.Upsert, "Uniqueness is per
	// partition"). The upsert mode keeps sink commits out of its hook.
	upsertBusy := i.up != nil && busy == "upsert"
	ops := []op{
		{"live", busy != "live" && !upsertBusy, func() {
			parts := [][]int{{0}, {1}, {0, 1}}[i.rng.IntN(3)]
			i.liveCommit(parts, 1+i.rng.Int64N(6), i.rng.Int64N(3), nil)
		}},
		{"delete", true, func() { i.deleteRows(nil) }},
		{"upsert", true, func() { i.upsertRows(nil) }},
		{"compact", true, func() {
			kinds := compactions
			if busy == "live" {
				kinds = kinds[:3]
			}
			i.compact(kinds[i.rng.IntN(len(kinds))], nil)
		}},
		{"zombie", busy != "zombie" && (i.zombie == nil || busy != "live") && !upsertBusy, func() {
			if i.zombie == nil {
				i.openZombie()
			} else {
				i.zombieCommit(nil)
			}
		}},
		{"rollback", busy != "upsert", i.rollback},
	}
	ops = slices.DeleteFunc(ops, func(o op) bool { return !o.ok })
	ops[i.rng.IntN(len(ops))].run()
}

// armedOp runs an operation whose commit lock runs another one between
// its planning and its commit.
func (i *interleaving) armedOp() {
	kinds := []string{"compact", "compact", "delete", "upsert", "live"}
	if i.zombie != nil {
		kinds = append(kinds, "zombie")
	}
	switch k := kinds[i.rng.IntN(len(kinds))]; k {
	case "compact":
		kind := compactions[i.rng.IntN(len(compactions))]
		busy := ""
		if kind == "sink" {
			busy = "live"
		}
		i.logf("armed compaction:")
		i.compact(kind, func() { i.simple(busy) })
	case "delete":
		i.logf("armed delete:")
		i.deleteRows(func() { i.simple("") })
	case "upsert":
		i.logf("armed upsert:")
		i.upsertRows(func() { i.simple("upsert") })
	case "live":
		i.logf("armed live commit:")
		parts := [][]int{{0}, {1}, {0, 1}}[i.rng.IntN(3)]
		i.liveCommit(parts, 1+i.rng.Int64N(6), i.rng.Int64N(3), func() { i.simple("live") })
	case "zombie":
		i.logf("armed zombie commit:")
		i.zombieCommit(func() { i.simple("zombie") })
	}
}

func (i *interleaving) run(steps int) {
	i.liveCommit([]int{0, 1}, 4, 0, nil)
	i.check("after the first commit")
	for i.step = 1; i.step <= steps; i.step++ {
		if i.rng.IntN(3) == 0 {
			i.armedOp()
		} else {
			i.simple("")
		}
		i.check("after the step")
	}
	// The end: the live sink restarts and catches up to the end of the
	// source, past what any sink ever wrote.
	i.step = steps + 1
	if i.zombie != nil {
		if err := i.zombie.s.Abort(i.ctx); err != nil {
			i.fatalf("zombie Abort: %v", err)
		}
		i.zombie = nil
	}
	i.startLive()
	end := max(i.state.pos[0], i.state.pos[1], i.written) + 5
	for p := range 2 {
		i.write(i.live, p, i.consumer[p]+1, end+1)
		i.state.pos[p] = end
	}
	i.logf("live: catch up to %d", end)
	from := [2]int64{i.consumer[0] + 1, i.consumer[1] + 1}
	if _, err := i.live.Commit(i.ctx); err != nil {
		i.fatalf("the catch-up commit: %v", err)
	}
	i.landed(ivRange{0, from[0], end + 1}, ivRange{1, from[1], end + 1})
	i.check("after the catch-up")
	if i.up != nil {
		i.up.checkCleanRun(i, end)
	}
	if orphans := i.orphans(); len(orphans) > 0 {
		i.fatalf("data files referenced by no snapshot: %v", orphans)
	}
	if n := i.live.Stats().MaintenanceFailures; n > 0 {
		i.fatalf("%d maintenance failures of the live sink", n)
	}
	if err := i.live.Close(i.ctx); err != nil {
		i.fatalf("close: %v", err)
	}
	count := func(sub string) int {
		return len(slices.DeleteFunc(slices.Clone(i.trace), func(l string) bool { return !strings.Contains(l, sub) }))
	}
	i.t.Logf("%d steps, %d snapshots: %d hooks run, %d rollbacks, %d live fenced, %d zombies fenced, %d zombies landed, %d deletes, %d upserts, %d compactions",
		steps, len(i.order), count("hook: ")-count("hook:   hook"), count("rollback to"), count("live: fenced"),
		count("zombie: fenced"), count("zombie: landed"), count("delete ["), count("upsert ["), count("compact ("))
}

// A rollback of main that takes a source partition's position back while
// a sink runs must fence that sink's next commit of the partition, until
// it restarts: its source is past the position, and rows committed over
// the gap would lose the rolled-back ones. Neither a commit of another
// source partition (which records the table's positions of the others)
// nor a compaction (which reads the table again) may make the rolled-back
// position the sink's new start. Found by TestInterleavings (seed 1, v2).
func TestInterleavedRollbackKeepsFence(t *testing.T) {
	t.Parallel()
	sp1 := sink.SourcePartition{Source: sp0.Source, Partition: 1}
	for _, between := range []string{"commit of another source partition", "compaction"} {
		t.Run(between, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := eventsTable(t, cat, "events")
			s := mustOpen(t, cat, ident, sink.WithoutSnapshotExpiry())
			mustWrite(t, s, sp0, 0, 10)
			mustWrite(t, s, sp1, 0, 10)
			mustCommit(t, s)
			first := currentSnapshot(t, cat, ident)
			mustWrite(t, s, sp0, 10, 20)
			mustCommit(t, s)
			rollback(t, cat, ident, first) // sp0 back at 9; the sink is not told
			switch between {
			case "commit of another source partition":
				mustWrite(t, s, sp1, 10, 12)
				mustCommit(t, s)
			case "compaction":
				if _, err := s.Compact(ctx, must(s.Key("event_day=2026-07-14"))); err != nil {
					t.Fatal(err)
				}
			}
			mustWrite(t, s, sp0, 20, 25) // the source goes on
			if _, err := s.Commit(ctx); !errors.Is(err, sink.ErrFenced) {
				t.Fatalf("commit of %s [20,25) after a rollback to 9 and a %s: %v, want ErrFenced", sp0, between, err)
			}
			pos, err := s.Start(ctx, sp0)
			if err != nil || pos[sp0] != 9 {
				t.Fatalf("Start = %v, %v; want %s at 9", pos, err, sp0)
			}
			mustWrite(t, s, sp0, 10, 25)
			mustCommit(t, s)
			w := sorted(append(want(0, 0, 25), want(1, 0, 10)...))
			if between == "commit of another source partition" {
				w = sorted(append(w, want(1, 10, 12)...))
			}
			if got := ids(t, cat, ident); !slices.Equal(got, w) {
				t.Errorf("ids %v, want %v", got, w)
			}
		})
	}
}

// A zombie that still owns another source partition is fenced on the one
// a new owner committed since it started it, also after a commit of the
// other one (which records the table's positions of both).
func TestInterleavedZombieFencedAfterOtherPartitionCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sp1 := sink.SourcePartition{Source: sp0.Source, Partition: 1}
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	zombie := mustOpen(t, cat, ident, sink.WithoutSnapshotExpiry())
	mustWrite(t, zombie, sp0, 0, 10)
	mustWrite(t, zombie, sp1, 0, 10)
	mustCommit(t, zombie)
	owner := mustOpen(t, catalogtest.Open(t, dir), ident, sink.WithoutSnapshotExpiry())
	if _, err := owner.Start(ctx, sp0); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, owner, sp0, 10, 15)
	mustCommit(t, owner)
	mustWrite(t, zombie, sp1, 10, 12)
	mustCommit(t, zombie)
	mustWrite(t, zombie, sp0, 10, 20)
	if _, err := zombie.Commit(ctx); !errors.Is(err, sink.ErrFenced) {
		t.Fatalf("the zombie's commit of %s: %v, want ErrFenced", sp0, err)
	}
	w := sorted(append(want(0, 0, 15), want(1, 0, 12)...))
	if got := ids(t, cat, ident); !slices.Equal(got, w) {
		t.Errorf("ids %v, want %v", got, w)
	}
}
