package table

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/recordid"
	"github.com/icerun/icerun/schema"
)

// change is the input row a key of a changelog write resolves to: the
// greatest order, the last in input order among equal ones.
type change struct {
	hash fingerprint.Hash // of the row, resolved to the table's columns
	ord  orderKey
	part partition.Key // the partition the row belongs to
	del  bool          // the row is a delete
}

// readChangelog reads every input batch of a changelog write, resolves it
// to the table's columns and spills it, one set of staged files per
// partition (as an upsert's input, see changes), and returns each key's
// change and the first key column's values. A key may be in several
// partitions of the input (its partition source column changed): its
// change decides where it goes. Memory: batch buffers plus one entry per
// input key.
func readChangelog(ctx context.Context, tbl *icetable.Table, rows array.RecordReader, res *schema.Resolution, spec *partition.Spec, cs ChangeSpec, cfg config) (*changes, map[string]*change, *keyRange, error) {
	c := &changes{tbl: tbl, keyColumns: cs.Key, order: cs.Order, files: make(map[partition.Key][]iceberg.DataFile)}
	rng := newKeyRange(cs.Key)
	enc, err := recordid.NewEncoder(cs.Key...)
	if err != nil {
		return c, nil, nil, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	c.spill = newStager(ctx, tbl, res.Schema(), cfg)
	win := map[string]*change{}
	safe := make(map[partition.Key]bool)
	var (
		buf    []byte
		hasher fingerprint.Hasher
		hashes []fingerprint.Hash
	)
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return c, nil, nil, err
		}
		rec, err := res.Apply(ctx, rows.RecordBatch())
		if err != nil {
			return c, nil, nil, err
		}
		if err := readChangeBatch(rec, spec, cs, enc, &buf, &hasher, &hashes, win, safe, tbl); err != nil {
			rec.Release()
			return c, nil, nil, err
		}
		rng.add(rec)
		if err := c.spill.add(rec); err != nil {
			return c, nil, nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return c, nil, nil, fmt.Errorf("reading input: %w", err)
	}
	files, err := c.spill.finish()
	if err != nil {
		return c, nil, nil, err
	}
	for _, f := range files {
		k, err := spec.KeyFromValues(f.Partition())
		if err != nil {
			return c, nil, nil, err
		}
		c.files[k] = append(c.files[k], f)
	}
	return c, win, rng, ctx.Err()
}

// readChangeBatch records the changes of rec's rows in win.
func readChangeBatch(rec arrow.RecordBatch, spec *partition.Spec, cs ChangeSpec, enc *recordid.Encoder, buf *[]byte, hasher *fingerprint.Hasher, hashes *[]fingerprint.Hash, win map[string]*change, safe map[partition.Key]bool, tbl *icetable.Table) error {
	if err := enc.Bind(rec); err != nil {
		return fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	ordOf, err := orderColumns(rec, cs.Order)
	if err != nil {
		return err
	}
	isDelete, err := cs.Delete.matcher(rec)
	if err != nil {
		return err
	}
	keys, rowKey, err := spec.RowKeys(rec)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !safe[k] {
			if err := checkPathSafe(tbl, spec, k); err != nil {
				return err
			}
			safe[k] = true
		}
	}
	*hashes = hasher.Hashes(rec, *hashes)
	for row, ki := range rowKey {
		*buf = enc.Append((*buf)[:0], row)
		cand := &change{hash: (*hashes)[row], ord: ordOf(row), part: keys[ki], del: isDelete(row)}
		// The greatest order wins; among equal ones the last in input
		// order, so that a batch never fails on a tie.
		if prev, ok := win[string(*buf)]; !ok || cand.ord.compare(prev.ord) >= 0 {
			win[string(*buf)] = cand
		}
	}
	return nil
}

// matcher returns whether each row of rec is a delete: its Column's value,
// as text (Arrow's ValueStr), is Value. A zero DeleteWhen makes every row
// an upsert.
func (d DeleteWhen) matcher(rec arrow.RecordBatch) (func(int) bool, error) {
	if d.Column == "" {
		return func(int) bool { return false }, nil
	}
	idx := rec.Schema().FieldIndices(d.Column)
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: delete column %q is not in the table", ErrBadChangeSpec, d.Column)
	}
	col := rec.Column(idx[0])
	if s, ok := col.(*array.String); ok {
		return func(row int) bool { return s.IsValid(row) && s.Value(row) == d.Value }, nil
	}
	return func(row int) bool { return col.IsValid(row) && col.ValueStr(row) == d.Value }, nil
}
