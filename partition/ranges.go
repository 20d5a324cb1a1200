package partition

import (
	"math/big"

	"github.com/apache/iceberg-go"
)

// sourceSpan returns [lo, hi) of the source values (days for date, else
// micro- or nanoseconds) whose year, month, day or hour is v.
func (f *field) sourceSpan(v any) (lo, hi *big.Int) {
	var (
		a, b int64 // in days, or hours for the hour transform
		unit int64 // source units per day (per hour for hour)
	)
	switch f.tk {
	case transformYear:
		y := 1970 + int(v.(int32))
		a, b = daysFromCivil(y, 1, 1), daysFromCivil(y+1, 1, 1)
	case transformMonth:
		m := int64(v.(int32))
		y, mo := 1970+floorDiv(m, 12), m-12*floorDiv(m, 12)+1
		a, b = daysFromCivil(int(y), int(mo), 1), daysFromCivil(int(y), int(mo)+1, 1)
	case transformDay:
		a = int64(v.(iceberg.Date))
		b = a + 1
	case transformHour:
		a = int64(v.(int32))
		b = a + 1
	}
	switch f.srcType.(type) {
	case iceberg.DateType:
		unit = 1
	case iceberg.TimestampType, iceberg.TimestampTzType:
		unit = usPerDay
		if f.tk == transformHour {
			unit = usPerHour
		}
	default: // nanosecond timestamps
		unit = nsPerDay
		if f.tk == transformHour {
			unit = usPerHour * 1000
		}
	}
	u := big.NewInt(unit)

	return new(big.Int).Mul(big.NewInt(a), u), new(big.Int).Mul(big.NewInt(b), u)
}

// sourceRange is sourceSpan as int64; ok is false when a bound overflows.
func (f *field) sourceRange(v any) (lo, hi int64, ok bool) {
	l, h := f.sourceSpan(v)
	if !l.IsInt64() || !h.IsInt64() {
		return 0, 0, false
	}

	return l.Int64(), h.Int64(), true
}

// clampClosed returns the closed range [lo, hi-1] clipped to [min, max];
// empty is true when nothing is left.
func clampClosed(lo, hi *big.Int, minV, maxV int64) (a, b int64, empty bool) {
	l := new(big.Int).Set(lo)
	h := new(big.Int).Sub(hi, big.NewInt(1))
	if l.Cmp(big.NewInt(minV)) < 0 {
		l.SetInt64(minV)
	}
	if h.Cmp(big.NewInt(maxV)) > 0 {
		h.SetInt64(maxV)
	}
	if l.Cmp(h) > 0 {
		return 0, 0, true
	}

	return l.Int64(), h.Int64(), false
}
