package table

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/fingerprint"
	"github.com/icerun/icerun/partition"
	"github.com/icerun/icerun/schema"
)

// routeLateChanges writes the input rows late picks (by input partition,
// each key with its row's hash) to the late table ([LateTable]) with the
// reason [ReasonPastRetention], in the late table's partition named after
// the rows (their keys and hashes), replaced as a whole: a rerun of the
// same call leaves them there once. It returns the late table's name.
func (w *Writer) routeLateChanges(ctx context.Context, tbl *icetable.Table, chg *changes, res *schema.Resolution, late map[partition.Key]map[string]fingerprint.Hash) (string, error) {
	all := map[string]fingerprint.Hash{}
	for _, m := range late {
		for key, h := range m {
			all[key] = h
		}
	}
	var last partition.Key
	l := w.newLateRoute(tbl, res.Schema(), last)
	l.window, l.reason = changeFingerprint("changelog-late", chg.keyColumns, all), ReasonPastRetention
	emitted := map[string]bool{}
	for _, k := range chg.keys() {
		if late[k] == nil {
			continue
		}
		keys, inside := []partition.Key{k}, []bool{false}
		err := chg.pick(ctx, k, late[k], emitted, func(rec arrow.RecordBatch) error {
			return l.send(ctx, rec, keys, make([]int, rec.NumRows()), inside)
		})
		if err != nil {
			l.abort(err)
			return "", err
		}
	}
	return l.finish(ctx)
}
