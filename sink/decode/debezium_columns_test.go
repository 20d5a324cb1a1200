package decode

import (
	"encoding/json"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// A table that declares _cdc_op, _cdc_lsn and _cdc_ts_ms gets each
// event's op and source position in them, deletes included, so that a
// change-log write can order and delete by table columns; the image's
// columns are decoded as without them.
func TestDebeziumColumns(t *testing.T) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "order_id", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 2, Name: "status", Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 3, Name: DebeziumOpColumn, Type: iceberg.PrimitiveTypes.String},
		iceberg.NestedField{ID: 4, Name: DebeziumLSNColumn, Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 5, Name: DebeziumTsColumn, Type: iceberg.PrimitiveTypes.Int64},
	)
	sc, err := icetable.SchemaToArrowSchema(sch, nil, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"schema", "payload"} {
		t.Run(dir, func(t *testing.T) {
			values := dbzCaptured(t, dir)
			d := dbzDecode(t, sc, false, values)
			if len(d.Bad) != 0 || int(d.Rows.NumRows()) != len(values)-len(d.Skipped) {
				t.Fatalf("bad %+v, %d rows for %d values, %d skipped", d.Bad, d.Rows.NumRows(), len(values), len(d.Skipped))
			}
			col := func(name string) arrow.Array {
				i := sc.FieldIndices(name)
				if len(i) != 1 {
					t.Fatalf("no column %s", name)
				}
				return d.Rows.Column(i[0])
			}
			ops := col(DebeziumOpColumn).(*array.String)
			lsns := col(DebeziumLSNColumn).(*array.Int64)
			tss := col(DebeziumTsColumn).(*array.Int64)
			ids := col("order_id").(*array.Int64)
			row := 0
			for i, v := range values {
				if v == nil {
					continue
				}
				op, id := dbzOpID(t, v)
				lsn, ts := dbzSource(t, v)
				if ops.Value(row) != op || lsns.Value(row) != lsn || tss.Value(row) != ts || ids.Value(row) != id {
					t.Errorf("value %d: row (%d, %q, %d, %d), want (%d, %q, %d, %d)", i,
						ids.Value(row), ops.Value(row), lsns.Value(row), tss.Value(row), id, op, lsn, ts)
				}
				if (op == DebeziumDelete) != (d.Changes[row].Op == Delete) {
					t.Errorf("value %d: op column %q, change %s", i, op, d.Changes[row].Op)
				}
				row++
			}
		})
	}
}

// dbzOpID is the op of an envelope and the order_id of its image.
func dbzOpID(t testing.TB, v []byte) (string, int64) {
	t.Helper()
	type image struct {
		OrderID int64 `json:"order_id"`
	}
	type payload struct {
		Op     string `json:"op"`
		Before *image `json:"before"`
		After  *image `json:"after"`
	}
	var m struct {
		Payload *payload `json:"payload"`
		payload
	}
	if err := json.Unmarshal(v, &m); err != nil {
		t.Fatal(err)
	}
	p := m.payload
	if m.Payload != nil {
		p = *m.Payload
	}
	img := p.After
	if p.Op == DebeziumDelete {
		img = p.Before
	}
	return p.Op, img.OrderID
}
