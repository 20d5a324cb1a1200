package table_test

import (
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"

	"github.com/icerun/icerun/table"
)

// The races below are between an upsert of order 1, which the table does
// not hold, and a newer delete of it: whatever the interleaving, the
// delete wins and order 1 is not live.

// The delete (tombstone only: the deleter holds no row of order 1 to
// delete) lands between the upsert's commit validation and its commit.
func TestApplyChangesTombstoneRaceDeleteOnlyBeforeCommit(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		applyRacing(t, cat, ident, w, func() {
			apply(t, open(t, cat, ident), byVersion, event{id: 1, region: "us", status: "deleted", version: 3})
		}, event{id: 1, region: "us", status: "paid", version: 2})
		assert.Equal(t, map[int64]string{2: "eu/created/1"}, current(t, cat, ident),
			"after an upsert raced a newer delete, want order 1 deleted")
	})
}

// The delete also commits the table (an upsert of another key in another
// partition): the upsert's commit retries on the moved table and must see
// the tombstone then.
func TestApplyChangesTombstoneRaceDeleteWithCommitBeforeCommit(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		res := applyRacing(t, cat, ident, w, func() {
			apply(t, open(t, cat, ident), byVersion,
				event{id: 1, region: "us", status: "deleted", version: 3},
				event{id: 3, region: "ap", status: "created", version: 1})
		}, event{id: 1, region: "us", status: "paid", version: 2})
		assert.Equal(t, int64(1), res.Stale, "Stale of the upsert that lost to a newer delete")
		assert.Equal(t, map[int64]string{2: "eu/created/1", 3: "ap/created/1"}, current(t, cat, ident),
			"after an upsert raced a newer delete, want order 1 deleted")
	})
}

// The upsert commits between the deleter's comparison and its tombstone
// commit: the deleter, which has nothing of order 1 to delete in the table
// it compared, must see the upsert's row after its tombstones landed.
func TestApplyChangesTombstoneRaceUpsertBeforeTombstones(t *testing.T) {
	t.Parallel()
	forEachMode(t, func(t *testing.T, cat catalog.Catalog, ident icetable.Identifier, w *table.Writer) {
		res := applyRacing(t, cat, ident, w, func() {
			apply(t, open(t, cat, ident), byVersion, event{id: 1, region: "us", status: "paid", version: 2})
		}, event{id: 1, region: "us", status: "deleted", version: 3})
		assert.Equal(t, int64(1), res.Tombstones, "Tombstones of the delete")
		assert.Equal(t, map[int64]string{2: "eu/created/1"}, current(t, cat, ident),
			"after a delete raced an older upsert, want order 1 deleted")
	})
}
