package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/fingerprint"
)

// ErrQuarantined means the input violated the writer's contract and was
// written to the quarantine table instead of the target. The error text
// names the quarantine table, the partition of it and the reason.
var ErrQuarantined = errors.New("table: input quarantined")

// QuarantineSuffix is appended to the target table's name to name its
// quarantine table.
const QuarantineSuffix = "_quarantine"

// quarantineSchema is the schema of a quarantine table: one row per
// quarantined input row, as JSON, with why, when and by whom.
var quarantineSchema = iceberg.NewSchema(0,
	iceberg.NestedField{ID: 1, Name: "input_id", Type: iceberg.PrimitiveTypes.String, Required: true, Doc: "fingerprint of the quarantined input: the same input always lands in the same partition"},
	iceberg.NestedField{ID: 2, Name: "run_id", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 3, Name: "code_version", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 4, Name: "target_table", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 5, Name: "target_partition", Type: iceberg.PrimitiveTypes.String},
	iceberg.NestedField{ID: 6, Name: "reason", Type: iceberg.PrimitiveTypes.String, Required: true},
	iceberg.NestedField{ID: 7, Name: "quarantined_at", Type: iceberg.PrimitiveTypes.TimestampTz, Required: true},
	iceberg.NestedField{ID: 8, Name: "row_index", Type: iceberg.PrimitiveTypes.Int64, Required: true},
	iceberg.NestedField{ID: 9, Name: "row_json", Type: iceberg.PrimitiveTypes.String, Required: true},
)

var quarantineSpec = iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{1}, FieldID: 1000, Name: "input_id", Transform: iceberg.IdentityTransform{}})

// quarantined collects the rows of a rejected input as JSON.
type quarantined struct {
	rows []string
	sum  fingerprint.Sum
}

func (q *quarantined) add(rec arrow.RecordBatch) error {
	q.sum.Add(rec)
	for i := 0; i < int(rec.NumRows()); i++ {
		row := make(map[string]any, rec.NumCols())
		for c, col := range rec.Columns() {
			row[rec.ColumnName(c)] = col.GetOneForMarshal(i)
		}
		b, err := json.Marshal(row)
		if err != nil {
			return err
		}
		q.rows = append(q.rows, string(b))
	}
	return nil
}

// quarantine writes the rejected rows (first, then the rest of rows) to
// <table>_quarantine, replacing the partition of this input's fingerprint
// so that a rerun of the same input does not duplicate them, and returns
// the error the caller reports.
func (w *Writer) quarantine(ctx context.Context, op, target string, first arrow.RecordBatch, rows array.RecordReader, reason error) error {
	var q quarantined
	if first != nil {
		if err := q.add(first); err != nil {
			return errors.Join(reason, err)
		}
	}
	for rows != nil && rows.Next() {
		if err := q.add(rows.RecordBatch()); err != nil {
			return errors.Join(reason, err)
		}
	}
	ident := append(slices.Clone(catalog.NamespaceFromIdent(w.ident)), catalog.TableNameFromIdent(w.ident)+QuarantineSuffix)
	inputID := q.sum.String()
	if err := w.writeQuarantine(ctx, ident, inputID, target, &q, reason); err != nil {
		return fmt.Errorf("%s: %w: %w (and writing the quarantine table %s failed: %v)", op, ErrQuarantined, reason, strings.Join(ident, "."), err)
	}
	return fmt.Errorf("%s: %w: %d rows written to %s, partition input_id=%s: %w", op, ErrQuarantined, len(q.rows), strings.Join(ident, "."), inputID, reason)
}

func (w *Writer) writeQuarantine(ctx context.Context, ident icetable.Identifier, inputID, target string, q *quarantined, reason error) error {
	spec := quarantineSpec
	if _, err := w.cat.CreateTable(ctx, ident, quarantineSchema, catalog.WithPartitionSpec(&spec)); err != nil && !errors.Is(err, catalog.ErrTableAlreadyExists) {
		return err
	}
	qw, err := Open(ctx, w.cat, ident, WithRunID(w.cfg.runID), WithCodeVersion(w.cfg.codeVersion), WithRetry(w.cfg.policy))
	if err != nil {
		return err
	}
	key, err := qw.Key("input_id=" + escapeKeyValue(inputID))
	if err != nil {
		return err
	}
	sc, err := icetable.SchemaToArrowSchema(quarantineSchema, nil, true, false)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	// The one wall-clock read of the write path: it is recorded for people,
	// never used to decide where a row goes.
	now := arrow.Timestamp(time.Now().UnixMicro())
	for i, row := range q.rows {
		b.Field(0).(*array.StringBuilder).Append(inputID)
		b.Field(1).(*array.StringBuilder).Append(w.cfg.runID)
		b.Field(2).(*array.StringBuilder).Append(w.cfg.codeVersion)
		b.Field(3).(*array.StringBuilder).Append(w.name)
		b.Field(4).(*array.StringBuilder).Append(target)
		b.Field(5).(*array.StringBuilder).Append(reason.Error())
		b.Field(6).(*array.TimestampBuilder).Append(now)
		b.Field(7).(*array.Int64Builder).Append(int64(i))
		b.Field(8).(*array.StringBuilder).Append(row)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(sc, []arrow.RecordBatch{rec})
	if err != nil {
		return err
	}
	defer rdr.Release()
	_, err = qw.ReplacePartition(ctx, key, rdr)
	return err
}

// escapeKeyValue escapes the characters partition key text reserves. A
// fingerprint holds only digits, hex and '-', so this is the identity for
// it; it guards the invariant.
func escapeKeyValue(s string) string {
	r := strings.NewReplacer("%", "%25", "/", "%2F", "=", "%3D", ",", "%2C")
	return r.Replace(s)
}
