package sink

import (
	"fmt"
	"math"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
)

const microsPerDay = int64(24 * time.Hour / time.Microsecond)

// eventClock reads event times and decides lateness: a row is late when
// the end of its window (the table partition its event time falls in,
// when the table is partitioned by a time transform of the event time
// column; else the instant itself) is at or before the watermark, the
// maximum event time of its source partition minus the lateness.
type eventClock struct {
	column   string
	lateness int64               // microseconds
	end      func(t int64) int64 // the exclusive end of t's window
	window   string              // how the window is chosen, for reasons
	// windowEnd is the exclusive end of the window of a partition tuple
	// (a data file's partition values); nil when the table is not
	// partitioned by a time transform of the event time column.
	windowEnd func(values map[int]any) (int64, bool)
}

func newEventClock(tbl *icetable.Table, spec *partition.Spec, column string, lateness time.Duration) (*eventClock, error) {
	f, ok := tbl.Schema().FindFieldByName(column)
	if !ok {
		return nil, fmt.Errorf("%w: event time column %q is not in the table", ErrBadOption, column)
	}
	switch f.Type.(type) {
	case iceberg.TimestampType, iceberg.TimestampTzType, iceberg.DateType, iceberg.TimestampNsType, iceberg.TimestampTzNsType:
	default:
		return nil, fmt.Errorf("%w: event time column %q is %s, not a timestamp or date", ErrBadOption, column, f.Type)
	}
	c := &eventClock{column: column, lateness: lateness.Microseconds(), end: func(t int64) int64 { return t + 1 }, window: "row"}
	_, isDate := f.Type.(iceberg.DateType)
	ps := tbl.Spec()
	for _, pf := range ps.FieldsBySourceID(f.ID) {
		var ordinalEnd func(v int64) int64 // the end of the window numbered v
		switch pf.Transform.(type) {
		case iceberg.HourTransform:
			c.end, c.window = truncEnd(int64(time.Hour/time.Microsecond)), "hour"
			ordinalEnd = func(v int64) int64 { return (v + 1) * int64(time.Hour/time.Microsecond) }
		case iceberg.DayTransform:
			c.end, c.window = truncEnd(microsPerDay), "day"
			ordinalEnd = func(v int64) int64 { return (v + 1) * microsPerDay }
		case iceberg.IdentityTransform:
			if isDate {
				c.end, c.window = truncEnd(microsPerDay), "day"
				ordinalEnd = func(v int64) int64 { return (v + 1) * microsPerDay }
			}
		case iceberg.MonthTransform:
			c.end, c.window = calendarEnd(0, 1), "month"
			ordinalEnd = func(v int64) int64 { return time.Date(1970, time.Month(v+2), 1, 0, 0, 0, 0, time.UTC).UnixMicro() }
		case iceberg.YearTransform:
			c.end, c.window = calendarEnd(1, 0), "year"
			ordinalEnd = func(v int64) int64 { return time.Date(1970+int(v)+1, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro() }
		}
		if ordinalEnd != nil {
			id := pf.FieldID
			c.windowEnd = func(values map[int]any) (int64, bool) {
				v, ok := ordinal(values[id])
				if !ok {
					return 0, false
				}
				return ordinalEnd(v), true
			}
		}
	}
	return c, nil
}

func truncEnd(unit int64) func(int64) int64 {
	return func(t int64) int64 {
		q := t / unit
		if t%unit < 0 {
			q--
		}
		return (q + 1) * unit
	}
}

func calendarEnd(years, months int) func(int64) int64 {
	return func(t int64) int64 {
		u := time.UnixMicro(t).UTC()
		start := time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
		if years > 0 {
			start = time.Date(u.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
		}
		return start.AddDate(years, months, 0).UnixMicro()
	}
}

// late reports whether an event at t is late when the source partition's
// maximum event time is maxSeen, and why.
func (c *eventClock) late(t, maxSeen int64) (string, bool) {
	if maxSeen == math.MinInt64 {
		return "", false
	}
	wm := maxSeen - c.lateness
	if end := c.end(t); end > wm {
		return "", false
	}
	return fmt.Sprintf("%s of event time %s closed: watermark %s (max event time %s minus lateness %s)",
		c.window, time.UnixMicro(t).UTC().Format(time.RFC3339Nano),
		time.UnixMicro(wm).UTC().Format(time.RFC3339Nano), time.UnixMicro(maxSeen).UTC().Format(time.RFC3339Nano),
		time.Duration(c.lateness)*time.Microsecond), true
}

// closed reports whether the window ending at end is closed for a
// maximum event time maxSeen.
func (c *eventClock) closed(end, maxSeen int64) bool {
	return maxSeen != math.MinInt64 && end <= maxSeen-c.lateness
}

// eventTimes are the event times of a batch's rows, in microseconds.
type eventTimes struct {
	vals []int64
	ok   []bool
}

func (e eventTimes) valid(i int) bool { return e.ok[i] }
func (e eventTimes) at(i int) int64   { return e.vals[i] }

// times reads the event time of every row of rec (resolved to the table
// schema).
func (c *eventClock) times(rec arrow.RecordBatch) (eventTimes, error) {
	idx := rec.Schema().FieldIndices(c.column)
	if len(idx) != 1 {
		return eventTimes{}, fmt.Errorf("%w: event time column %q not in the rows", ErrBadInput, c.column)
	}
	col := rec.Column(idx[0])
	n := col.Len()
	out := eventTimes{vals: make([]int64, n), ok: make([]bool, n)}
	switch a := col.(type) {
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		for i := 0; i < n; i++ {
			if a.IsValid(i) {
				out.vals[i], out.ok[i] = toMicros(int64(a.Value(i)), unit), true
			}
		}
	case *array.Date32:
		for i := 0; i < n; i++ {
			if a.IsValid(i) {
				out.vals[i], out.ok[i] = int64(a.Value(i))*microsPerDay, true
			}
		}
	default:
		return eventTimes{}, fmt.Errorf("%w: event time column %q is %s", ErrBadInput, c.column, col.DataType())
	}
	return out, nil
}

func toMicros(v int64, unit arrow.TimeUnit) int64 {
	switch unit {
	case arrow.Second:
		return v * 1_000_000
	case arrow.Millisecond:
		return v * 1_000
	case arrow.Nanosecond:
		return v / 1_000
	}
	return v
}

// ordinal is a time partition value (days, hours, months or years since
// the epoch) as an integer.
func ordinal(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case int:
		return int64(x), true
	case iceberg.Date:
		return int64(x), true
	}
	return 0, false
}
