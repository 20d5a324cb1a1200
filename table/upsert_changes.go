package table

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/recordid"
	"github.com/icerun/icerun/schema"
)

// changes is the input of one upsert, resolved to the table schema and
// reduced to one row per key: the rows that will replace or join the
// rows of each partition the input touches.
//
// The resolved input batches are kept in memory for the whole call (they
// are the change set); the partitions they touch are streamed.
type changes struct {
	batches []arrow.RecordBatch
	parts   map[partition.Key]map[string]*winner // by partition, by key bytes
	owner   map[string]partition.Key             // the partition of every key
}

// winner is the input row that a key resolves to.
type winner struct {
	batch, row int
	hash       uint64
	ord        orderValue
}

type orderValue struct {
	valid bool
	i     int64
	s     string
}

func (a orderValue) compare(b orderValue) int {
	switch {
	case !a.valid || !b.valid:
		return cmp.Compare(boolInt(a.valid), boolInt(b.valid))
	case a.s != "" || b.s != "":
		return strings.Compare(a.s, b.s)
	}
	return cmp.Compare(a.i, b.i)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (c *changes) release() {
	for _, b := range c.batches {
		b.Release()
	}
	c.batches = nil
}

// readChanges reads every input batch, resolves it and resolves duplicate
// keys (see [Writer.Upsert] for the rule).
func readChanges(ctx context.Context, rows array.RecordReader, res *schema.Resolution, spec *partition.Spec, keyColumns []string, order string) (*changes, error) {
	c := &changes{parts: make(map[partition.Key]map[string]*winner), owner: make(map[string]partition.Key)}
	enc, err := recordid.NewEncoder(keyColumns...)
	if err != nil {
		return c, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	var buf []byte
	var hashes []uint64
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		rec, err := res.Apply(ctx, rows.RecordBatch())
		if err != nil {
			return c, err
		}
		bi := len(c.batches)
		c.batches = append(c.batches, rec)
		if err := enc.Bind(rec); err != nil {
			return c, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
		}
		ordOf, err := orderColumn(rec, order)
		if err != nil {
			return c, err
		}
		keys, rowKey, err := spec.RowKeys(rec)
		if err != nil {
			return c, err
		}
		hashes = fingerprint.RowHashes(rec, hashes)
		for row, ki := range rowKey {
			k := keys[ki]
			buf = enc.Append(buf[:0], row)
			if owner, ok := c.owner[string(buf)]; ok && owner != k {
				return c, fmt.Errorf("%w: key %s is in partitions %s and %s of the input", ErrDuplicateKey, keyText(rec, keyColumns, row), owner, k)
			}
			part := c.parts[k]
			if part == nil {
				part = make(map[string]*winner)
				c.parts[k] = part
			}
			cand := &winner{batch: bi, row: row, hash: hashes[row], ord: ordOf(row)}
			prev, ok := part[string(buf)]
			if !ok {
				id := string(buf)
				part[id], c.owner[id] = cand, k
				continue
			}
			if prev.hash == cand.hash { // the same row again: a redelivery
				continue
			}
			switch d := cand.ord.compare(prev.ord); {
			case order != "" && d > 0:
				part[string(buf)] = cand
			case order != "" && d < 0:
			default:
				return c, fmt.Errorf("%w: key %s has different rows in the input%s", ErrDuplicateKey, keyText(rec, keyColumns, row), orderHint(order))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("reading input: %w", err)
	}
	return c, ctx.Err()
}

func orderHint(order string) string {
	if order == "" {
		return " (no WithUpsertOrder column decides between them)"
	}
	return fmt.Sprintf(" with the same %s", order)
}

// keyText prints the key columns of row, for error messages.
func keyText(rec arrow.RecordBatch, keyColumns []string, row int) string {
	parts := make([]string, len(keyColumns))
	for i, name := range keyColumns {
		if idx := rec.Schema().FieldIndices(name); len(idx) == 1 {
			parts[i] = name + "=" + rec.Column(idx[0]).ValueStr(row)
		}
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// orderColumn returns the order value of each row of rec's column name;
// without a name every row has the zero value.
func orderColumn(rec arrow.RecordBatch, name string) (func(int) orderValue, error) {
	if name == "" {
		return func(int) orderValue { return orderValue{} }, nil
	}
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return nil, fmt.Errorf("%w: upsert order column %q is not in the table", ErrBadOption, name)
	}
	col := rec.Column(idx[0])
	var get func(int) orderValue
	switch a := col.(type) {
	case *array.Int32:
		get = func(i int) orderValue { return orderValue{valid: true, i: int64(a.Value(i))} }
	case *array.Int64:
		get = func(i int) orderValue { return orderValue{valid: true, i: a.Value(i)} }
	case *array.Date32:
		get = func(i int) orderValue { return orderValue{valid: true, i: int64(a.Value(i))} }
	case *array.Time64:
		get = func(i int) orderValue { return orderValue{valid: true, i: int64(a.Value(i))} }
	case *array.Timestamp:
		get = func(i int) orderValue { return orderValue{valid: true, i: int64(a.Value(i))} }
	case *array.String:
		get = func(i int) orderValue { return orderValue{valid: true, s: "\x00" + a.Value(i)} }
	default:
		return nil, fmt.Errorf("%w: upsert order column %q has type %s, want an integer, date, time, timestamp or string", ErrBadOption, name, col.DataType())
	}
	return func(i int) orderValue {
		if col.IsNull(i) {
			return orderValue{}
		}
		return get(i)
	}, nil
}
