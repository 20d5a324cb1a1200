package partition

import (
	"errors"
	"math"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// decimalRecord is a batch of the dec column (decimal(9,2)) holding vals.
func decimalRecord(t *testing.T, vals ...decimal128.Num) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrowSchema(t, "dec"))
	defer b.Release()
	b.Field(0).(*array.Decimal128Builder).AppendValues(vals, nil)
	rec := b.NewRecordBatch()
	t.Cleanup(rec.Release)

	return rec
}

// TestBadDecimalValues: a decimal(9,2) source value beyond its precision
// (-2^127, whose truncate[100] panicked inside iceberg-go's transform, and
// 10^9 unscaled) fails RowKeys, Check and Mask with ErrBadValue naming its
// row, under every transform, instead of panicking or making a key.
func TestBadDecimalValues(t *testing.T) {
	good := decimal128.FromI64(150)
	for _, bad := range []decimal128.Num{decimal128.New(math.MinInt64, 0), decimal128.FromI64(1_000_000_000), decimal128.FromI64(-1_000_000_000)} {
		for _, name := range []string{"dec", "dec_trunc"} {
			s := fieldSpec(t, name)
			rec := decimalRecord(t, good, bad)
			if keys, _, err := s.RowKeys(rec); !errors.Is(err, ErrBadValue) {
				t.Errorf("%s: RowKeys(%v) = %v, %v, want ErrBadValue", name, rec.Column(0), keys, err)
			} else if want := "partition: row 1: field " + name + ":"; err.Error()[:len(want)] != want {
				t.Errorf("%s: RowKeys(%v) = %v, want it to name row 1", name, rec.Column(0), err)
			}
			keys, _, err := s.RowKeys(decimalRecord(t, good))
			if err != nil {
				t.Fatalf("%s: RowKeys(1.50) = %v", name, err)
			}
			m, err := s.Matcher(keys[0], rec.Schema())
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Check(rec); !errors.Is(err, ErrBadValue) {
				t.Errorf("%s: Check(%v) = %v, want ErrBadValue", name, rec.Column(0), err)
			}
			if _, err := m.Mask(rec); !errors.Is(err, ErrBadValue) {
				t.Errorf("%s: Mask(%v) = %v, want ErrBadValue", name, rec.Column(0), err)
			}
		}
	}
}
