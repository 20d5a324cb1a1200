package sink_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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
)

// A producer's duplicates (the same key at a new offset) are dropped
// within a commit and against the table, also by a restarted sink.
func TestKeyedDedupesProducerDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	open := func() *sink.Sink {
		s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithKey("id", "event_time"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	rec := batch([]msg{{"a", 0, day0}, {"b", 1, day0}, {"a", 2, day0}}) // a again, new offset
	defer rec.Release()
	if err := s.Write(ctx, sp0, []int64{0, 1, 2}, rec); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	rec2 := batch([]msg{{"b", 3, day0}, {"c", 4, day0}})
	defer rec2.Release()
	if err := s.Write(ctx, sp0, []int64{3, 4}, rec2); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if st := s.Stats(); st.Duplicates != 2 {
		t.Errorf("duplicates = %d, want 2", st.Duplicates)
	}
	// A new sink reads the keys from the table.
	s2 := open()
	rec3 := batch([]msg{{"c", 5, day0}, {"d", 6, day0}})
	defer rec3.Release()
	if err := s2.Write(ctx, sp0, []int64{5, 6}, rec3); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s2)
	if got, w := ids(t, cat, ident), []string{"a", "b", "c", "d"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}

// A producer's duplicate sent to another source partition (a new offset
// there) is dropped: within a commit, against the rows the sink
// committed, and against the table after a restart.
func TestKeyedDedupesAcrossSourcePartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	sp1 := sink.SourcePartition{Source: sp0.Source, Partition: 1}
	sp2 := sink.SourcePartition{Source: sp0.Source, Partition: 2}
	s := mustOpen(t, cat, ident, sink.WithKey("id", "event_time"))
	send := func(s *sink.Sink, sp sink.SourcePartition, off int64, id string) {
		t.Helper()
		rec := batch([]msg{{id, off, day0}})
		defer rec.Release()
		if err := s.Write(ctx, sp, []int64{off}, rec); err != nil {
			t.Fatal(err)
		}
	}
	send(s, sp0, 0, "a")
	send(s, sp1, 0, "a") // within the commit
	mustCommit(t, s)
	send(s, sp1, 1, "b")
	send(s, sp0, 1, "b")
	mustCommit(t, s)
	send(s, sp0, 2, "a") // against what the sink committed
	mustCommit(t, s)
	r, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithKey("id", "event_time"))
	if err != nil {
		t.Fatal(err)
	}
	send(r, sp2, 0, "b") // against the table
	send(r, sp2, 1, "c")
	mustCommit(t, r)
	if got, w := ids(t, cat, ident), []string{"a", "b", "c"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
	if d := s.Stats().Duplicates + r.Stats().Duplicates; d != 4 {
		t.Errorf("duplicates = %d, want 4", d)
	}
}

// Two sinks owning two source partitions: a key the other sink committed
// after this one read the table's keys is not committed twice; the
// commit that would repeat it fails with ErrKeyCommitted, and the replay
// from the table's positions drops the duplicate.
func TestKeyedDedupesAcrossSinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	sp1 := sink.SourcePartition{Source: sp0.Source, Partition: 1}
	open := func() *sink.Sink {
		s, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithKey("id", "event_time"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := open(), open()
	send := func(s *sink.Sink, sp sink.SourcePartition, off int64, id string) {
		t.Helper()
		rec := batch([]msg{{id, off, day0}})
		defer rec.Release()
		if err := s.Write(ctx, sp, []int64{off}, rec); err != nil {
			t.Fatal(err)
		}
	}
	send(a, sp0, 0, "x")
	send(b, sp1, 0, "y") // b reads the day's keys now: none
	mustCommit(t, a)
	send(b, sp1, 1, "x") // the producer's duplicate, on b's partition
	_, err := b.Commit(ctx)
	if !errors.Is(err, sink.ErrKeyCommitted) {
		t.Fatalf("commit of a key another sink committed = %v, want ErrKeyCommitted", err)
	}
	if !strings.Contains(err.Error(), `id="x", event_time=`) {
		t.Errorf("error %q does not name the key", err)
	}
	start, err := b.Start(ctx, sp1)
	if err != nil {
		t.Fatal(err)
	}
	for off := start[sp1] + 1; off <= 1; off++ {
		send(b, sp1, off, []string{"y", "x"}[off])
	}
	mustCommit(t, b)
	if got, w := ids(t, cat, ident), []string{"x", "y"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}

// On a partitioned table, Open refuses a key that lacks a partition
// source column (the key would not determine the partition: one id with
// two event days would land twice), naming the column and the table.
func TestKeyedRefusesKeyWithoutPartitionSource(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events") // day(event_time)
	for _, key := range [][]string{{"id"}, {"id", "seq"}} {
		_, err := sink.Open(ctx, cat, ident, sink.WithKey(key...))
		if !errors.Is(err, sink.ErrBadOption) {
			t.Errorf("Open(WithKey(%q)) = %v, want ErrBadOption", key, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "event_time") || !strings.Contains(msg, "events") {
			t.Errorf("Open(WithKey(%q)) = %q, want the missing column event_time and the table named", key, msg)
		}
	}
	if _, err := sink.Open(ctx, cat, ident, sink.WithKey("event_time", "id")); err != nil {
		t.Errorf("Open(WithKey(event_time, id)) = %v, want nil", err)
	}
}

// keyTypesTable creates db.<name>, unpartitioned, with a column of every
// key type, one of a type a key cannot have, a struct and a list.
func keyTypesTable(t *testing.T, cat catalog.Catalog, name string) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "s", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 2, Name: "s2", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: "n", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 4, Name: "i", Type: iceberg.PrimitiveTypes.Int32},
		iceberg.NestedField{ID: 5, Name: "d", Type: iceberg.PrimitiveTypes.Date},
		iceberg.NestedField{ID: 6, Name: "ts", Type: iceberg.PrimitiveTypes.Timestamp},
		iceberg.NestedField{ID: 7, Name: "b", Type: iceberg.PrimitiveTypes.Binary},
		iceberg.NestedField{ID: 8, Name: "f", Type: iceberg.FixedTypeOf(4)},
		iceberg.NestedField{ID: 9, Name: "amount", Type: iceberg.PrimitiveTypes.Float64},
		iceberg.NestedField{ID: 10, Name: "st", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
			{ID: 11, Name: "x", Type: iceberg.PrimitiveTypes.String}}}},
	)
	return catalogtest.CreateTable(t, cat, name, sch, *iceberg.UnpartitionedSpec, nil)
}

// Open refuses key columns it cannot key by, before any message: unknown,
// nested, of a type without a key encoding (double, struct), none, empty
// or repeated; and takes every key type.
func TestKeyedKeyColumnsCheckedAtOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := keyTypesTable(t, cat, "types")
	for _, key := range [][]string{{"nope"}, {"s", "nope"}, {"st.x"}, {"amount"}, {"s", "amount"}, {"st"}, {}, {""}, {"s", "s"}} {
		if _, err := sink.Open(ctx, cat, ident, sink.WithKey(key...)); !errors.Is(err, sink.ErrBadOption) {
			t.Errorf("Open(WithKey(%q)) = %v, want ErrBadOption", key, err)
		}
	}
	for _, key := range [][]string{{"s"}, {"n"}, {"i"}, {"d"}, {"ts"}, {"b"}, {"f"}, {"s", "n", "i", "d", "ts", "b", "f"}} {
		if _, err := sink.Open(ctx, cat, ident, sink.WithKey(key...)); err != nil {
			t.Errorf("Open(WithKey(%q)) = %v, want nil", key, err)
		}
	}
}

// pair is one row of keyTypesTable's s, s2 and n (nil: null).
type pair struct {
	s, s2 *string
	n     *int64
}

func str(v string) *string { return &v }
func num(v int64) *int64   { return &v }

// pairs is rows as an Arrow record of keyTypesTable's s, s2 and n.
func pairs(rows []pair) arrow.RecordBatch {
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "s2", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, r := range rows {
		for j, v := range []*string{r.s, r.s2} {
			if v == nil {
				b.Field(j).AppendNull()
			} else {
				b.Field(j).(*array.StringBuilder).Append(*v)
			}
		}
		if r.n == nil {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(*r.n)
		}
	}
	return b.NewRecordBatch()
}

// Composite keys: two keys whose values concatenate alike are distinct
// (("ab","c") and ("a","bc"), a null and an empty string); the same
// values again are duplicates, within one batch and across commits; a
// row whose key columns are all null has no key and is kept.
func TestKeyedCompositeKeysAreUnambiguous(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := keyTypesTable(t, cat, "types")
	s := mustOpen(t, cat, ident, sink.WithKey("s", "s2", "n"))
	write := func(off int64, rows ...pair) {
		t.Helper()
		rec := pairs(rows)
		defer rec.Release()
		offs := make([]int64, len(rows))
		for i := range offs {
			offs[i] = off + int64(i)
		}
		if err := s.Write(ctx, sp0, offs, rec); err != nil {
			t.Fatal(err)
		}
	}
	write(0,
		pair{str("ab"), str("c"), num(1)},
		pair{str("a"), str("bc"), num(1)},
		pair{str(""), str("x"), num(1)},
		pair{nil, str("x"), num(1)},
		pair{str("a"), str("bc"), num(2)},
		pair{str("ab"), str("c"), num(1)}, // duplicate within the batch
		pair{nil, nil, nil},               // no key
		pair{nil, nil, nil},
	)
	mustCommit(t, s)
	write(8,
		pair{str("a"), str("bc"), num(1)}, // duplicates across commits
		pair{nil, str("x"), num(1)},
		pair{str("abc"), nil, num(1)}, // new
		pair{nil, nil, nil},
	)
	mustCommit(t, s)
	if got, w := s.Stats(), (sink.Stats{Appended: 9, Duplicates: 3}); got.Appended != w.Appended || got.Duplicates != w.Duplicates {
		t.Errorf("appended %d, duplicates %d; want %d, %d", got.Appended, got.Duplicates, w.Appended, w.Duplicates)
	}
}

// Keyed mode on an unpartitioned table with one key column: a duplicate
// is dropped within a batch, across commits and by a new sink.
func TestKeyedUnpartitionedSingleColumn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident := flatEventsTable(t, cat, "flat")
	s := mustOpen(t, cat, ident, sink.WithKey("id"))
	send := func(s *sink.Sink, off int64, ms ...msg) {
		t.Helper()
		rec := batch(ms)
		defer rec.Release()
		offs := make([]int64, len(ms))
		for i := range offs {
			offs[i] = off + int64(i)
		}
		if err := s.Write(ctx, sp0, offs, rec); err != nil {
			t.Fatal(err)
		}
	}
	send(s, 0, msg{"a", 0, day0}, msg{"b", 1, day0}, msg{"a", 2, day0.Add(48 * time.Hour)})
	mustCommit(t, s)
	send(s, 3, msg{"b", 3, day0}, msg{"c", 4, day0})
	mustCommit(t, s)
	r, err := sink.Open(ctx, catalogtest.Open(t, dir), ident, sink.WithKey("id"))
	if err != nil {
		t.Fatal(err)
	}
	send(r, 5, msg{"c", 5, day0}, msg{"d", 6, day0})
	mustCommit(t, r)
	if got, w := ids(t, cat, ident), []string{"a", "b", "c", "d"}; !slices.Equal(got, w) {
		t.Errorf("table ids = %v, want %v", got, w)
	}
}

// flatEventsTable is eventsTable unpartitioned.
func flatEventsTable(t testing.TB, cat catalog.Catalog, name string) icetable.Identifier {
	t.Helper()
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	return catalogtest.CreateTable(t, cat, name, sch, *iceberg.UnpartitionedSpec, nil)
}

// BenchmarkKeyedMemory measures keyed mode's heap (runtime.MemStats
// HeapInuse after a GC) per key held: 1,000,000 keys of 36 characters (a
// UUID's text, as package recordid makes) admitted and committed by a
// sink (bytes/key-admitted), then read from the table by a new sink
// (bytes/key-loaded). Run it alone: go test ./sink -run '^$' -bench
// KeyedMemory -benchtime 1x.
func BenchmarkKeyedMemory(b *testing.B) {
	ctx := context.Background()
	const n, per = 1_000_000, 100_000
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	for range b.N {
		cat, dir := catalogtest.New(b)
		ident := flatEventsTable(b, cat, "events")
		s := mustOpen(b, cat, ident, sink.WithKey("id"), sink.WithCommitRows(10*n))
		before := heap()
		for from := 0; from < n; from += per {
			ms, offs := make([]msg, per), make([]int64, per)
			for i := range ms {
				o := from + i
				ms[i], offs[i] = msg{id: fmt.Sprintf("%08x-0000-5000-8000-%012x", o, o), seq: int64(o), at: day0}, int64(o)
			}
			rec := batch(ms)
			err := s.Write(ctx, sp0, offs, rec)
			rec.Release()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(heap()-before)/n, "bytes/key-admitted")
		runtime.KeepAlive(s)
		r := mustOpen(b, catalogtest.Open(b, dir), ident, sink.WithKey("id"))
		before = heap()
		rec := batch([]msg{{"x", n, day0}}) // reads the table's keys
		err := r.Write(ctx, sp0, []int64{n}, rec)
		rec.Release()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(heap()-before)/n, "bytes/key-loaded")
		runtime.KeepAlive(r)
	}
}
