package table_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

// TestUnpartitionedErrorsNameTheTable: the errors of operations on an
// unpartitioned table, whose one key has the empty text, name the table
// (or say "unpartitioned"), with no empty word where the key would be.
func TestUnpartitionedErrorsNameTheTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dup := orderdata.Day(day0, 3)
	dup = append(dup, dup[1])
	dup[3].Amount++ // order 1 twice, with other rows
	cases := []struct {
		name  string
		props iceberg.Properties
		run   func(w *table.Writer) error
		want  error
	}{
		{"copy-on-write upsert of a duplicated key", nil, func(w *table.Writer) error {
			_, err := w.Upsert(ctx, reader(dup), "order_id")
			return err
		}, table.ErrDuplicateKey},
		{"merge-on-read upsert of a duplicated key", iceberg.Properties{"format-version": "2", table.PropertyUpsertMode: table.ModeMergeOnRead}, func(w *table.Writer) error {
			_, err := w.Upsert(ctx, reader(dup), "order_id")
			return err
		}, table.ErrDuplicateKey},
		{"recompute without a source", nil, func(w *table.Writer) error {
			_, err := w.Recompute(ctx, key(t, w, ""), table.Source{}, nil)
			return err
		}, table.ErrNoSource},
		{"delete on format v1", iceberg.Properties{"format-version": "1"}, func(w *table.Writer) error {
			_, err := w.Delete(ctx, key(t, w, ""), reader(dup[:1]), "order_id")
			return err
		}, commit.ErrUnsupported},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := catalogtest.CreateTable(t, cat, "fact_orders", orderdata.Schema, *iceberg.UnpartitionedSpec, tc.props)
			w := open(t, cat, ident)
			upsert(t, w, orderdata.Day(day0, 10)) // the partition exists: an upsert merges it
			err := tc.run(w)
			require.ErrorIs(t, err, tc.want)
			msg := err.Error()
			assert.Contains(t, msg, "db.fact_orders", "error names the table")
			for _, bad := range []string{"  ", " :", "/:", "/ ", "[]"} {
				assert.False(t, strings.Contains(msg, bad), "error %q contains %q: an empty key", msg, bad)
			}
		})
	}
}
