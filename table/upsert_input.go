package table

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/recordid"
	"github.com/icerun/icerun/schema"
)

// changes is the input of one upsert, resolved to the table schema and
// spilled once to staged Parquet files, one set per partition, so that
// memory stays bounded by one partition's keys plus batch buffers
// whatever the input size. The spill files are never committed; release
// removes them.
type changes struct {
	tbl        *icetable.Table
	spill      *stager
	files      map[partition.Key][]iceberg.DataFile
	keyColumns []string
	order      []string
}

// winner is the input row that a key resolves to. tie holds the key's
// text while two different rows share the greatest order value: an error
// unless a greater one comes.
type winner struct {
	hash fingerprint.Hash
	ord  orderKey
	tie  string
}

// release removes the spill files.
func (c *changes) release() error {
	if c.spill == nil {
		return nil
	}
	files, _ := c.spill.finish()
	return c.spill.remove(files)
}

// keys are the partitions the input touches.
func (c *changes) keys() []partition.Key {
	out := make([]partition.Key, 0, len(c.files))
	for k := range c.files {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b partition.Key) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// readChanges reads every input batch, resolves it and spills it. A key
// found in two partitions of the input fails with ErrDuplicateKey here;
// duplicates within a partition are resolved by [changes.winners].
func readChanges(ctx context.Context, tbl *icetable.Table, rows array.RecordReader, res *schema.Resolution, spec *partition.Spec, keyColumns []string, cfg config) (*changes, error) {
	c := &changes{tbl: tbl, keyColumns: keyColumns, order: cfg.upsertOrder, files: make(map[partition.Key][]iceberg.DataFile)}
	enc, err := recordid.NewEncoder(keyColumns...)
	if err != nil {
		return c, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	c.spill = newStager(ctx, tbl, res.Schema(), cfg)
	owner := make(map[uint64]partition.Key) // hash of the key bytes -> its partition
	safe := make(map[partition.Key]bool)    // partitions whose path was checked
	var buf []byte
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return c, err
		}
		rec, err := res.Apply(ctx, rows.RecordBatch())
		if err != nil {
			return c, err
		}
		if err := enc.Bind(rec); err != nil {
			rec.Release()
			return c, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
		}
		keys, rowKey, err := spec.RowKeys(rec)
		if err != nil {
			rec.Release()
			return c, err
		}
		for _, k := range keys {
			if !safe[k] {
				if err := checkPathSafe(tbl, spec, k); err != nil {
					rec.Release()
					return c, err
				}
				safe[k] = true
			}
		}
		for row, ki := range rowKey {
			k := keys[ki]
			buf = enc.Append(buf[:0], row)
			h := keyHash(buf)
			if prev, ok := owner[h]; ok && prev != k {
				err := fmt.Errorf("%w: key %s is in partitions %s and %s of the input", ErrDuplicateKey, keyText(rec, keyColumns, row), prev, k)
				rec.Release()
				return c, err
			}
			owner[h] = k
		}
		if err := c.spill.add(rec); err != nil {
			return c, err
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("reading input: %w", err)
	}
	files, err := c.spill.finish()
	if err != nil {
		return c, err
	}
	for _, f := range files {
		k, err := spec.KeyFromValues(f.Partition())
		if err != nil {
			return c, err
		}
		c.files[k] = append(c.files[k], f)
	}
	return c, ctx.Err()
}

// keyHash is a 64-bit hash of encoded key bytes.
func keyHash(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// each calls fn with every spilled input batch of partition k, resolved
// to the table layout; fn does not own rec.
func (c *changes) each(ctx context.Context, k partition.Key, fn func(rec arrow.RecordBatch) error) error {
	tasks := make([]icetable.FileScanTask, len(c.files[k]))
	for i, f := range c.files[k] {
		tasks[i] = icetable.FileScanTask{File: f, Length: f.FileSizeBytes()}
	}
	if len(tasks) == 0 {
		return nil
	}
	sc, batches, err := c.tbl.Scan(icetable.WithMaxConcurrency(1), icetable.WithArrowBatchSize(mergeBatchRows)).ReadTasks(ctx, tasks)
	if err != nil {
		return err
	}
	res, err := schema.Resolve(sc, c.tbl.Schema(), c.tbl.NameMapping(), schema.IgnoreUnknown)
	if err != nil {
		return err
	}
	return applyEach(ctx, res, false, batches, fn)
}

// winners reads the spilled input of partition k and resolves duplicate
// keys (see [Writer.Upsert] for the rule, which does not depend on the
// input order): by key bytes, the hash of the row that wins. When rng is
// not nil it gets the first key column's values.
func (c *changes) winners(ctx context.Context, k partition.Key, rng *keyRange) (map[string]fingerprint.Hash, error) {
	win, err := c.resolve(ctx, k, rng)
	if err != nil {
		return nil, err
	}
	out := make(map[string]fingerprint.Hash, len(win))
	for key, w := range win {
		out[key] = w.hash
	}
	return out, nil
}

// resolve is winners, with each winner's order.
func (c *changes) resolve(ctx context.Context, k partition.Key, rng *keyRange) (map[string]winner, error) {
	enc, err := recordid.NewEncoder(c.keyColumns...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	win := make(map[string]winner)
	var buf []byte
	var (
		rows   fingerprint.Hasher
		hashes []fingerprint.Hash
	)
	err = c.each(ctx, k, func(rec arrow.RecordBatch) error {
		if err := enc.Bind(rec); err != nil {
			return fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
		}
		ordOf, err := orderColumns(rec, c.order)
		if err != nil {
			return err
		}
		if rng != nil {
			rng.add(rec)
		}
		hashes = rows.Hashes(rec, hashes)
		for row := range int(rec.NumRows()) {
			buf = enc.Append(buf[:0], row)
			cand := winner{hash: hashes[row], ord: ordOf(row)}
			prev, ok := win[string(buf)]
			switch d := cand.ord.compare(prev.ord); {
			case !ok:
				win[string(buf)] = cand
			case prev.hash == cand.hash: // the same row again: a redelivery
			case d > 0:
				win[string(buf)] = cand
			case d == 0:
				prev.tie = keyText(rec, c.keyColumns, row)
				win[string(buf)] = prev
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var ties []string
	for _, w := range win {
		if w.tie != "" {
			ties = append(ties, w.tie)
		}
	}
	if len(ties) > 0 {
		slices.Sort(ties)
		return nil, fmt.Errorf("%w: key %s has different rows in the input%s", ErrDuplicateKey, ties[0], orderHint(c.order))
	}
	return win, nil
}

func orderHint(order []string) string {
	if len(order) == 0 {
		return " (no WithUpsertOrder column decides between them)"
	}
	return fmt.Sprintf(" with the same %s", strings.Join(order, ", "))
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

// addChanged passes the winning input rows of partition k to add, each
// key once.
func (u *upsert) addChanged(ctx context.Context, k partition.Key, win map[string]fingerprint.Hash, add func(arrow.RecordBatch) error) error {
	return u.chg.pick(ctx, k, win, make(map[string]bool, len(win)), add)
}

// pick passes the spilled input rows of partition k whose key is in want
// with the hash want gives it to add, each key once (emitted: the keys
// passed before, updated).
func (c *changes) pick(ctx context.Context, k partition.Key, want map[string]fingerprint.Hash, emitted map[string]bool, add func(arrow.RecordBatch) error) error {
	enc, err := recordid.NewEncoder(c.keyColumns...)
	if err != nil {
		return err
	}
	var buf []byte
	var (
		rows   fingerprint.Hasher
		hashes []fingerprint.Hash
	)
	return c.each(ctx, k, func(rec arrow.RecordBatch) error {
		if err := enc.Bind(rec); err != nil {
			return fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
		}
		hashes = rows.Hashes(rec, hashes)
		n, kept := int(rec.NumRows()), 0
		mask := make([]bool, n)
		for row := range n {
			buf = enc.Append(buf[:0], row)
			if h, ok := want[string(buf)]; ok && h == hashes[row] && !emitted[string(buf)] {
				emitted[string(buf)] = true
				mask[row] = true
				kept++
			}
		}
		if kept == n {
			rec.Retain()
			return add(rec)
		}
		if kept == 0 {
			return nil
		}
		b := array.NewBooleanBuilder(memory.DefaultAllocator)
		b.AppendValues(mask, nil)
		arr := b.NewBooleanArray()
		b.Release()
		out, err := compute.FilterRecordBatch(ctx, rec, arr, compute.DefaultFilterOptions())
		arr.Release()
		if err != nil {
			return err
		}
		return add(out)
	})
}
