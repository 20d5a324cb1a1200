package kafka

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"
)

// JSON decodes record values that are JSON objects into rows of sc, field
// by field name (timestamps as RFC 3339 text or numbers in sc's unit;
// missing fields are null; fields sc does not name are ignored). Pass the
// table's Arrow schema (table.SchemaToArrowSchema of its schema) so that
// the sink resolves the columns by field id.
func JSON(sc *arrow.Schema) Decoder {
	return func(recs []*kgo.Record) (arrow.RecordBatch, error) {
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		for _, r := range recs {
			if err := b.UnmarshalJSON(bytes.TrimSpace(r.Value)); err != nil {
				return nil, fmt.Errorf("offset %d: %w", r.Offset, err)
			}
		}
		return b.NewRecordBatch(), nil
	}
}
