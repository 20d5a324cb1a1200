package sink_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// envelopes reads the topic, key, headers and timestamp of the dead
// letters of ident, as text, by offset.
func envelopes(t *testing.T, cat catalog.Catalog, ident icetable.Identifier) map[int64]string {
	t.Helper()
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	_, recs, err := tbl.Scan().ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for r, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) arrow.Array { return r.Column(r.Schema().FieldIndices(name)[0]) }
		for i := 0; i < int(r.NumRows()); i++ {
			off := col(sink.LateOffset).(*array.Int64).Value(i)
			ts := "<null>"
			if c := col(sink.DeadLetterTimestamp).(*array.Timestamp); c.IsValid(i) {
				ts = time.UnixMicro(int64(c.Value(i))).UTC().Format(time.RFC3339)
			}
			out[off] = fmt.Sprintf("topic=%s key=%s headers=%s time=%s",
				col(sink.DeadLetterTopic).ValueStr(i), col(sink.DeadLetterKey).ValueStr(i), col(sink.DeadLetterHeaders).ValueStr(i), ts)
		}
		r.Release()
	}
	return out
}

// A dead letter keeps the message's topic, key, headers and timestamp; a
// message without them (Reject) has nulls there.
func TestDeadLetterKeepsEnvelope(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	s, err := sink.Open(ctx, cat, ident, sink.WithDeadLetter(deadIdent))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 7, 14, 12, 0, 0, 0, time.UTC)
	m := sink.Message{Topic: "orders", Key: []byte("k1"), Value: []byte("{bad"), Time: at,
		Headers: []sink.Header{{Key: "trace", Value: []byte("t1")}, {Key: "empty"}}}
	if err := s.RejectMessage(ctx, sp0, 3, m, "not JSON"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reject(ctx, sp0, 4, []byte("{bad"), "not JSON"); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	got := envelopes(t, cat, deadIdent)
	w := map[int64]string{
		3: `topic=orders key=azE= headers=[{"key":"trace","value":"dDE="},{"key":"empty","value":null}] time=2026-07-14T12:00:00Z`,
		4: `topic=(null) key=(null) headers=(null) time=<null>`,
	}
	for off, want := range w {
		if got[off] != want {
			t.Errorf("dead letter %d = %s, want %s", off, got[off], want)
		}
	}
}

// A dead-letter table created before the envelope columns existed (six
// columns) gets them added by the first sink that writes to it, and its
// older rows read null in them.
func TestDeadLetterEvolvesOldTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	ident := eventsTable(t, cat, "events")
	old := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: sink.DeadLetterTarget, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: sink.LateSource, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 3, Name: sink.LateSourcePartition, Type: iceberg.PrimitiveTypes.Int32, Required: true},
		iceberg.NestedField{ID: 4, Name: sink.LateOffset, Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 5, Name: sink.DeadLetterReason, Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 6, Name: sink.DeadLetterRaw, Type: iceberg.PrimitiveTypes.Binary},
	)
	if _, err := cat.CreateTable(ctx, deadIdent, old); err != nil {
		t.Fatal(err)
	}
	s, err := sink.Open(ctx, cat, ident, sink.WithDeadLetter(deadIdent))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RejectMessage(ctx, sp0, 7, sink.Message{Topic: "orders", Key: []byte("k"), Value: []byte("x")}, "not JSON"); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, s)
	if got, w := envelopes(t, cat, deadIdent)[7], "topic=orders key=aw== headers=(null) time=<null>"; got != w {
		t.Errorf("dead letter in an evolved table = %s, want %s", got, w)
	}
	if got := deadLetters(t, cat, deadIdent); len(got) != 1 || got[0].raw != "x" {
		t.Errorf("dead letters = %+v, want offset 7 with raw x", got)
	}
}
