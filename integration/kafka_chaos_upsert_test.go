//go:build integration

package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/sink"
)

// With ICERUN_KAFKA_MODE=upsert the chaos messages are changes of
// chaosKeys keys: message seq is an upsert or a delete of one key at a
// version, a pure function of seq (upsertChange), so the test knows each
// key's latest state from the records the broker took, whatever order the
// sinks see them in. Most messages are a new version of their key; some
// carry an older version than the key's newest so far (a late event,
// often older than what the table holds by then), some are an earlier
// message again (a redelivery at a new offset, usually on another
// partition), on top of the producer's copies of the other modes. A
// version's content (op, region, payload) is a function of the key and
// the version, so two changes of one key at one version are the same
// change. The table is partitioned by region, which a key's versions
// change: an upsert moves the key's row to another partition.

// chaosKeys is the number of keys the upsert-mode messages change.
const chaosKeys = 300

// chaosRegions are the partitions of the upsert-mode table.
var chaosRegions = []string{"eu", "us", "apac"}

// mix is splitmix64's finalizer: the test's deterministic randomness.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// upsertChange is the key and version of upsert-mode message seq: one
// message in 20 is an earlier message again, two in 20 an older version
// of their key (up to 1,500 messages back), the others the version of
// their position in the stream (seq*4+1, increasing along it).
func upsertChange(seq int) (key int, version int64) {
	h := mix(uint64(seq))
	back := 1 + int(h>>32)%1500
	switch kind := (h >> 8) % 20; {
	case kind == 0 && seq >= back:
		return upsertChange(seq - back)
	case kind <= 2:
		return int(h % chaosKeys), int64(max(0, seq-back))*4 + 1
	}
	return int(h % chaosKeys), int64(seq)*4 + 1
}

// upsertRow is a key's state at a version: its op (d: deleted) and the
// columns of its row.
type upsertRow struct {
	id      string
	version int64
	op      string
	region  string
	payload string
}

// upsertState is key's state at version: one version in six deletes.
func upsertState(key int, version int64) upsertRow {
	h := mix(uint64(key)<<40 ^ uint64(version))
	r := upsertRow{id: fmt.Sprintf("k%d", key), version: version, op: "u", region: chaosRegions[version%3]}
	if h%6 == 0 {
		r.op = "d"
	}
	r.payload = fmt.Sprintf("%s@%d/%x", r.id, version, h>>48)
	return r
}

// upsertMessage is the JSON of upsert-mode message seq.
func upsertMessage(seq int) string {
	r := upsertState(upsertChange(seq))
	return fmt.Sprintf(`{"id":%q,"version":%d,"op":%q,"region":%q,"payload":%q}`, r.id, r.version, r.op, r.region, r.payload)
}

// upsertChaosSchema is the upsert-mode table: a row per key id, partitioned
// by region.
func upsertChaosSchema() (*iceberg.Schema, iceberg.PartitionSpec) {
	sch := iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 2, Name: "version", Type: iceberg.PrimitiveTypes.Int64, Required: true},
		iceberg.NestedField{ID: 3, Name: "op", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 4, Name: "region", Type: iceberg.PrimitiveTypes.String, Required: true},
		iceberg.NestedField{ID: 5, Name: "payload", Type: iceberg.PrimitiveTypes.String, Required: true},
	)
	return sch, iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{4}, FieldID: 1000, Name: "region", Transform: iceberg.IdentityTransform{}})
}

// expectUpsert is the latest state of every key the records sent change:
// its greatest version's, the deleted keys absent.
func expectUpsert(sent []chaosSent) map[string]upsertRow {
	latest := map[int]int64{}
	for _, r := range sent {
		k, v := upsertChange(r.seq)
		if cur, ok := latest[k]; !ok || v > cur {
			latest[k] = v
		}
	}
	out := map[string]upsertRow{}
	for k, v := range latest {
		if s := upsertState(k, v); s.op != "d" {
			out[s.id] = s
		}
	}
	return out
}

// coveredRecords is the number of records sent at or below tbl's
// positions on topic.
func coveredRecords(t *testing.T, tbl *icetable.Table, topic string, sent []chaosSent) int64 {
	pos, err := sink.Positions(tbl)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, r := range sent {
		if p, ok := pos[sink.SourcePartition{Source: "kafka:" + topic, Partition: r.part}]; ok && r.off <= p {
			n++
		}
	}
	return n
}

// upsertChaosCheck compares the table row by row with the latest state of
// each key the records sent change, and its positions with the last
// offset of each partition (ends), logs the figures (what), and fails the
// test on any difference; dead is the dead-letter table's difference.
func upsertChaosCheck(t *testing.T, cc chaosCatalog, ident icetable.Identifier, topic string, sent []chaosSent, ends map[int32]int64, dead chaosDiff, what string) {
	t.Helper()
	want := expectUpsert(sent)
	tbl, err := loadChaosTable(t, cc, ident)
	if err != nil {
		t.Fatal(err)
	}
	got := readUpsertRows(t, tbl)
	var missing, resurrected, extra, stale, wrong []string
	seen := map[string]bool{}
	for _, g := range got {
		w, ok := want[g.id]
		switch {
		case seen[g.id]:
			extra = append(extra, fmt.Sprintf("%s (a second row)", g.id))
		case !ok && strings.HasPrefix(g.id, "k"):
			resurrected = append(resurrected, fmt.Sprintf("%s v%d", g.id, g.version))
		case !ok:
			extra = append(extra, g.id)
		case g.version < w.version:
			stale = append(stale, fmt.Sprintf("%s v%d, want v%d", g.id, g.version, w.version))
		case g != w:
			wrong = append(wrong, fmt.Sprintf("%+v, want %+v", g, w))
		}
		seen[g.id] = true
	}
	for id, w := range want {
		if !seen[id] {
			missing = append(missing, fmt.Sprintf("%s v%d", id, w.version))
		}
	}
	pos, err := sink.Positions(tbl)
	if err != nil {
		t.Fatal(err)
	}
	var posDiff []string
	for p, end := range ends {
		if got := pos[sink.SourcePartition{Source: "kafka:" + topic, Partition: p}]; got != end {
			posDiff = append(posDiff, fmt.Sprintf("partition %d at %d, its end %d", p, got, end))
		}
	}
	// The messages older than (or equal to) their key's newest before them
	// in the stream: late and redelivered changes.
	newest, older, again, messages := map[int]int64{}, 0, 0, 0
	for _, r := range sent {
		messages = max(messages, r.seq+1)
	}
	for seq := range messages {
		k, v := upsertChange(seq)
		if n, ok := newest[k]; ok && v < n {
			older++
		} else if ok && v == n {
			again++
		}
		newest[k] = max(newest[k], v)
	}
	deleted := 0
	for k := range chaosKeys {
		if _, ok := want[fmt.Sprintf("k%d", k)]; !ok {
			deleted++
		}
	}
	t.Logf("%s; %d changes older than their key's newest before them, %d the same version again; table: %d rows checked for %d live keys (%d keys deleted last); positions on each partition's last offset: %d of %d; dead-letter table: %s",
		what, older, again, len(got), len(want), deleted, len(ends)-len(posDiff), len(ends), dead)
	for _, d := range []struct {
		what string
		rows []string
	}{{"missing", missing}, {"deleted but present (resurrected)", resurrected}, {"duplicated or unknown", extra},
		{"older than the latest version (stale)", stale}, {"with wrong values", wrong}, {"positions", posDiff}} {
		if len(d.rows) > 0 {
			slices.Sort(d.rows)
			t.Errorf("%d %s: %s", len(d.rows), d.what, strings.Join(d.rows[:min(len(d.rows), 20)], "; "))
		}
	}
	if !dead.none() {
		t.Errorf("dead-letter table: %s", dead)
	}
}

// readUpsertRows reads every row of the upsert-mode table.
func readUpsertRows(t *testing.T, tbl *icetable.Table) []upsertRow {
	t.Helper()
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields("id", "version", "op", "region", "payload")).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []upsertRow
	for rec, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
		ids, versions, ops := col("id").(*array.String), col("version").(*array.Int64), col("op").(*array.String)
		regions, payloads := col("region").(*array.String), col("payload").(*array.String)
		for i := 0; i < ids.Len(); i++ {
			out = append(out, upsertRow{ids.Value(i), versions.Value(i), ops.Value(i), regions.Value(i), payloads.Value(i)})
		}
		rec.Release()
	}
	return out
}
