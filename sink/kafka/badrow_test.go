package kafka

import (
	"slices"
	"strings"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// Records that decode but hold a row the table cannot hold (a decimal
// beyond its precision, a null in a required nested field, an event time
// no day partition can hold) go to the dead-letter table like records that
// do not decode, and the stream goes on: before, the whole poll failed
// with an untyped error, on every restart (a poison pill).
func TestConsumerRoutesRowsTheTableRefuses(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := valuesTable(t, cat, "orders")
	dead := icetable.Identifier{"db", "orders_dead"}
	recs := []*kgo.Record{
		{Offset: 20, Value: []byte(`{"id": "a", "amount": 1.25, "ts": "2026-07-14T12:00:00Z"}`)},
		{Offset: 21, Value: []byte(`{"id": "b", "amount": 12345678901.23, "ts": "2026-07-14T12:00:00Z"}`)},
		{Offset: 22, Value: []byte(`{"id": "c", "ts": "2026-07-14T12:00:00Z", "who": {"name": "x"}}`)},
		{Offset: 23, Value: []byte(`{"id": "d", "ts": "2026-07-14T12:00:00Z", "who": {}}`)},
		{Offset: 24, Value: []byte(`{"id": "e", "ts": 9000000000000000000}`)},
		{Offset: 25, Value: []byte(`{"id": "f", "amount": -9999999.99, "ts": "2026-07-14T13:00:00Z"}`)},
	}
	dl := checkRouting(t, cat, ident, dead, recs, 21, []string{"a"}, []string{"a", "c", "f"}, []string{"21", "23", "24"})
	reasons := column(t, dl, sink.DeadLetterReason)
	for _, want := range []string{"precision 9", `column "who.name" is null`, "no partition key can hold its value"} {
		if !slices.ContainsFunc(reasons, func(r string) bool { return strings.Contains(r, want) }) {
			t.Errorf("dead-letter reasons = %q, want one with %q", reasons, want)
		}
	}
}
