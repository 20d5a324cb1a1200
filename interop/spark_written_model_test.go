//go:build interop

package interop

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
)

// The Spark-written tables of the spark_written_* tests: Spark creates
//
//	events (id bigint, ts timestamp, data string) PARTITIONED BY (days(ts), bucket(8, id))
//
// and writes it; icerun then replaces partitions. The tests keep the
// table's expected content in an eventModel, applying to it what each
// Spark statement and each icerun call does, and compare every engine's
// read with it.

// eventDay0 is 2026-07-14 in microseconds since the epoch.
var eventDay0 = time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC).UnixMicro()

const dayMicros = int64(24 * time.Hour / time.Microsecond)

// sparkEvent is one row of the Spark-written events table.
type sparkEvent struct {
	ID   int64
	TS   int64 // microseconds since the epoch, UTC
	Data string
}

// eventAt is the event of id on day (0, 1, 2, ... from 2026-07-14), id
// minutes into the day, the SQL expression eventTS computes.
func eventAt(id int64, day int, data string) sparkEvent {
	return sparkEvent{ID: id, TS: eventDay0 + int64(day)*dayMicros + id%1440*60_000_000, Data: data}
}

// eventTS is the Spark SQL expression of eventAt's ts for column id and
// the day expression day.
func eventTS(day string) string {
	return fmt.Sprintf("timestamp_micros(%d + (%s) * %d + (id %% 1440) * 60000000)", eventDay0, day, dayMicros)
}

var bucket8Long = iceberg.BucketTransform{NumBuckets: 8}.Transformer(iceberg.PrimitiveTypes.Int64)

// bucket8 is Iceberg's bucket[8] of a long id.
func bucket8(id int64) int32 { return bucket8Long(id).Val }

// key is ev's partition as icerun's key text.
func (ev sparkEvent) key() string {
	day := time.UnixMicro(ev.TS).UTC().Format(time.DateOnly)
	return fmt.Sprintf("ts_day=%s/id_bucket=%d", day, bucket8(ev.ID))
}

// idsIn returns n ids from from upwards whose bucket is b.
func idsIn(b int32, from int64, n int) []int64 {
	var out []int64
	for id := from; len(out) < n; id++ {
		if bucket8(id) == b {
			out = append(out, id)
		}
	}
	return out
}

// eventModel is the expected content of events, by id.
type eventModel map[int64]sparkEvent

func (m eventModel) put(evs ...sparkEvent) {
	for _, ev := range evs {
		m[ev.ID] = ev
	}
}

// replace makes the partitions of keys hold exactly evs.
func (m eventModel) replace(keys []string, evs ...sparkEvent) {
	for id, ev := range m {
		if slices.Contains(keys, ev.key()) {
			delete(m, id)
		}
	}
	m.put(evs...)
}

// overwrite is a dynamic overwrite: the partitions of evs hold exactly evs.
func (m eventModel) overwrite(evs ...sparkEvent) {
	var keys []string
	for _, ev := range evs {
		keys = append(keys, ev.key())
	}
	m.replace(keys, evs...)
}

func (m eventModel) where(keep func(sparkEvent) bool) []sparkEvent {
	var out []sparkEvent
	for _, id := range slices.Sorted(maps.Keys(m)) {
		if keep(m[id]) {
			out = append(out, m[id])
		}
	}
	return out
}

// keys are the partitions of the model, sorted.
func (m eventModel) keys() []string {
	var out []string
	for _, ev := range m {
		out = append(out, ev.key())
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// rows are evs as the engines report them.
func rows(evs []sparkEvent) []Row {
	out := make([]Row, len(evs))
	for i, ev := range evs {
		out[i] = Row{"id": fmt.Sprintf("i:%d", ev.ID), "ts": fmt.Sprintf("ts:%d", ev.TS), "data": "s:" + ev.Data}
	}
	return out
}

func (m eventModel) rows() []Row { return rows(m.where(func(sparkEvent) bool { return true })) }

var eventFields = []arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "data", Type: arrow.BinaryTypes.String, Nullable: true},
}

// eventReader is evs as icerun's input.
func eventReader(t testing.TB, evs ...sparkEvent) array.RecordReader {
	t.Helper()
	rec := batch(eventFields, len(evs), func(b *array.RecordBuilder, i int) {
		b.Field(0).(*array.Int64Builder).Append(evs[i].ID)
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(evs[i].TS))
		b.Field(2).(*array.StringBuilder).Append(evs[i].Data)
	})
	defer rec.Release()
	return reader(t, rec)
}

// createEvents creates events with Spark, format version v, merge-on-read
// for DELETE, UPDATE and MERGE.
func createEvents(t testing.TB, e *Engines, c *Catalog, v int) string {
	t.Helper()
	name := c.Spark("events")
	e.SparkSQL(t, fmt.Sprintf(`CREATE TABLE %s (id bigint, ts timestamp, data string) USING iceberg
		PARTITIONED BY (days(ts), bucket(8, id))
		TBLPROPERTIES ('format-version'='%d', 'write.delete.mode'='merge-on-read',
			'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')`, name, v))
	return name
}

// deleteFileKeys are the partitions of the live delete files of Spark
// table name, as key text, sorted, each once.
func deleteFileKeys(t testing.TB, e *Engines, name string) []string {
	t.Helper()
	var out []string
	for _, r := range e.SparkSQL(t, "SELECT unix_date(partition.ts_day) AS d, partition.id_bucket AS b FROM "+name+".delete_files") {
		days := r.Int("d")
		out = append(out, fmt.Sprintf("ts_day=%s/id_bucket=%d", time.Unix(days*86400, 0).UTC().Format(time.DateOnly), r.Int("b")))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkEvents compares Spark's and PyIceberg's full scans of events, and
// Spark's and PyIceberg's scans of one day (a filter that prunes
// manifests and files on days(ts)), with m.
func checkEvents(t testing.TB, e *Engines, c *Catalog, m eventModel, what string) {
	t.Helper()
	name := c.Spark("events")
	lo := eventDay0 + dayMicros // day 1
	hi := lo + dayMicros
	dayFilter := fmt.Sprintf("ts >= timestamp_micros(%d) AND ts < timestamp_micros(%d)", lo, hi)
	pyFilter := fmt.Sprintf("ts >= '%s' and ts < '%s'", time.UnixMicro(lo).UTC().Format("2006-01-02T15:04:05+00:00"), time.UnixMicro(hi).UTC().Format("2006-01-02T15:04:05+00:00"))
	res := e.Batch(t, []Request{
		SparkSQL("SELECT id, ts, data FROM " + name),
		PyIcebergScan(c.Name, c.Py("events"), Scan{Columns: []string{"id", "ts", "data"}}),
		SparkSQL("SELECT id, ts, data FROM " + name + " WHERE " + dayFilter),
		PyIcebergScan(c.Name, c.Py("events"), Scan{Filter: pyFilter, Columns: []string{"id", "ts", "data"}}),
		SparkSQL("SELECT count(*) AS n FROM " + name),
	})
	day1 := rows(m.where(func(ev sparkEvent) bool { return ev.TS >= lo && ev.TS < hi }))
	SameRows(t, what+": spark full scan", m.rows(), res[0].Named())
	SameRows(t, what+": pyiceberg full scan", m.rows(), res[1].Named())
	SameRows(t, what+": spark day 1", day1, res[2].Named())
	SameRows(t, what+": pyiceberg day 1", day1, res[3].Named())
	if n := res[4].Named()[0].Int("n"); n != int64(len(m)) {
		t.Errorf("%s: spark count(*) = %d, want %d", what, n, len(m))
	}
}

// keyList is keys as one line for messages.
func keyList(keys []string) string { return strings.Join(keys, " ") }
