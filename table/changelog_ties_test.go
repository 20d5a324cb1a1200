package table_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"

	"github.com/icerun/icerun/table"
)

// byVersionOnly orders by version alone, so that two changes of one key
// can tie across calls.
var byVersionOnly = table.ChangeSpec{
	Key:    []string{"order_id"},
	Order:  []string{"version"},
	Delete: table.DeleteWhen{Column: "status", Value: "deleted"},
}

func TestApplyChangesTiesWithTheStoredRow(t *testing.T) {
	t.Parallel()
	inputWins := byVersionOnly
	inputWins.Ties = table.InputWinsTies
	for _, tc := range []struct {
		name string
		cs   table.ChangeSpec
		want map[int64]string
		// stale is the Stale count of the tying call
		stale int64
	}{
		{"stored wins (default)", byVersionOnly, map[int64]string{1: "eu/created/2", 2: "eu/created/1"}, 2},
		{"input wins", inputWins, map[int64]string{1: "eu/paid/2"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
				apply(t, w, tc.cs,
					event{id: 1, region: "eu", status: "created", version: 2},
					event{id: 2, region: "eu", status: "created", version: 1})
				res := apply(t, w, tc.cs,
					event{id: 1, region: "eu", status: "paid", version: 2},
					event{id: 2, region: "eu", status: "deleted", version: 1})
				assert.Equal(t, tc.stale, res.Stale, "Stale of the changes that tie with the stored rows")
				assert.Equal(t, tc.want, current(t, cat, ident), "the table after changes that tie with the stored rows")
			})
		})
	}
}

// A tie with a tombstone follows the same rule.
func TestApplyChangesTiesWithTheTombstone(t *testing.T) {
	t.Parallel()
	inputWins := byVersionOnly
	inputWins.Ties = table.InputWinsTies
	for _, tc := range []struct {
		name string
		cs   table.ChangeSpec
		want map[int64]string
	}{
		{"stored wins (default)", byVersionOnly, map[int64]string{}},
		{"input wins", inputWins, map[int64]string{1: "eu/paid/2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
				apply(t, w, tc.cs, event{id: 1, region: "eu", status: "created", version: 1})
				apply(t, w, tc.cs, event{id: 1, region: "eu", status: "deleted", version: 2})
				apply(t, w, tc.cs, event{id: 1, region: "eu", status: "paid", version: 2})
				assert.Equal(t, tc.want, current(t, cat, ident), "the table after an upsert that ties with the tombstone")
			})
		})
	}
}
