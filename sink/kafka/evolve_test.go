package kafka

import (
	"context"
	"encoding/binary"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
)

// A poll mixing two writer schemas that add the same struct column, one
// with a field more: the consumer adds the column, then the field the
// records decoded for the new schema still report, before writing them;
// no value is dropped.
func TestConsumerEvolvesUntilThePollFits(t *testing.T) {
	ctx := context.Background()
	cat, _ := catalogtest.New(t)
	sch := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true})
	ident := catalogtest.CreateTable(t, cat, "events", sch, *iceberg.UnpartitionedSpec, nil)
	s, err := sink.Open(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	w1 := avro.MustParse(`{"type":"record","name":"R","fields":[{"name":"id","type":"string"},
 {"name":"geo","type":{"type":"record","name":"Geo","fields":[{"name":"lat","type":"double"}]}}]}`)
	w2 := avro.MustParse(`{"type":"record","name":"R","fields":[{"name":"id","type":"string"},
 {"name":"geo","type":{"type":"record","name":"Geo","fields":[{"name":"lat","type":"double"},{"name":"alt","type":"double"}]}}]}`)
	recs := []*kgo.Record{
		{Offset: 0, Value: confluent(1, mustAvro(t, w1, map[string]any{"id": "a", "geo": map[string]any{"lat": 1.5}}))},
		{Offset: 1, Value: confluent(2, mustAvro(t, w2, map[string]any{"id": "b", "geo": map[string]any{"lat": 2.5, "alt": 300.0}}))},
	}
	c := &consumer{s: s, log: slog.New(slog.DiscardHandler), cfg: Config{Topic: "events", Format: decode.AvroConfluent(map[int32]avro.Schema{1: w1, 2: w2}), Evolve: true}}
	if err := c.write(ctx, c.cfg.Topic, 0, recs); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(columnByID(t, s.Table(), "geo"), " "), `{"alt":null,"lat":1.5} {"alt":300,"lat":2.5}`; got != want {
		t.Errorf("geo = %s, want %s", got, want)
	}
}

func mustAvro(t testing.TB, sch avro.Schema, v any) []byte {
	t.Helper()
	b, err := avro.Marshal(sch, v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// confluent is datum in the Confluent wire format with schema id.
func confluent(id uint32, datum []byte) []byte {
	out := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(out[1:], id)
	return append(out, datum...)
}

// columnByID reads column name of every row, ordered by id. (It reads id
// too: iceberg-go v0.7.0 fails a scan that selects only a column older
// data files lack, "no leaf column readers matched col indices".)
func columnByID(t *testing.T, tbl *icetable.Table, name string) []string {
	t.Helper()
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", name)).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for r, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(r.NumRows()); i++ {
			byID[r.Column(0).ValueStr(i)] = r.Column(1).ValueStr(i)
		}
		r.Release()
	}
	ids := slices.Sorted(maps.Keys(byID))
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = byID[id]
	}
	return out
}
