package table_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/google/uuid"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/table"
)

// foreignRows builds n rows of the table's current schema, one per id in
// ids: every column's value is a function of the row's id, except the
// column "val", which also holds variant, so that a later write of the same
// ids changes the rows but none of their partitions.
func foreignRows(sch *arrow.Schema, ids []int64, variant int) (arrow.RecordBatch, error) {
	b := array.NewRecordBuilder(memory.DefaultAllocator, sch)
	defer b.Release()
	for _, id := range ids {
		for c, f := range sch.Fields() {
			v := id
			if f.Name == "val" {
				v = id*10 + int64(variant)
			}
			if err := appendValue(b.Field(c), f.Type, v, 0); err != nil {
				return nil, fmt.Errorf("column %s: %w", f.Name, err)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

var foreignEpoch = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)

// appendValue appends a value derived from v to b.
func appendValue(b array.Builder, dt arrow.DataType, v int64, depth int) error {
	switch b := b.(type) {
	case *array.BooleanBuilder:
		b.Append(v%2 == 0)
	case *array.Int32Builder:
		b.Append(int32(v % 3))
	case *array.Int64Builder:
		b.Append(v)
	case *array.Float32Builder:
		b.Append(float32(v) / 2)
	case *array.Float64Builder:
		b.Append(float64(v) / 4)
	case *array.Decimal128Builder:
		b.Append(decimal128.FromI64(v * 101))
	case *array.StringBuilder:
		b.Append(fmt.Sprintf("s%d", v))
	case *array.LargeStringBuilder:
		b.Append(fmt.Sprintf("s%d", v))
	case *array.BinaryBuilder:
		b.Append([]byte(fmt.Sprintf("b%d", v)))
	case *array.Date32Builder:
		b.Append(arrow.Date32FromTime(foreignEpoch.AddDate(0, 0, int(v%3)+3*int(v/100%2)))) // ids 100-199 (seedForeign's) in days of their own
	case *array.Time64Builder:
		b.Append(arrow.Time64(v * int64(time.Minute/time.Microsecond)))
	case *array.TimestampBuilder:
		unit := dt.(*arrow.TimestampType).Unit
		ts, _ := arrow.TimestampFromTime(foreignEpoch.Add(time.Duration(v%5)*7*time.Hour), unit)
		b.Append(ts)
	case *array.FixedSizeBinaryBuilder:
		w := dt.(*arrow.FixedSizeBinaryType).ByteWidth
		out := make([]byte, w)
		out[w-1] = byte(v)
		b.Append(out)
	case *extensions.UUIDBuilder:
		b.Append(uuid.NewSHA1(uuid.Nil, []byte{byte(v)}))
	case *array.ListBuilder:
		b.Append(true)
		elem := dt.(*arrow.ListType).Elem()
		for k := range int64(2) {
			if err := appendValue(b.ValueBuilder(), elem, v+k, depth+1); err != nil {
				return err
			}
		}
	case *array.LargeListBuilder:
		b.Append(true)
		if err := appendValue(b.ValueBuilder(), dt.(*arrow.LargeListType).Elem(), v, depth+1); err != nil {
			return err
		}
	case *array.MapBuilder:
		b.Append(true)
		mt := dt.(*arrow.MapType)
		if err := appendValue(b.KeyBuilder(), mt.KeyType(), v, depth+1); err != nil {
			return err
		}
		if err := appendValue(b.ItemBuilder(), mt.ItemType(), v, depth+1); err != nil {
			return err
		}
	case *array.StructBuilder:
		b.Append(true)
		st := dt.(*arrow.StructType)
		for i, f := range st.Fields() {
			if err := appendValue(b.FieldBuilder(i), f.Type, v, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("no generator for %s", dt)
	}
	return nil
}

// rowLines are the canonical lines of rec's rows (as
// catalogtest.CanonicalScan writes them), by the row's id.
func rowLines(rec arrow.RecordBatch) map[int64]string {
	idCol := rec.Column(rec.Schema().FieldIndices("id")[0]).(*array.Int64)
	out := map[int64]string{}
	for i := 0; i < int(rec.NumRows()); i++ {
		cells := make([]string, rec.NumCols())
		for c, col := range rec.Columns() {
			cells[c] = col.ValueStr(i)
		}
		out[idCol.Value(i)] = strings.Join(cells, "|")
	}
	return out
}

func canonicalOf(model map[int64]string) string {
	var rows []string
	for _, l := range model {
		rows = append(rows, l)
	}
	slices.Sort(rows)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.String()
}

// typedFailures are the errors a write into a table icerun cannot write
// exactly may fail with: each says what is wrong, and nothing was
// committed.
var typedFailures = []error{
	commit.ErrUnsupported, table.ErrBadOption, table.ErrSchemaChange, table.ErrBadUpsertKey,
	partition.ErrBadValue, partition.ErrMalformedKey, partition.ErrUnsupportedSpec, partition.ErrInvalidFieldName, sink.ErrBadOption, sink.ErrBadInput, sink.ErrBadRow,
}

// tableState is what a failed write must leave as it was.
type tableState struct {
	rows      string
	snapshots int
	files     []string
	meta      string
}

func stateOf(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, dir string) tableState {
	tbl, err := cat.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return tableState{
		rows:      string(catalogtest.CanonicalTable(t, tbl)),
		snapshots: len(tbl.Metadata().Snapshots()),
		files:     catalogtest.DataFiles(t, dir),
		meta:      tbl.MetadataLocation(),
	}
}

// foreignOp is one icerun write, given the rows to write (built for the
// table's current schema) and returning the model the table must hold
// after it succeeded.
type foreignOp struct {
	name string
	run  func(ctx context.Context, t *testing.T, env *foreignEnv) (map[int64]string, error)
}

type foreignEnv struct {
	cat   catalog.Catalog
	ident icetable.Identifier
	dir   string
	model map[int64]string // id -> canonical line: what the table holds
	key   partition.Key    // the key the replace and compact use
}

func (e *foreignEnv) rows(ids []int64, variant int) (arrow.RecordBatch, *icetable.Table, error) {
	tbl, err := e.cat.LoadTable(context.Background(), e.ident)
	if err != nil {
		return nil, nil, err
	}
	sch, err := icetable.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, nil, err
	}
	rec, err := foreignRows(sch, ids, variant)
	return rec, tbl, err
}

// keysOf are the partition keys, under the table's current spec, of the
// rows of ids (partition sources depend on the id alone).
func (e *foreignEnv) keysOf(ids []int64) (map[int64]partition.Key, error) {
	rec, tbl, err := e.rows(ids, 0)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	spec, err := partition.NewSpec(tbl.Spec(), tbl.Schema())
	if err != nil {
		return nil, err
	}
	keys, rowKey, err := spec.RowKeys(rec)
	if err != nil {
		return nil, err
	}
	out := map[int64]partition.Key{}
	for i, id := range ids {
		out[id] = keys[rowKey[i]]
	}
	return out, nil
}

// without is model without the rows whose partition is one of keys.
func (e *foreignEnv) without(keys map[partition.Key]bool) (map[int64]string, error) {
	have := slices.Collect(maps.Keys(e.model))
	of, err := e.keysOf(have)
	if err != nil {
		return nil, err
	}
	out := map[int64]string{}
	for id, l := range e.model {
		if !keys[of[id]] {
			out[id] = l
		}
	}
	return out, nil
}

func withModel(model map[int64]string, rec arrow.RecordBatch) map[int64]string {
	out := map[int64]string{}
	for k, v := range model {
		out[k] = v
	}
	for k, v := range rowLines(rec) {
		out[k] = v
	}
	return out
}

func ids(from, to int64) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

var foreignOps = []foreignOp{
	{"seed", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		rec, _, err := e.rows(ids(0, 12), 0)
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		w, err := table.Open(ctx, e.cat, e.ident)
		if err != nil {
			return nil, err
		}
		of, err := e.keysOf(ids(0, 12))
		if err != nil {
			return nil, err
		}
		touched := map[partition.Key]bool{}
		for _, k := range of {
			touched[k] = true
		}
		model, err := e.without(touched)
		if err != nil {
			return nil, err
		}
		rr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		defer rr.Release()
		_, err = w.ReplacePartitions(ctx, rr)
		return withModel(model, rec), err
	}},
	{"replace one partition", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		w, err := table.Open(ctx, e.cat, e.ident)
		if err != nil {
			return nil, err
		}
		of, err := e.keysOf(ids(0, 12))
		if err != nil {
			return nil, err
		}
		e.key = of[0]
		var mine []int64
		for id := range int64(12) {
			if of[id] == e.key {
				mine = append(mine, id)
			}
		}
		rec, _, err := e.rows(mine, 1)
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		model, err := e.without(map[partition.Key]bool{e.key: true})
		if err != nil {
			return nil, err
		}
		rr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
		defer rr.Release()
		_, err = w.ReplacePartition(ctx, e.key, rr)
		return withModel(model, rec), err
	}},
	{"upsert", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		return e.upsert(ctx, []int64{1, 2, 20, 21, 103}, 2)
	}},
	{"merge-on-read upsert", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		return e.upsert(ctx, []int64{2, 3, 22, 102, 105}, 3, table.WithWriteMode(table.MergeOnRead))
	}},
	{"compact", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		w, err := table.Open(ctx, e.cat, e.ident)
		if err != nil {
			return nil, err
		}
		if !e.key.IsValid() {
			return e.model, nil
		}
		_, err = w.Compact(ctx, e.key)
		return e.model, err
	}},
	{"delete", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		w, err := table.Open(ctx, e.cat, e.ident)
		if err != nil {
			return nil, err
		}
		if !e.key.IsValid() {
			return e.model, nil
		}
		of, err := e.keysOf(ids(0, 12))
		if err != nil {
			return nil, err
		}
		var gone []int64
		for id, k := range of {
			if k == e.key && len(gone) < 2 {
				gone = append(gone, id)
			}
		}
		b := array.NewInt64Builder(memory.DefaultAllocator)
		b.AppendValues(gone, nil)
		col := b.NewArray()
		b.Release()
		sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
		rec := array.NewRecordBatch(sc, []arrow.Array{col}, int64(len(gone)))
		col.Release()
		defer rec.Release()
		model := map[int64]string{}
		for id, l := range e.model {
			if !slices.Contains(gone, id) {
				model[id] = l
			}
		}
		rr := recReader(rec)
		defer rr.Release()
		_, err = w.Delete(ctx, e.key, rr, "id")
		return model, err
	}},
	{"delete where", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		w, err := table.Open(ctx, e.cat, e.ident)
		if err != nil {
			return nil, err
		}
		if !e.key.IsValid() {
			return e.model, nil
		}
		model := map[int64]string{}
		for id, l := range e.model {
			if id != 21 && id != 22 {
				model[id] = l
			}
		}
		of, err := e.keysOf([]int64{21, 22})
		if err != nil {
			return nil, err
		}
		for _, id := range []int64{21, 22} { // rows of other partitions stay
			if l, ok := e.model[id]; ok && of[id] != e.key {
				model[id] = l
			}
		}
		_, err = w.DeleteWhere(ctx, e.key, iceberg.NewOr(iceberg.EqualTo(iceberg.Reference("id"), int64(21)), iceberg.EqualTo(iceberg.Reference("id"), int64(22))))
		return model, err
	}},
	{"sink commit", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		rec, _, err := e.rows(ids(30, 33), 4)
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		s, err := sink.Open(ctx, e.cat, e.ident, sink.WithoutSnapshotExpiry())
		if err != nil {
			return nil, err
		}
		defer s.Abort(ctx)
		if err := s.Write(ctx, sink.SourcePartition{Source: "src", Partition: 0}, []int64{0, 1, 2}, rec); err != nil {
			return nil, err
		}
		_, err = s.Commit(ctx)
		return withModel(e.model, rec), err
	}},
	{"keyed sink commit", func(ctx context.Context, t *testing.T, e *foreignEnv) (map[int64]string, error) {
		batch := []int64{40, 41, 101, 103} // 101 and 103: held by the table in some cases, deleted by another engine in others
		rec, _, err := e.rows(batch, 5)
		if err != nil {
			return nil, err
		}
		defer rec.Release()
		s, err := sink.Open(ctx, e.cat, e.ident, sink.WithoutSnapshotExpiry(), sink.WithKey("id"))
		if err != nil {
			return nil, err
		}
		defer s.Abort(ctx)
		if err := s.Write(ctx, sink.SourcePartition{Source: "src", Partition: 1}, []int64{0, 1, 2, 3}, rec); err != nil {
			return nil, err
		}
		_, err = s.Commit(ctx)
		model := withModel(map[int64]string{}, rec)
		for id, l := range e.model {
			model[id] = l // a key the table holds keeps its row: the sink's is a duplicate
		}
		return model, err
	}},
}

// makeForeign calls make, reporting false when it ended in a listed
// refusal.
func makeForeign(t *testing.T, cat catalog.Catalog, make func(t *testing.T, cat catalog.Catalog) icetable.Identifier) (ident icetable.Identifier, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, listed := r.(refusedAsListed); !listed {
				panic(r)
			}
			ok = false
		}
	}()
	return make(t, cat), true
}

// runForeign runs every op of foreignOps on the table make creates and
// checks each one either succeeded with the table holding exactly the
// rows expected, or failed with a typed error leaving the table as it was
// and no files behind.
func runForeign(t *testing.T, make func(t *testing.T, cat catalog.Catalog) icetable.Identifier) {
	ctx := context.Background()
	cat, dir := catalogtest.New(t)
	ident, ok := makeForeign(t, cat, make)
	if !ok {
		return // iceberg-go refused the table, as refusals lists
	}
	requireRefused(t)
	e := &foreignEnv{cat: cat, ident: ident, dir: dir, model: map[int64]string{}}
	for _, line := range strings.Split(string(catalogtest.CanonicalScan(t, cat, ident)), "\n") {
		if id, _, ok := strings.Cut(line, "|"); ok { // rows another engine wrote; id is every schema's first column
			n, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				t.Fatalf("row %q: %v", line, err)
			}
			e.model[n] = line
		}
	}
	for _, op := range foreignOps {
		before := stateOf(t, cat, ident, dir)
		var model map[int64]string
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
				}
			}()
			model, err = op.run(ctx, t, e)
		}()
		if err != nil && strings.HasPrefix(err.Error(), "panic: ") {
			t.Errorf("%s: %v", op.name, err)
			return
		}
		after := stateOf(t, cat, ident, dir)
		if orphans := catalogtest.UnreferencedDataFiles(t, cat, ident, dir); len(orphans) > 0 {
			t.Errorf("%s (err %v): orphan files %v", op.name, err, orphans)
		}
		if err != nil {
			typed := slices.ContainsFunc(typedFailures, func(s error) bool { return errors.Is(err, s) })
			if !typed {
				t.Errorf("%s: untyped error: %v", op.name, err)
			} else {
				t.Logf("%s: refused: %v", op.name, err)
			}
			if after.rows != before.rows || after.snapshots != before.snapshots || after.meta != before.meta || !slices.Equal(after.files, before.files) {
				t.Errorf("%s failed (%v) and changed the table", op.name, err)
			}
			continue
		}
		if want := canonicalOf(model); after.rows != want {
			t.Errorf("%s: the table holds\n%s\nwant\n%s", op.name, after.rows, want)
			return
		}
		e.model = model
	}
}

func recReader(rec arrow.RecordBatch) array.RecordReader {
	rr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	return rr
}

// upsert upserts the rows of ids (version v) by id through a writer opened
// with opts, and returns the model's rows after it.
func (e *foreignEnv) upsert(ctx context.Context, ids []int64, v int, opts ...table.Option) (map[int64]string, error) {
	rec, _, err := e.rows(ids, v)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	w, err := table.Open(ctx, e.cat, e.ident, opts...)
	if err != nil {
		return nil, err
	}
	rr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	defer rr.Release()
	_, err = w.Upsert(ctx, rr, "id")
	return withModel(e.model, rec), err
}
