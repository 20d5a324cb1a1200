package sink_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// TestInterleavingsUpsert is TestInterleavings (the same actors, hooks
// and schedule: interleave_test.go) on a sink in upsert mode
// (sink.WithUpsert, key id, order seq, a delete when op = "delete"), v2
// and v3. The source messages are changes of six keys k0..k5, the same
// at every delivery of an offset: upserts whose order mostly grows with
// the offset but at times is older than the key's newest, deletes, and
// (within a source partition, two offsets in a row share a version) ties
// of order; the orders of the two source partitions never tie
// (4*version + partition).
//
// The model keeps one row per key (its order and day). A commit of the
// sink that lands applies its changes as ApplyChanges decides: per key
// the greatest order of the commit's new rows (the later offset of a tie)
// against the key's live row and tombstone, the input winning a tie
// (InputWinsTies); a change older than them changes nothing, but deletes
// the live row when the tombstone is newer than it; a winning delete
// deletes the row and must leave a tombstone at least as new.
//
// Users' writes (of k0..k3; k4 and k5 are the stream's alone) meet the
// stream as the code says:
//   - a user's Delete by id removes the key's row of one day and leaves
//     no tombstone: the stream's next change of the key, however old,
//     brings it back (unless the key's tombstone is newer);
//   - a user's Upsert (not a changelog write) replaces the key's row in
//     its day whatever the orders, with an order of its own (4*v+2, near
//     the key's, so the stream's later changes are at times older, at
//     times newer); the stream's next change is compared with that order
//     (and the tombstone). No sink commits in a user's Upsert's hook:
//     Upsert's uniqueness is per partition (see simple).
//
// Tombstones live in their own table (table.TombstoneTable), which a
// rollback of main does not touch: the model keeps them out of the
// snapshots' states, so after a rollback a key's live row may be older
// than its tombstone, and the next change of the key deletes it early
// (as after a zombie's: TestUpsertSinkZombieTombstoneEarly;
// TestUpsertSinkRollbackKeepsTombstones, docs/upserts.md). A commit refused by the
// fence (a zombie's, or the live sink's after a rollback) may leave the
// tombstones of its deletes, which commit first: the model takes the
// tombstone table as it finds it after every commit, provided each
// tombstone is a delete some sink was handed, none was lowered or
// removed (no retention), and each is at least what the model requires.
//
// At the end, after the catch-up, every key no user wrote must be what a
// clean run of the whole source leaves: its change of the greatest order,
// absent when that is a delete.
func TestInterleavingsUpsert(t *testing.T) {
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
	if testing.Short() { // two seeds, v2 and v3
		runs, steps = []run{runs[0], runs[3]}, 20
	}
	if *interleaveSeed != 0 {
		runs = []run{{2, *interleaveSeed}, {3, *interleaveSeed}}
	}
	if *interleaveSteps > 0 {
		steps = *interleaveSteps
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("v%d/seed%d", r.v, r.seed), func(t *testing.T) {
			up := &ivUpsert{seed: r.seed, tombs: map[string]int64{}, need: map[string]int64{},
				allowed: map[string]map[int64]bool{}, touched: map[string]bool{}}
			newInterleaving(t, r.v, r.seed, up).run(steps)
		})
	}
}

var ivChangeSpec = table.ChangeSpec{Key: []string{"id"}, Order: []string{"seq"}, Delete: table.DeleteWhen{Column: "op", Value: "delete"}}

// ivKeys is how many keys the stream changes.
const ivKeys = 6

// ivRow is a key's row in upsert mode: its order and its day.
type ivRow struct {
	order int64
	day   int
}

// ivRange is offsets [from, to) of source partition part.
type ivRange struct {
	part     int
	from, to int64
}

// ivChange is a source message of upsert mode, or a user's row (op
// "user").
type ivChange struct {
	key   string
	order int64
	op    string // "upsert", "delete" or "user"
	day   int
	at    time.Time
}

// ivUpsert is the upsert mode's model beside the table's state (which
// holds the keys' rows and is rolled back with main): the tombstones,
// which are not.
type ivUpsert struct {
	seed    uint64
	tombs   map[string]int64          // the tombstone table as last read
	need    map[string]int64          // the least order each key's tombstone must have
	allowed map[string]map[int64]bool // the orders of the deletes a sink was handed
	touched map[string]bool           // keys a user deleted or upserted
}

// upsertEventsTable is morEventsTable with an op column (the delete
// marker of ivChangeSpec).
func upsertEventsTable(t *testing.T, cat catalog.Catalog, v int) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
		iceberg.NestedField{ID: 4, Name: "op", Type: iceberg.PrimitiveTypes.String},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	return catalogtest.CreateTable(t, cat, fmt.Sprintf("current_v%d", v), sch, spec, iceberg.Properties{
		"format-version": fmt.Sprint(v), "write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read", "write.merge.mode": "merge-on-read",
	})
}

// change is the message at offset off of source partition part: the same
// at every delivery.
func (u *ivUpsert) change(part int, off int64) ivChange {
	h := u.seed*0x9e3779b97f4a7c15 ^ uint64(part)<<40 ^ uint64(off)
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 29
	h *= 0x94d049bb133111eb
	h ^= h >> 32
	version := off + 16
	if (h>>8)%4 == 0 { // older than the offset says
		version -= 1 + int64(h>>12)%8
	}
	version /= 2 // two offsets in a row share a version: ties
	c := ivChange{key: fmt.Sprintf("k%d", h%ivKeys), order: 4*version + int64(part), op: "upsert", day: int(h>>20) % 2}
	if (h>>16)%6 == 0 {
		c.op = "delete"
	}
	c.at = day0.AddDate(0, 0, c.day).Add(12*time.Hour + time.Duration(off)*time.Second)
	return c
}

// written is the batch of offsets [from, to) of part handed to a sink;
// its deletes become tombstones the table may hold.
func (u *ivUpsert) written(part int, from, to int64) (arrow.RecordBatch, []int64) {
	var cs []ivChange
	var offs []int64
	for o := from; o < to; o++ {
		c := u.change(part, o)
		if c.op == "delete" {
			if u.allowed[c.key] == nil {
				u.allowed[c.key] = map[int64]bool{}
			}
			u.allowed[c.key][c.order] = true
		}
		cs, offs = append(cs, c), append(offs, o)
	}
	return changeBatch(cs), offs
}

func changeBatch(cs []ivChange) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "seq", Type: arrow.PrimitiveTypes.Int64},
		{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}},
		{Name: "op", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, c := range cs {
		b.Field(0).(*array.StringBuilder).Append(c.key)
		b.Field(1).(*array.Int64Builder).Append(c.order)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(c.at.UnixMicro()))
		b.Field(3).(*array.StringBuilder).Append(c.op)
	}
	return b.NewRecordBatch()
}

// keyRows is key -> order of every row the table must hold (upsert
// mode).
func (s ivState) keyRows() map[string]int64 {
	out := map[string]int64{}
	for k, r := range s.keys {
		out[k] = r.order
	}
	return out
}

// landed applies a sink commit of the messages of rs, in that order, to
// the model (upsert mode; the append mode's model is the positions).
func (i *interleaving) landed(rs ...ivRange) {
	if i.up == nil {
		return
	}
	i.up.adopt(i)
	win := map[string]ivChange{}
	for _, r := range rs {
		for o := r.from; o < r.to; o++ {
			c := i.up.change(r.part, o)
			if w, ok := win[c.key]; !ok || c.order >= w.order {
				win[c.key] = c
			}
		}
	}
	var did []string
	for _, k := range slices.Sorted(maps.Keys(win)) {
		c := win[k]
		row, live := i.state.keys[k]
		t, tomb := i.up.tombs[k]
		cur := row.order
		if tomb && (!live || t > cur) {
			cur = t
		}
		switch {
		case (live || tomb) && c.order < cur:
			if live && tomb && t > row.order {
				delete(i.state.keys, k)
				did = append(did, fmt.Sprintf("%s@%d stale, row %d deleted by tombstone %d", k, c.order, row.order, t))
			} else {
				did = append(did, fmt.Sprintf("%s@%d stale", k, c.order))
			}
		case c.op == "delete":
			delete(i.state.keys, k)
			i.up.need[k] = max(i.up.need[k], c.order)
			did = append(did, fmt.Sprintf("%s@%d deleted", k, c.order))
		default:
			i.state.keys[k] = ivRow{c.order, c.day}
			did = append(did, fmt.Sprintf("%s@%d", k, c.order))
		}
	}
	i.logf("  applied %v: %s", rs, strings.Join(did, ", "))
}

// fencedTombstones takes the tombstones a refused commit left.
func (i *interleaving) fencedTombstones() {
	if i.up != nil {
		i.up.adopt(i)
	}
}

// adopt reads the tombstone table and takes it as the model's, failing
// the run for a tombstone no sink was handed, or one lowered or removed.
func (u *ivUpsert) adopt(i *interleaving) {
	got := u.read(i)
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(got)) {
		o := got[k]
		prev, had := u.tombs[k]
		switch {
		case had && o < prev:
			bad = append(bad, fmt.Sprintf("tombstone of %s lowered from %d to %d", k, prev, o))
		case !(had && o == prev) && !u.allowed[k][o]:
			bad = append(bad, fmt.Sprintf("tombstone of %s at %d: no sink was handed that delete", k, o))
		}
	}
	for k, o := range u.tombs {
		if _, ok := got[k]; !ok {
			bad = append(bad, fmt.Sprintf("tombstone of %s at %d removed", k, o))
		}
	}
	if len(bad) > 0 {
		i.fatalf("the tombstone table:\n  %s", strings.Join(bad, "\n  "))
	}
	if !maps.Equal(got, u.tombs) {
		i.logf("  tombstones %v", got)
	}
	u.tombs = got
}

// read reads key -> order of the tombstone table.
func (u *ivUpsert) read(i *interleaving) map[string]int64 {
	ident := table.TombstoneTable(i.ident)
	tbl, err := i.cat.LoadTable(i.ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return map[string]int64{}
	}
	if err != nil {
		i.fatalf("load the tombstone table: %v", err)
	}
	out := map[string]int64{}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	for k, orders := range rowsBySeq(i.t, i.cat, ident) {
		if len(orders) != 1 {
			i.fatalf("tombstones of %s: %v, want one", k, orders)
		}
		out[k] = orders[0]
	}
	return out
}

// checkTombstones adopts the tombstone table and reports each key whose
// tombstone is older than a delete the table took.
func (u *ivUpsert) checkTombstones(i *interleaving) []string {
	u.adopt(i)
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(u.need)) {
		if t, ok := u.tombs[k]; !ok || t < u.need[k] {
			bad = append(bad, fmt.Sprintf("tombstone of %s: %d (present: %v), want at least %d", k, t, ok, u.need[k]))
		}
	}
	return bad
}

// checkCleanRun compares every key no user wrote with what a clean run
// of offsets [0, end] of both source partitions leaves.
func (u *ivUpsert) checkCleanRun(i *interleaving, end int64) {
	win := map[string]ivChange{}
	for p := range 2 {
		for o := int64(0); o <= end; o++ {
			c := u.change(p, o)
			if w, ok := win[c.key]; !ok || c.order >= w.order {
				win[c.key] = c
			}
		}
	}
	n := func(sub string) int {
		return len(slices.DeleteFunc(slices.Clone(i.trace), func(l string) bool { return !strings.Contains(l, sub) }))
	}
	i.t.Logf("upsert mode: %d commits applied, %d stale changes, %d rows deleted by a newer tombstone, %d rows a user wrote",
		n("  applied"), n(" stale"), n("deleted by tombstone"), len(u.touched))
	got := rowsBySeq(i.t, i.cat, i.ident)
	var bad []string
	for k := range ivKeys {
		key := fmt.Sprintf("k%d", k)
		c, ok := win[key]
		if u.touched[key] || !ok {
			continue
		}
		switch g := got[key]; {
		case c.op == "delete" && len(g) > 0:
			bad = append(bad, fmt.Sprintf("%s: rows %v, want none (deleted at %d)", key, g, c.order))
		case c.op != "delete" && (len(g) != 1 || g[0] != c.order):
			bad = append(bad, fmt.Sprintf("%s: rows %v, want [%d]", key, g, c.order))
		}
	}
	if len(bad) > 0 {
		i.fatalf("after the catch-up, the keys no user wrote are not a clean run's:\n  %s", strings.Join(bad, "\n  "))
	}
}

// ivUserKeys is how many keys users write (k0, k1, ...): the others are
// the stream's alone, for the clean run's check.
const ivUserKeys = 4

// pickKeys picks up to n distinct keys users write.
func (i *interleaving) pickKeys(n int) []string {
	var keys []string
	for _, k := range i.rng.Perm(ivUserKeys)[:n] {
		keys = append(keys, fmt.Sprintf("k%d", k))
	}
	return keys
}

// deleteKeys deletes some keys of one day by id, merge-on-read: the rows
// of the keys that live in that day go, no tombstone is written.
func (i *interleaving) deleteKeys(hook func()) {
	day := i.rng.IntN(2)
	keys := i.pickKeys(1 + i.rng.IntN(3))
	res := i.userDelete(day, keys, hook)
	n := int64(0)
	for _, k := range keys {
		i.up.touched[k] = true
		if r, ok := i.state.keys[k]; ok && r.day == day {
			delete(i.state.keys, k)
			n++
		}
	}
	if res.DeletedRows != n {
		i.fatalf("delete %v of %s deleted %d rows, want %d", keys, ivKey(day), res.DeletedRows, n)
	}
	i.record()
}

// upsertKeys upserts rows of some keys with a user's Upsert, each in the
// day its row lives in (a key without a row: its own day, k0 day0, k1
// the day after, ...), with an order near the key's (4*v+2: never the
// stream's). Upsert's uniqueness is per partition: two users' upserts,
// one in the other's hook, of a key without a row into two days would
// leave a row in each, as Writer.Upsert documents.
func (i *interleaving) upsertKeys(hook func()) {
	var rows []ivChange
	for _, k := range i.pickKeys(1 + i.rng.IntN(3)) {
		base := 4 * ((max(i.state.pos[0], i.state.pos[1]) + 16) / 2)
		day := int(k[1]-'0') % 2
		if r, ok := i.state.keys[k]; ok {
			base, day = r.order, r.day
		} else if t, ok := i.up.tombs[k]; ok {
			base = t
		}
		order := max(2, 4*(base/4+i.rng.Int64N(7)-3)+2)
		rows = append(rows, ivChange{key: k, order: order, op: "user", day: day,
			at: day0.AddDate(0, 0, day).Add(18*time.Hour + time.Duration(i.step)*time.Second)})
	}
	var desc []string
	for _, r := range rows {
		desc = append(desc, fmt.Sprintf("%s@%d on %s", r.key, r.order, ivKey(r.day)))
	}
	i.logf("upsert [%s]", strings.Join(desc, ", "))
	w, lock := i.writer()
	rec := changeBatch(rows)
	rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		i.fatalf("reader: %v", err)
	}
	defer rr.Release()
	i.armed(lock, hook, func() { _, err = w.Upsert(i.ctx, rr, "id") })
	if err != nil {
		i.fatalf("upsert %v: %v", desc, err)
	}
	for _, r := range rows {
		i.up.touched[r.key] = true
		i.state.keys[r.key] = ivRow{r.order, r.day}
	}
	i.record()
}

// orphans are the data files under the catalog's folder that no snapshot
// of the table, nor of its tombstone table in upsert mode, references.
func (i *interleaving) orphans() []string {
	out := catalogtest.UnreferencedDataFiles(i.t, i.cat, i.ident, i.dir)
	if i.up == nil || len(out) == 0 {
		return out
	}
	ident := table.TombstoneTable(i.ident)
	if _, err := i.cat.LoadTable(i.ctx, ident); err != nil {
		return out
	}
	refs := map[string]bool{}
	for _, p := range catalogtest.Referenced(i.t, i.cat, ident) {
		refs[strings.TrimPrefix(p, "file://")] = true
	}
	return slices.DeleteFunc(out, func(p string) bool { return refs[p] })
}

// A rollback of main takes the rows and the positions back, not the
// tombstones: they live in their own table (table.TombstoneTable), which
// the rollback does not touch. A key the rolled-back commit deleted is
// live again, until a change of it meets the tombstone: a change older
// than the rolled-back delete (here one the source did not hold before)
// is stale and deletes the row. A replay of the same source ends as a
// clean run. The model of TestInterleavingsUpsert keeps tombstones out of
// the snapshots' states for this reason.
func TestUpsertSinkRollbackKeepsTombstones(t *testing.T) {
	t.Parallel()
	for _, m := range upsertModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", m.v, m.mor)
			s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec), sink.WithoutSnapshotExpiry())
			writeEvents(t, s, 0, orderEvent{"a", "created", time.Hour}, orderEvent{"b", "created", time.Hour})
			mustCommit(t, s)
			first := currentSnapshot(t, cat, ident)
			writeEvents(t, s, 2, orderEvent{"a", "deleted", 3 * time.Hour})
			mustCommit(t, s)
			rollback(t, cat, ident, first)
			if got, w := states(t, cat, ident), map[string]string{"a": "created", "b": "created"}; !maps.Equal(got, w) {
				t.Fatalf("table after the rollback = %v, want %v", got, w)
			}
			if got := tombstones(t, cat, ident); got != 1 {
				t.Fatalf("tombstones after the rollback = %d, want 1: the rollback of main leaves them", got)
			}
			pos, err := s.Start(ctx, sp0)
			if err != nil || pos[sp0] != 1 {
				t.Fatalf("Start = %v, %v; want %s at 1", pos, err, sp0)
			}
			// Offset 2 is now a change older than the rolled-back delete.
			writeEvents(t, s, 2, orderEvent{"a", "paid", 2 * time.Hour}, orderEvent{"b", "paid", 2 * time.Hour})
			mustCommit(t, s)
			if got, w := states(t, cat, ident), map[string]string{"b": "paid"}; !maps.Equal(got, w) {
				t.Errorf("table after a change older than the rolled-back delete = %v, want %v: a deleted by its tombstone", got, w)
			}
		})
	}
}

// An upsert commit whose changes are all stale commits only its
// positions, in a commit of its own after the comparison. A rollback of
// main that lands between the two (here in the positions commit's lock)
// takes the newer row the changes were stale against away: the commit
// must compare again on the rolled-back table (the changes win there), not
// record positions past changes the table never took. Found by
// TestInterleavingsUpsert (seed 4, v3: a zombie whose table was rolled back
// to its start in its commit's lock, its changes found Unchanged against
// the live sink's identical commit).
func TestUpsertSinkStaleCommitAfterRollback(t *testing.T) {
	t.Parallel()
	for _, m := range upsertModes {
		t.Run(m.name, func(t *testing.T) {
			ctx := context.Background()
			cat, _ := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", m.v, m.mor)
			lock := &hookLock{}
			s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec), sink.WithoutSnapshotExpiry(), sink.WithCommitLock(lock))
			writeEvents(t, s, 0, orderEvent{"a", "created", time.Hour})
			mustCommit(t, s)
			first := currentSnapshot(t, cat, ident)
			w, err := table.Open(ctx, cat, ident)
			if err != nil {
				t.Fatal(err)
			}
			rec := orderBatch([]orderEvent{{"a", "user", 5 * time.Hour}})
			rr, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Upsert(ctx, rr, "order_id"); err != nil {
				t.Fatal(err)
			}
			rr.Release()
			writeEvents(t, s, 1, orderEvent{"a", "paid", 3 * time.Hour}) // stale against the user's row
			lock.arm(func() { rollback(t, cat, ident, first) })
			_, err = s.Commit(ctx)
			lock.arm(nil)
			got := states(t, cat, ident)
			tbl, lerr := cat.LoadTable(ctx, ident)
			if lerr != nil {
				t.Fatal(lerr)
			}
			pos, perr := sink.Positions(tbl)
			if perr != nil {
				t.Fatal(perr)
			}
			if err != nil || got["a"] != "paid" || pos[sp0] != 1 {
				t.Errorf("commit = %v: table %v, position %d; want nil, a paid at position 1 (compared again on the rolled-back table)", err, got, pos[sp0])
			}
		})
	}
}
