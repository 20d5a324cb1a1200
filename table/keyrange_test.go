package table_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// opened lists the files in paths that the operations of in opened.
func opened(in *faults.Injector, paths []string) []string {
	var out []string
	for _, op := range in.Ops() {
		if p, ok := strings.CutPrefix(op, "io.open "); ok && slices.Contains(paths, p) {
			out = append(out, p)
		}
	}
	return out
}

// A merge-on-read upsert or delete reads the key column of a data file only
// when the file's bounds on it can hold one of the change's keys; the rows
// stay those of a copy-on-write upsert.
func TestMergeOnReadSkipsFilesOutsideTheKeys(t *testing.T) {
	t.Parallel()
	for _, format := range morFormats {
		t.Run("v"+format, func(t *testing.T) {
			ctx := context.Background()
			cat, ident := morTable(t, format)
			w := open(t, cat, ident)
			replaceDay(t, w, day0, 100) // orders 0-99
			old := paths(liveTasks(t, cat, ident))
			require.Len(t, old, 1)
			first := changedOrders(100, 150, 1_000_000) // new orders only: nothing to locate in the old file
			in := faults.New(faults.Fail, 0)
			upsert(t, open(t, faults.WrapCatalog(cat, in), ident), first)
			assert.Empty(t, opened(in, old), "files opened by an upsert of keys above every key of the table")
			added := slices.DeleteFunc(paths(liveTasks(t, cat, ident)), func(p string) bool { return slices.Contains(old, p) })
			require.Len(t, added, 1)

			second := changedOrders(120, 160, 2_000_000) // changes 120-149 of the second file, adds 150-159
			in = faults.New(faults.Fail, 0)
			upsert(t, open(t, faults.WrapCatalog(cat, in), ident), second)
			assert.Empty(t, opened(in, old), "files opened by an upsert of keys outside their bounds")
			assert.NotEmpty(t, opened(in, added), "the file that holds the changed keys must be read")
			want := cowResult(t, format, 100, first, second)
			assert.Equal(t, want, string(catalogtest.CanonicalScan(t, cat, ident)), "rows after upserts that skipped files")

			in = faults.New(faults.Fail, 0)
			dw := open(t, faults.WrapCatalog(cat, in), ident)
			res, err := dw.Delete(ctx, dayKey(t, dw, day0), reader(orderdata.Day(day0, 160)[130:135]), "order_id")
			require.NoError(t, err)
			assert.Equal(t, int64(5), res.DeletedRows, "Delete(5 keys).DeletedRows")
			assert.Empty(t, opened(in, old), "files opened by a delete of keys outside their bounds")
			ids := orderIDs(t, cat, ident)
			assert.Len(t, ids, 155, "rows after the delete")
			for _, o := range orderdata.Day(day0, 160)[130:135] {
				assert.NotContains(t, ids, strconv.FormatInt(o.ID, 10), "deleted order")
			}

			// A key of two columns prunes by the first one's bounds.
			in = faults.New(faults.Fail, 0)
			dw = open(t, faults.WrapCatalog(cat, in), ident)
			res, err = dw.Delete(ctx, dayKey(t, dw, day0), reader(orderdata.Day(day0, 160)[140:143]), "order_id", "customer_id")
			require.NoError(t, err)
			assert.Equal(t, int64(3), res.DeletedRows, "Delete(3 keys of two columns).DeletedRows")
			assert.Empty(t, opened(in, old), "files opened by a delete of two-column keys outside their bounds")
			assert.Len(t, orderIDs(t, cat, ident), 152, "rows after the second delete")
		})
	}
}

// Files without bounds on the key column (metrics mode counts) are read:
// the upsert still replaces every changed row.
func TestMergeOnReadReadsFilesWithoutBounds(t *testing.T) {
	t.Parallel()
	cat, _ := catalogtest.New(t)
	ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, orderdata.Spec, iceberg.Properties{
		"format-version": "2", table.PropertyUpsertMode: table.ModeMergeOnRead, "write.metadata.metrics.default": "counts"})
	w := open(t, cat, ident)
	replaceDay(t, w, day0, 100)
	old := paths(liveTasks(t, cat, ident))
	require.Len(t, old, 1)
	first := changedOrders(100, 150, 1_000_000)
	in := faults.New(faults.Fail, 0)
	upsert(t, open(t, faults.WrapCatalog(cat, in), ident), first)
	assert.NotEmpty(t, opened(in, old), "a file without bounds must be read")
	second := changedOrders(20, 130, 2_000_000)
	upsert(t, w, second)
	assert.Equal(t, cowResult(t, "2", 100, first, second), string(catalogtest.CanonicalScan(t, cat, ident)), "rows after upserts into files without bounds")
}
