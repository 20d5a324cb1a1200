//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// rowDeltaDays is the number of event days the stream of
// TestSinkMeetsRowDeltas covers, rowDeltaPerDay the events of each, and
// rowDeltaMax the row deltas the batch writer commits at most: on a slow
// target (PostgreSQL + S3, v3) an unbounded writer made 379 of them
// against 30 sink commits and ran for four minutes, where 100 race as
// well.
const (
	rowDeltaDays   = 5
	rowDeltaPerDay = 120
	rowDeltaMax    = 100
)

// A stream and a batch writer on one merge-on-read table, racing: a sink
// appends events day after day (compacting each day when the watermark
// closes it, and compacting earlier days at random on top), while a
// table.Writer deletes and upserts random keys the sink committed, with
// merge-on-read row deltas (position deletes on v2, deletion vectors on
// v3); a zombie sink on the same source partition writes rows, compacts
// and commits after the owner moved on. Afterwards the table holds exactly
// the model's rows (no deleted key back, no upserted key twice, no row
// lost), every zombie commit was fenced, and no orphan data file or manifest is
// left.
func TestSinkMeetsRowDeltas(t *testing.T) {
	eachTarget(t, func(t *testing.T, e env) {
		for _, v := range []int{2, 3} {
			t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { sinkMeetsRowDeltas(t, e, v) })
		}
	})
}

// deltaModel is what the table must hold: id -> seq of its live row.
type deltaModel struct {
	mu        sync.Mutex
	live      map[string]int64
	at        map[string]time.Time
	committed []string // ids the sink committed, in order
}

func sinkMeetsRowDeltas(t *testing.T, e env, version int) {
	ctx := context.Background()
	cat := e.catalog(t)
	ident := icetable.Identifier{e.NS, fmt.Sprintf("stream_v%d", version)}
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "seq", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "event_time", Type: iceberg.PrimitiveTypes.Timestamp, Required: true},
	)
	spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{3}, FieldID: 1000, Name: "event_day", Transform: iceberg.DayTransform{}})
	_, err := cat.CreateTable(ctx, ident, sch, catalog.WithPartitionSpec(&spec), catalog.WithProperties(iceberg.Properties{
		"format-version": fmt.Sprint(version), "write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read",
	}))
	require.NoError(t, err)
	policy := commit.Policy{Attempts: 40, MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, Timeout: time.Minute}
	sp := sink.SourcePartition{Source: "kafka:events", Partition: 0}
	day0 := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	event := func(i int64) (string, time.Time) {
		d := i / rowDeltaPerDay
		return fmt.Sprintf("e%04d", i), day0.Add(time.Duration(d)*24*time.Hour + time.Duration(i%rowDeltaPerDay)*time.Minute)
	}
	m := &deltaModel{live: map[string]int64{}, at: map[string]time.Time{}}

	s, err := sink.Open(ctx, cat, ident, sink.WithEventTime("event_time", time.Hour), sink.WithRetry(policy), sink.WithoutSnapshotExpiry())
	require.NoError(t, err)
	done := make(chan struct{})
	var deltas struct{ deletes, upserts, conflicts int }
	var deltaErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the batch writer: merge-on-read deletes and upserts of committed keys
		defer wg.Done()
		w, err := table.Open(ctx, e.catalog(t), ident, table.WithRetry(policy))
		if err != nil {
			deltaErr = err
			return
		}
		rng := rand.New(rand.NewPCG(uint64(version), 7))
		for seq := int64(1_000_000); ; seq++ {
			select {
			case <-done:
				return
			default:
			}
			m.mu.Lock()
			if deltas.deletes+deltas.upserts >= rowDeltaMax {
				m.mu.Unlock()
				return
			}
			if len(m.committed) == 0 {
				m.mu.Unlock()
				time.Sleep(5 * time.Millisecond)
				continue
			}
			id := m.committed[rng.IntN(len(m.committed))]
			at := m.at[id]
			m.mu.Unlock()
			key, err := w.Key("event_day=" + at.Format(time.DateOnly))
			if err != nil {
				deltaErr = err
				return
			}
			del := rng.IntN(2) == 0
			if del {
				_, err = w.Delete(ctx, key, deltaRows([]string{id}, nil, nil), "id")
			} else {
				_, err = w.Upsert(ctx, deltaRows([]string{id}, []int64{seq}, []time.Time{at}), "id")
			}
			switch {
			case errors.Is(err, commit.ErrConflict):
				deltas.conflicts++
				continue
			case err != nil:
				deltaErr = fmt.Errorf("row delta on %s: %w", id, err)
				return
			}
			m.mu.Lock()
			if del {
				delete(m.live, id)
				deltas.deletes++
			} else {
				m.live[id] = seq // an upsert of a deleted key inserts it again
				deltas.upserts++
			}
			m.mu.Unlock()
			time.Sleep(time.Duration(rng.IntN(10)) * time.Millisecond)
		}
	}()

	rng := rand.New(rand.NewPCG(uint64(version), 11))
	total := int64(rowDeltaDays * rowDeltaPerDay)
	var explicit, fenced int
	for off := int64(0); off < total; {
		n := min(int64(10+rng.IntN(20)), total-off)
		ids, seqs, ats := make([]string, n), make([]int64, n), make([]time.Time, n)
		offs := make([]int64, n)
		for i := range n {
			ids[i], ats[i] = event(off + i)
			seqs[i], offs[i] = off+i, off+i
		}
		rec := deltaBatch(ids, seqs, ats)
		require.NoError(t, s.Write(ctx, sp, offs, rec))
		rec.Release()
		_, err := s.Commit(ctx) // also compacts the days the watermark closed, racing the row deltas
		require.NoError(t, err, "sink commit")
		m.mu.Lock() // the model takes the rows once they are committed; only then may they be deleted
		for i := range n {
			m.live[ids[i]], m.at[ids[i]] = seqs[i], ats[i]
			m.committed = append(m.committed, ids[i])
		}
		m.mu.Unlock()
		off += n

		if d := int((off - 1) / rowDeltaPerDay); d > 0 && rng.IntN(3) == 0 { // an earlier day, at random
			key, err := s.Key("event_day=" + day0.AddDate(0, 0, rng.IntN(d)).Format(time.DateOnly))
			require.NoError(t, err)
			if _, err := s.Compact(ctx, key); err != nil && !errors.Is(err, commit.ErrConflict) {
				t.Fatalf("sink compaction: %v", err)
			}
			explicit++
		}
		if rng.IntN(8) == 0 && off+40 <= total { // a zombie: starts, writes, the owner moves on, it compacts and commits
			z, err := sink.Open(ctx, e.catalog(t), ident, sink.WithRetry(policy), sink.WithoutSnapshotExpiry())
			require.NoError(t, err)
			start, err := z.Start(ctx, sp)
			require.NoError(t, err)
			from := start[sp]
			zn := int64(20)
			zids, zseqs, zats, zoffs := make([]string, zn), make([]int64, zn), make([]time.Time, zn), make([]int64, zn)
			for i := range zn {
				zids[i], zats[i] = event(from + 1 + i)
				zseqs[i], zoffs[i] = from+1+i, from+1+i
			}
			zrec := deltaBatch(zids, zseqs, zats)
			require.NoError(t, z.Write(ctx, sp, zoffs, zrec))
			zrec.Release()
			// The owner commits the same offsets first.
			ids, seqs, ats := zids[:10], zseqs[:10], zats[:10]
			rec := deltaBatch(ids, seqs, ats)
			require.NoError(t, s.Write(ctx, sp, zoffs[:10], rec))
			rec.Release()
			_, err = s.Commit(ctx)
			require.NoError(t, err)
			m.mu.Lock()
			for i := range ids {
				m.live[ids[i]], m.at[ids[i]] = seqs[i], ats[i]
				m.committed = append(m.committed, ids[i])
			}
			m.mu.Unlock()
			off += 10
			key, err := z.Key("event_day=" + zats[0].Format(time.DateOnly))
			require.NoError(t, err)
			if _, err := z.Compact(ctx, key); err != nil && !errors.Is(err, commit.ErrConflict) {
				t.Fatalf("zombie compaction: %v", err)
			}
			if _, err := z.Commit(ctx); !errors.Is(err, sink.ErrFenced) {
				t.Errorf("zombie commit after the owner moved on: %v, want ErrFenced", err)
			}
			fenced++
			require.NoError(t, z.Close(ctx))
		}
	}
	time.Sleep(200 * time.Millisecond) // a few more row deltas after the last append
	close(done)
	wg.Wait()
	require.NoError(t, deltaErr)
	require.NoError(t, s.Close(ctx))

	got := deltaScan(t, cat, ident)
	violations := 0
	for id, seqs := range got {
		want, ok := m.live[id]
		if !ok || len(seqs) != 1 || seqs[0] != want {
			violations++
			if violations <= 10 {
				t.Errorf("%s: table holds seq %v, model %d (live %v)", id, seqs, want, ok)
			}
		}
	}
	for id, seq := range m.live {
		if _, ok := got[id]; !ok {
			violations++
			if violations <= 10 {
				t.Errorf("%s (seq %d) lost", id, seq)
			}
		}
	}
	st := s.Stats()
	t.Logf("%s v%d: %d events, %d deletes, %d upserts, %d row-delta conflicts, %d compactions (%d asked), %d zombies fenced, %d violations",
		e.Target, version, total, deltas.deletes, deltas.upserts, deltas.conflicts, st.Compactions, explicit, fenced, violations)
	require.Positive(t, deltas.deletes+deltas.upserts, "no row delta committed: the race was not run")
	require.Positive(t, st.Compactions, "no compaction committed: the race was not run")
	require.Zero(t, violations)
	assertNoOrphanData(t, e, ident) // metadata versions the log dropped may stay; no data file or manifest may
}

// deltaBatch is rows (id, seq, event_time).
func deltaBatch(ids []string, seqs []int64, ats []time.Time) arrow.RecordBatch {
	fields := []arrow.Field{{Name: "id", Type: arrow.BinaryTypes.String}}
	if seqs != nil {
		fields = append(fields, arrow.Field{Name: "seq", Type: arrow.PrimitiveTypes.Int64}, arrow.Field{Name: "event_time", Type: &arrow.TimestampType{Unit: arrow.Microsecond}})
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for i, id := range ids {
		b.Field(0).(*array.StringBuilder).Append(id)
		if seqs != nil {
			b.Field(1).(*array.Int64Builder).Append(seqs[i])
			b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ats[i].UnixMicro()))
		}
	}
	return b.NewRecordBatch()
}

// deltaRows is deltaBatch as a reader.
func deltaRows(ids []string, seqs []int64, ats []time.Time) array.RecordReader {
	rec := deltaBatch(ids, seqs, ats)
	defer rec.Release()
	r, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	return r
}

// deltaScan reads the table as id -> the seq of each of its rows.
func deltaScan(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[string][]int64 {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	out := map[string][]int64{}
	if tbl.CurrentSnapshot() == nil {
		return out
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", "seq")).ToArrowRecords(ctx)
	require.NoError(t, err)
	for rec, err := range recs {
		require.NoError(t, err)
		idc := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.String)
		seqc := rec.Column(rec.Schema().FieldIndices("seq")[0]).(*array.Int64)
		for i := range idc.Len() {
			out[idc.Value(i)] = append(out[idc.Value(i)], seqc.Value(i))
		}
		rec.Release()
	}
	return out
}
