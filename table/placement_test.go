package table_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/rowdelete"
)

// A merge-on-read changelog write locates the rows it deletes where its
// comparison with the stored rows found them: it reads no data file a
// second time (but a file holding explicit _row_id values), and deletes
// exactly those rows (v2 position deletes, v3 deletion vectors, over
// files that already have deletes). Not
// parallel: it counts the process's Locator reads.
func TestApplyChangesLocatesFromTheComparison(t *testing.T) {
	for _, format := range []string{"2", "3"} {
		t.Run("v"+format, func(t *testing.T) {
			cat, ident, w := morChanges(t, format)
			var evs []event
			for id := range int64(50) {
				evs = append(evs, event{id: id, region: "eu", status: "created", version: 1})
			}
			apply(t, w, byVersion, evs...)
			before := rowdelete.FileScans()
			apply(t, w, byVersion,
				event{id: 3, region: "eu", status: "paid", version: 2},
				event{id: 7, region: "eu", status: "deleted", version: 2},
				event{id: 9, region: "us", status: "paid", version: 2}) // moves partition
			apply(t, w, byVersion,
				event{id: 3, region: "eu", status: "shipped", version: 3}, // its row is in the second file now
				event{id: 11, region: "eu", status: "paid", version: 2},
				event{id: 12, region: "eu", status: "created", version: 0}) // stale
			// On v3 the file the second change wrote keeps the _row_id of the
			// rows it replaced, which only a read of it gives: that file is
			// read to locate order 3's row, no other.
			reread := int64(0)
			if format == "3" {
				reread = 1
			}
			assert.Equal(t, reread, rowdelete.FileScans()-before, "data files read again to locate rows")
			got := current(t, cat, ident)
			require.Len(t, got, 49)
			assert.Equal(t, "eu/shipped/3", got[3])
			assert.Equal(t, "us/paid/2", got[9])
			assert.Equal(t, "eu/paid/2", got[11])
			assert.Equal(t, "eu/created/1", got[12])
			assert.NotContains(t, got, int64(7))
		})
	}
}
