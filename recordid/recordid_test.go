package recordid

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"
)

var ns = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://icerun.dev/test-events"))

// batch builds a batch of (order_id, event_type, event_ts) with order ids
// of the given Arrow integer type.
func batch(t testing.TB, idType arrow.DataType, ids []int64, types []string, ts []int64) arrow.RecordBatch {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "order_id", Type: idType},
		{Name: "event_type", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "event_ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for i := range ids {
		switch ib := b.Field(0).(type) {
		case *array.Int64Builder:
			ib.Append(ids[i])
		case *array.Int32Builder:
			ib.Append(int32(ids[i]))
		}
		if types[i] == "<null>" {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(types[i])
		}
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ts[i]))
	}
	return b.NewRecordBatch()
}

func ids(t testing.TB, d *Deriver, rec arrow.RecordBatch) []string {
	t.Helper()
	a, err := d.IDs(rec)
	if err != nil {
		t.Fatalf("IDs: %v", err)
	}
	defer a.Release()
	out := make([]string, a.Len())
	for i := range out {
		out[i] = a.Value(i)
	}
	return out
}

func TestIDIsUUIDv5OfCanonicalBytes(t *testing.T) {
	d, err := New(ns, "order_id", "event_type", "event_ts")
	if err != nil {
		t.Fatal(err)
	}
	rec := batch(t, arrow.PrimitiveTypes.Int64, []int64{42}, []string{"paid"}, []int64{1_700_000_000_000_000})
	defer rec.Release()
	// The canonical bytes, spelled out: the definition of an id.
	name := append([]byte{'i'}, binary.BigEndian.AppendUint64(nil, 42)...)
	name = append(name, 's', 4, 'p', 'a', 'i', 'd')
	name = binary.BigEndian.AppendUint64(append(name, 'T'), 1_700_000_000_000_000*1000)
	want := uuid.NewSHA1(ns, name)
	got := ids(t, d, rec)[0]
	if got != want.String() {
		t.Errorf("IDs(42, paid, ts) = %s, want %s", got, want)
	}
	u, err := d.ID(rec, 0)
	if err != nil || u != want || u.Version() != 5 || u.Variant() != uuid.RFC4122 {
		t.Errorf("ID(42, paid, ts) = %s (v%d, %s), %v, want %s v5 RFC4122", u, u.Version(), u.Variant(), err, want)
	}
}

func TestSameValuesSameID(t *testing.T) {
	d, _ := New(ns, "order_id", "event_type", "event_ts")
	ts := []int64{10, 20, 30}
	a := batch(t, arrow.PrimitiveTypes.Int64, []int64{1, 2, 3}, []string{"created", "paid", "<null>"}, ts)
	defer a.Release()
	b := batch(t, arrow.PrimitiveTypes.Int32, []int64{3, 2, 1}, []string{"<null>", "paid", "created"}, []int64{30, 20, 10})
	defer b.Release()
	ga, gb := ids(t, d, a), ids(t, d, b)
	for i := range ga {
		if ga[i] != gb[len(gb)-1-i] {
			t.Errorf("row %d: int64 id %s, int32 id of the same values %s: want equal", i, ga[i], gb[len(gb)-1-i])
		}
	}
}

func TestDifferentValuesDifferentID(t *testing.T) {
	d, _ := New(ns, "order_id", "event_type", "event_ts")
	cases := []struct {
		name   string
		ids    []int64
		types  []string
		tstamp []int64
	}{
		{"order id", []int64{1, 2}, []string{"paid", "paid"}, []int64{5, 5}},
		{"event type", []int64{1, 1}, []string{"paid", "created"}, []int64{5, 5}},
		{"timestamp", []int64{1, 1}, []string{"paid", "paid"}, []int64{5, 6}},
		{"null vs empty", []int64{1, 1}, []string{"<null>", ""}, []int64{5, 5}},
	}
	for _, c := range cases {
		rec := batch(t, arrow.PrimitiveTypes.Int64, c.ids, c.types, c.tstamp)
		got := ids(t, d, rec)
		rec.Release()
		if got[0] == got[1] {
			t.Errorf("%s: IDs(%v, %v, %v) = two equal ids %s, want different", c.name, c.ids, c.types, c.tstamp, got[0])
		}
	}
}

func TestLengthPrefixSeparatesColumns(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.BinaryTypes.String}, {Name: "b", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"ab", "a"}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"c", "bc"}, nil)
	rec := b.NewRecordBatch()
	defer rec.Release()
	d, _ := New(ns, "a", "b")
	if got := ids(t, d, rec); got[0] == got[1] {
		t.Errorf(`IDs(("ab","c"), ("a","bc")) = %s twice, want different`, got[0])
	}
}

func TestBadColumns(t *testing.T) {
	rec := batch(t, arrow.PrimitiveTypes.Int64, []int64{1}, []string{"x"}, []int64{1})
	defer rec.Release()
	if _, err := New(ns); !errors.Is(err, ErrNoColumn) {
		t.Errorf("New(ns) = %v, want ErrNoColumn", err)
	}
	d, _ := New(ns, "order_id", "nope")
	if _, err := d.IDs(rec); !errors.Is(err, ErrNoColumn) {
		t.Errorf("IDs with column nope = %v, want ErrNoColumn", err)
	}
	lb := array.NewListBuilder(memory.DefaultAllocator, arrow.PrimitiveTypes.Int64)
	defer lb.Release()
	lb.Append(true)
	list := lb.NewArray()
	defer list.Release()
	lrec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "l", Type: list.DataType()}}, nil), []arrow.Array{list}, 1)
	defer lrec.Release()
	d, _ = New(ns, "l")
	if _, err := d.IDs(lrec); !errors.Is(err, ErrUnsupportedType) {
		t.Errorf("IDs of a list column = %v, want ErrUnsupportedType", err)
	}
}

func TestAppendAndReader(t *testing.T) {
	d, _ := New(ns, "order_id", "event_type", "event_ts")
	rec := batch(t, arrow.PrimitiveTypes.Int64, []int64{1, 2}, []string{"a", "b"}, []int64{1, 2})
	defer rec.Release()
	want := ids(t, d, rec)
	out, err := d.Append(rec, "event_id")
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if n := out.NumCols(); n != 4 || out.ColumnName(3) != "event_id" {
		t.Fatalf("Append: %d columns, last %q, want 4, event_id", n, out.ColumnName(3))
	}
	if got := out.Column(3).(*array.String).Value(1); got != want[1] {
		t.Errorf("Append: row 1 id %s, want %s", got, want[1])
	}
	if _, err := d.Append(out, "event_id"); err == nil {
		t.Error("Append of an existing column name = nil error, want one")
	}
	rdr, _ := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec, rec})
	r := d.Reader(rdr, "event_id")
	defer r.Release()
	n := 0
	for r.Next() {
		if got := r.RecordBatch().Column(3).(*array.String).Value(0); got != want[0] {
			t.Errorf("Reader batch %d: id %s, want %s", n, got, want[0])
		}
		n++
	}
	if n != 2 || r.Err() != nil {
		t.Errorf("Reader: %d batches, err %v, want 2, nil", n, r.Err())
	}
}

func TestNoPerRowAllocation(t *testing.T) {
	d, _ := New(ns, "order_id", "event_type", "event_ts")
	rec := batch(t, arrow.PrimitiveTypes.Int64, []int64{1, 2}, []string{"a", "<null>"}, []int64{1, 2})
	defer rec.Release()
	if err := d.enc.Bind(rec); err != nil {
		t.Fatal(err)
	}
	d.text(0) // grow the buffers once
	if n := testing.AllocsPerRun(100, func() { d.text(1); d.text(0) }); n != 0 {
		t.Errorf("allocations per row = %v, want 0", n)
	}
}

func BenchmarkIDs(b *testing.B) {
	d, _ := New(ns, "order_id", "event_type", "event_ts")
	n := 8192
	idv, tv, tsv := make([]int64, n), make([]string, n), make([]int64, n)
	for i := range idv {
		idv[i], tv[i], tsv[i] = int64(i), "paid", int64(i)*1000
	}
	rec := batch(b, arrow.PrimitiveTypes.Int64, idv, tv, tsv)
	defer rec.Release()
	for b.Loop() {
		a, _ := d.IDs(rec)
		a.Release()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}
