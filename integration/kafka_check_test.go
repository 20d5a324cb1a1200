//go:build integration

package integration

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/sink"
)

// chaosSent is a record the producer sent: message seq at a position.
type chaosSent struct {
	seq  int
	part int32
	off  int64
}

// expectChaos decides, as the sinks must, the fate of every record sent:
// per partition in offset order, with event time, a record is late when
// its day ended at or before the partition's maximum event time so far
// minus the lateness (it goes to the side table); every other record is a
// row of the table, once per message in keyed mode (a producer's copies
// are in two partitions).
func expectChaos(sent []chaosSent, keyed, eventTime bool, spacing time.Duration) (main, late []chaosSent) {
	byPart := map[int32][]chaosSent{}
	for _, r := range sent {
		byPart[r.part] = append(byPart[r.part], r)
	}
	for _, recs := range byPart {
		slices.SortFunc(recs, func(a, b chaosSent) int { return cmp.Compare(a.off, b.off) })
		maxSeen := int64(math.MinInt64)
		for _, r := range recs {
			at := chaosEventTime(r.seq, spacing)
			maxSeen = max(maxSeen, at)
			dayEnd := time.UnixMicro(at).UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).UnixMicro()
			if eventTime && dayEnd <= maxSeen-chaosLateness.Microseconds() {
				late = append(late, r)
			} else {
				main = append(main, r)
			}
		}
	}
	if keyed { // one copy of each message (which one depends on the order the sinks commit)
		seen := map[int]bool{}
		main = slices.DeleteFunc(main, func(r chaosSent) bool {
			dup := seen[r.seq]
			seen[r.seq] = true
			return dup
		})
	}
	return main, late
}

// chaosRow is one row of the table or of its side table (part -1 in the
// table: it records no position).
type chaosRow struct {
	seq   int
	part  int32
	off   int64
	wrong bool // its seq or event time is not its id's
}

// key is what the row is compared by: the message, and in the side table
// its position too.
func (r chaosRow) key() string {
	if r.part < 0 {
		return strconv.Itoa(r.seq)
	}
	return fmt.Sprintf("%d@%d:%d", r.seq, r.part, r.off)
}

// chaosDiff is how the rows read differ from the rows expected.
type chaosDiff struct {
	missing, extra, wrong int
	missingTwice          int // missing messages the producer sent twice
}

func (d chaosDiff) none() bool { return d == chaosDiff{} }

func (d chaosDiff) String() string {
	if d.missing > 0 {
		return fmt.Sprintf("%d missing (%d of them produced twice), %d duplicated or unknown, %d with wrong values", d.missing, d.missingTwice, d.extra, d.wrong)
	}
	return fmt.Sprintf("%d missing, %d duplicated or unknown, %d with wrong values", d.missing, d.extra, d.wrong)
}

// diffChaos compares the multisets of rows: want (as records sent) and
// got; twice holds the messages the producer sent twice.
func diffChaos(want []chaosSent, got []chaosRow, twice map[int]bool) chaosDiff {
	var d chaosDiff
	count := map[string]int{}
	withPos := len(got) > 0 && got[0].part >= 0
	for _, r := range got {
		count[r.key()]++
		if r.wrong {
			d.wrong++
		}
	}
	for _, w := range want {
		k := chaosRow{seq: w.seq, part: -1}
		if withPos {
			k.part, k.off = w.part, w.off
		}
		if count[k.key()] > 0 {
			count[k.key()]--
		} else {
			d.missing++
			if twice[w.seq] {
				d.missingTwice++
			}
		}
	}
	for _, n := range count {
		d.extra += n
	}
	return d
}

// readChaosRows reads every row of the table through a catalog of its own.
func readChaosRows(t *testing.T, cc chaosCatalog, ident icetable.Identifier, spacing time.Duration) []chaosRow {
	t.Helper()
	return scanChaos(t, cc, ident, spacing, false)
}

// readLateRows reads every row of the table's side table (none when the
// sinks never created it).
func readLateRows(t *testing.T, cc chaosCatalog, ident icetable.Identifier, spacing time.Duration) []chaosRow {
	t.Helper()
	return scanChaos(t, cc, sink.LateTable(ident), spacing, true)
}

func scanChaos(t *testing.T, cc chaosCatalog, ident icetable.Identifier, spacing time.Duration, side bool) []chaosRow {
	t.Helper()
	ctx := context.Background()
	tbl, err := loadChaosTable(t, cc, ident)
	if side && errors.Is(err, catalog.ErrNoSuchTable) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	cols := []string{"id", "seq", "event_time"}
	if side {
		cols = append(cols, sink.LateSourcePartition, sink.LateOffset)
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields(cols...)).ToArrowRecords(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []chaosRow
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		ids, seqs, times := col("id").(*array.String), col("seq").(*array.Int64), col("event_time").(*array.Timestamp)
		for i := 0; i < ids.Len(); i++ {
			seq, err := strconv.Atoi(strings.TrimPrefix(ids.Value(i), "m"))
			r := chaosRow{seq: seq, part: -1}
			r.wrong = err != nil || int64(seq) != seqs.Value(i) || chaosEventTime(seq, spacing) != int64(times.Value(i))
			if side {
				r.part, r.off = col(sink.LateSourcePartition).(*array.Int32).Value(i), col(sink.LateOffset).(*array.Int64).Value(i)
			}
			out = append(out, r)
		}
		rec.Release()
	}
	return out
}

// filesPerDay is the number of data files of each day partition of the
// table, in day order ("2026-07-14:1 2026-07-15:3 ...").
func filesPerDay(t *testing.T, cc chaosCatalog, ident icetable.Identifier) string {
	t.Helper()
	ctx := context.Background()
	tbl, err := loadChaosTable(t, cc, ident)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, task := range tasks {
		d := reflect.ValueOf(task.File.Partition()[1000]).Int()
		n[time.UnixMicro(0).UTC().AddDate(0, 0, int(d)).Format(time.DateOnly)]++
	}
	var out []string
	for _, day := range slices.Sorted(maps.Keys(n)) {
		out = append(out, fmt.Sprintf("%s:%d", day, n[day]))
	}
	return strings.Join(out, " ")
}

// deadKey is how a dead letter is compared: the record as sent and its
// position (source partition and offset).
func deadKey(raw string, part int32, off int64) string {
	return fmt.Sprintf("%q@%d:%d", raw, part, off)
}

// checkDeadLetters compares the dead-letter table's records
// (sink.DeadLetterRaw with their sink.LateSourcePartition and
// sink.LateOffset) with the bad records sent (by deadKey): each exactly
// once, at its position.
func checkDeadLetters(t *testing.T, cc chaosCatalog, ident icetable.Identifier, bad map[string]bool) chaosDiff {
	t.Helper()
	ctx := context.Background()
	count := map[string]int{}
	tbl, err := loadChaosTable(t, cc, ident)
	if err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatal(err)
	}
	if err == nil && tbl.CurrentSnapshot() != nil {
		_, recs, err := tbl.Scan(icetable.WithSelectedFields(sink.DeadLetterRaw, sink.LateSourcePartition, sink.LateOffset)).ToArrowRecords(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for rec, err := range recs {
			if err != nil {
				t.Fatal(err)
			}
			col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
			parts, offs := col(sink.LateSourcePartition).(*array.Int32), col(sink.LateOffset).(*array.Int64)
			var raw func(i int) string
			switch c := col(sink.DeadLetterRaw).(type) {
			case *array.String:
				raw = c.Value
			case *array.Binary:
				raw = func(i int) string { return string(c.Value(i)) }
			default:
				t.Fatalf("dead-letter column %s is %s", sink.DeadLetterRaw, c.DataType())
			}
			for i := 0; i < int(rec.NumRows()); i++ {
				count[deadKey(raw(i), parts.Value(i), offs.Value(i))]++
			}
			rec.Release()
		}
	}
	var d chaosDiff
	for b := range bad {
		switch n := count[b]; {
		case n == 0:
			d.missing++
		case n > 1:
			d.extra += n - 1
		}
		delete(count, b)
	}
	for _, n := range count {
		d.extra += n
	}
	return d
}

// loadChaosTable loads ident through a catalog opened from cc, which is
// closed when the test ends.
func loadChaosTable(t *testing.T, cc chaosCatalog, ident icetable.Identifier) (*icetable.Table, error) {
	t.Helper()
	ctx := context.Background()
	cat, err := cc.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeCatalog(cat) })
	return cat.LoadTable(ctx, ident)
}
