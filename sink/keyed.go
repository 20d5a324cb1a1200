package sink

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
)

// keyIndex is keyed mode's memory: the keys of the table partitions the
// sink appended to (read from the table once per partition, then from the
// data files other writers add), and the keys of the pending batch. A key
// is the encoding of a row's key columns (see encodeKeys); the key columns
// hold every partition source column (checkKeyColumns), so a key belongs
// to one partition and the per-partition sets hold each key once.
type keyIndex struct {
	columns []string
	table   map[partition.Key]*keySet             // keys each partition holds
	pending map[partition.Key]map[string]struct{} // keys of the pending batch
	files   map[partition.Key]map[string]struct{} // data files whose keys table holds
	synced  map[partition.Key]int64               // the snapshot whose files table holds
}

func newKeyIndex(columns []string) *keyIndex {
	k := &keyIndex{columns: columns}
	k.forget()
	k.resetPending()
	return k
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
	keys, valid, err := encodeKeys(rec, k.columns)
	if err != nil {
		return rowKeys{}, fmt.Errorf("sink: %s: %w", s.name, err)
	}
	out := rowKeys{keys: keys, valid: valid}
	n := len(keys)
	if s.tbl.Spec().IsUnpartitioned() {
		out.parts, out.rowKey = []partition.Key{{}}, make([]int, n)
	} else {
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
func (k *keyIndex) load(ctx context.Context, s *Sink, p partition.Key) (*keySet, error) {
	k.table[p], k.files[p], k.synced[p] = &keySet{}, map[string]struct{}{}, noSnapshot
	if err := k.sync(ctx, s, s.tbl, p); err != nil {
		delete(k.table, p)
		return nil, err
	}
	return k.table[p], nil
}

const noSnapshot = -1

func currentID(tbl *icetable.Table) int64 {
	if snap := tbl.CurrentSnapshot(); snap != nil {
		return snap.SnapshotID
	}
	return noSnapshot
}

// sync adds to partition p's keys those of the data files of p in tbl it
// has not read yet: what other writers committed since.
func (k *keyIndex) sync(ctx context.Context, s *Sink, tbl *icetable.Table, p partition.Key) error {
	id := currentID(tbl)
	if id == k.synced[p] || id == noSnapshot {
		k.synced[p] = id
		return nil
	}
	var filter iceberg.BooleanExpression = iceberg.AlwaysTrue{}
	if p.IsValid() {
		filter = s.spec.Filter(p)
	}
	scan := tbl.Scan(icetable.WithRowFilter(filter), icetable.WithSelectedFields(k.columns...))
	planned, err := scan.PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("sink: %s: read keys: %w", s.name, err)
	}
	var tasks []icetable.FileScanTask
	for _, t := range planned {
		if _, seen := k.files[p][t.File.FilePath()]; !seen {
			tasks = append(tasks, t)
		}
	}
	if len(tasks) > 0 {
		_, recs, err := scan.ReadTasks(ctx, tasks)
		if err != nil {
			return fmt.Errorf("sink: %s: read keys: %w", s.name, err)
		}
		for rec, err := range recs {
			if err != nil {
				return fmt.Errorf("sink: %s: read keys: %w", s.name, err)
			}
			rk, valid, err := encodeKeys(rec, k.columns)
			rec.Release()
			if err != nil {
				return fmt.Errorf("sink: %s: read keys: %w", s.name, err)
			}
			for i, key := range rk {
				if valid[i] {
					k.table[p].add(key)
				}
			}
		}
		for _, t := range tasks {
			k.files[p][t.File.FilePath()] = struct{}{}
		}
	}
	k.synced[p] = id
	return nil
}

// checkCommitted brings the keys of the pending batch's partitions up to
// tbl, the table state a commit is planned on, and fails with
// ErrKeyCommitted when another writer committed one of the pending keys
// since they were admitted.
func (k *keyIndex) checkCommitted(ctx context.Context, s *Sink, tbl *icetable.Table) error {
	for p, keys := range k.pending {
		if _, loaded := k.table[p]; !loaded {
			if _, err := k.load(ctx, s, p); err != nil {
				return err
			}
		}
		if err := k.sync(ctx, s, tbl, p); err != nil {
			return err
		}
		for key := range keys {
			if k.table[p].has(key) {
				return fmt.Errorf("%w: key %s in partition %s of %s", ErrKeyCommitted, keyText(k.columns, key), p, s.name)
			}
		}
	}
	return nil
}

// admit reports whether row i is new (and then remembers its key); a row
// without a key is always admitted.
func (k *keyIndex) admit(rk rowKeys, i int) bool {
	if !rk.valid[i] {
		return true
	}
	p, key := rk.parts[rk.rowKey[i]], rk.keys[i]
	if k.table[p].has(key) {
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

// commitPending moves the pending keys to the table's once committed in
// snapshot id, whose parent is the state checkCommitted synced them to;
// files are the data files the commit added.
func (k *keyIndex) commitPending(s *Sink, files []iceberg.DataFile, id int64) {
	for p, keys := range k.pending {
		if k.table[p] == nil {
			continue // forgotten: read again when needed
		}
		for key := range keys {
			k.table[p].add(key)
		}
		k.synced[p] = id
	}
	for _, f := range files {
		p := partition.Key{}
		if !s.tbl.Spec().IsUnpartitioned() {
			fk, err := s.spec.KeyFromValues(f.Partition())
			if err != nil {
				continue
			}
			p = fk
		}
		if k.files[p] != nil {
			k.files[p][f.FilePath()] = struct{}{}
		}
	}
	k.resetPending()
}

func (k *keyIndex) resetPending() { k.pending = map[partition.Key]map[string]struct{}{} }

// forget drops what was read of the table: it is read again when needed.
func (k *keyIndex) forget() {
	k.table = map[partition.Key]*keySet{}
	k.files = map[partition.Key]map[string]struct{}{}
	k.synced = map[partition.Key]int64{}
}

// close drops the keys of partition p (closed: no row goes there any more).
func (k *keyIndex) close(p partition.Key) {
	delete(k.table, p)
	delete(k.files, p)
	delete(k.synced, p)
}
