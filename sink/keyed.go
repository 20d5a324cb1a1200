package sink

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
)

// keyIndex is keyed mode's memory: the keys of the table partitions the
// sink appended to (read from the table once per partition), and the keys
// of the pending batch.
type keyIndex struct {
	column  string
	table   map[partition.Key]map[string]struct{} // keys each partition holds
	pending map[partition.Key]map[string]struct{} // keys of the pending batch
}

func newKeyIndex(column string) *keyIndex {
	return &keyIndex{column: column, table: map[partition.Key]map[string]struct{}{}, pending: map[partition.Key]map[string]struct{}{}}
}

// rowKeys are the keys and partitions of a batch's rows.
type rowKeys struct {
	keys   []string
	valid  []bool
	parts  []partition.Key
	rowKey []int
}

// rows reads the key and partition of every row of rec, loading the keys
// of partitions not seen before from the table.
func (k *keyIndex) rows(ctx context.Context, s *Sink, rec arrow.RecordBatch) (rowKeys, error) {
	idx := rec.Schema().FieldIndices(k.column)
	if len(idx) != 1 {
		return rowKeys{}, fmt.Errorf("%w: key column %q not in the rows", ErrBadInput, k.column)
	}
	n := int(rec.NumRows())
	out := rowKeys{keys: make([]string, n), valid: make([]bool, n)}
	switch a := rec.Column(idx[0]).(type) {
	case *array.String:
		for i := 0; i < n; i++ {
			out.keys[i], out.valid[i] = a.Value(i), a.IsValid(i)
		}
	case *array.LargeString:
		for i := 0; i < n; i++ {
			out.keys[i], out.valid[i] = a.Value(i), a.IsValid(i)
		}
	case *array.Binary:
		for i := 0; i < n; i++ {
			out.keys[i], out.valid[i] = string(a.Value(i)), a.IsValid(i)
		}
	case *array.FixedSizeBinary:
		for i := 0; i < n; i++ {
			out.keys[i], out.valid[i] = string(a.Value(i)), a.IsValid(i)
		}
	default:
		return rowKeys{}, fmt.Errorf("%w: key column %q is %s, not a string or binary", ErrBadInput, k.column, a.DataType())
	}
	if s.tbl.Spec().IsUnpartitioned() {
		out.parts, out.rowKey = []partition.Key{{}}, make([]int, n)
	} else {
		var err error
		if out.parts, out.rowKey, err = s.spec.RowKeys(rec); err != nil {
			return rowKeys{}, fmt.Errorf("sink: %s: %w", s.name, err)
		}
	}
	for _, p := range out.parts {
		if _, ok := k.table[p]; ok {
			continue
		}
		held, err := k.load(ctx, s, p)
		if err != nil {
			return rowKeys{}, err
		}
		k.table[p] = held
	}
	return out, nil
}

// load reads the keys partition p of the table holds.
func (k *keyIndex) load(ctx context.Context, s *Sink, p partition.Key) (map[string]struct{}, error) {
	held := map[string]struct{}{}
	if s.tbl.CurrentSnapshot() == nil {
		return held, nil
	}
	var filter iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	if p.IsValid() {
		filter = s.spec.Filter(p)
	}
	scan := s.tbl.Scan(icetable.WithRowFilter(filter), icetable.WithSelectedFields(k.column))
	_, recs, err := scan.ToArrowRecords(ctx)
	if err != nil {
		return nil, fmt.Errorf("sink: %s: read keys: %w", s.name, err)
	}
	for rec, err := range recs {
		if err != nil {
			return nil, fmt.Errorf("sink: %s: read keys: %w", s.name, err)
		}
		rk, err := keysOf(rec, k.column)
		rec.Release()
		if err != nil {
			return nil, err
		}
		for _, key := range rk {
			held[key] = struct{}{}
		}
	}
	return held, nil
}

func keysOf(rec arrow.RecordBatch, column string) ([]string, error) {
	idx := rec.Schema().FieldIndices(column)
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: key column %q not in the table's rows", ErrBadInput, column)
	}
	var out []string
	col := rec.Column(idx[0])
	for i := 0; i < col.Len(); i++ {
		if !col.IsValid(i) {
			continue
		}
		switch a := col.(type) {
		case *array.String:
			out = append(out, a.Value(i))
		case *array.LargeString:
			out = append(out, a.Value(i))
		case *array.Binary:
			out = append(out, string(a.Value(i)))
		case *array.FixedSizeBinary:
			out = append(out, string(a.Value(i)))
		}
	}
	return out, nil
}

// admit reports whether row i is new (and then remembers its key); a row
// without a key is always admitted.
func (k *keyIndex) admit(rk rowKeys, i int) bool {
	if !rk.valid[i] {
		return true
	}
	p, key := rk.parts[rk.rowKey[i]], rk.keys[i]
	if _, dup := k.table[p][key]; dup {
		return false
	}
	if _, dup := k.pending[p][key]; dup {
		return false
	}
	if k.pending[p] == nil {
		k.pending[p] = map[string]struct{}{}
	}
	k.pending[p][key] = struct{}{}
	return true
}

// commitPending moves the pending keys to the table's, once committed.
func (k *keyIndex) commitPending() {
	for p, keys := range k.pending {
		if k.table[p] == nil {
			k.table[p] = map[string]struct{}{}
		}
		for key := range keys {
			k.table[p][key] = struct{}{}
		}
	}
	k.pending = map[partition.Key]map[string]struct{}{}
}

func (k *keyIndex) resetPending() { k.pending = map[partition.Key]map[string]struct{}{} }

// forget drops what was read of the table: it is read again when needed.
func (k *keyIndex) forget() { k.table = map[partition.Key]map[string]struct{}{} }

// close drops the keys of partition p (closed: no row goes there any more).
func (k *keyIndex) close(p partition.Key) { delete(k.table, p) }
