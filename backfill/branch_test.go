package backfill_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/backfill"
	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/table"
)

func TestBackfillOnBranchResumesFromTheBranch(t *testing.T) {
	ctx := context.Background()
	cat, ident, w, ks := setup(t, table.WithBranch("audit"))
	rep, err := backfill.Run(ctx, w, ks[:days/2], orders)
	require.NoError(t, err)
	require.Equal(t, days/2, rep.Written)
	require.Nil(t, catalogtest.CanonicalScan(t, cat, ident), "main sees nothing of the branch")

	rep, err = backfill.Run(ctx, w, ks, orders)
	require.NoError(t, err)
	require.Equal(t, days/2, rep.Skipped, "resume skips the keys the branch holds")
	require.Equal(t, days-days/2, rep.Written)

	onMain, err := table.Open(ctx, cat, ident)
	require.NoError(t, err)
	rep, err = backfill.Run(ctx, onMain, ks[:1], orders)
	require.NoError(t, err)
	require.Equal(t, 0, rep.Skipped, "main's resume does not read the branch")

	for _, h := range []backfill.Hygiene{{KeepSnapshots: 4}, {ExpireRetainLast: 2}} {
		_, err = backfill.Run(ctx, w, ks, orders, backfill.WithHygiene(h))
		require.ErrorIs(t, err, backfill.ErrBadOption, "expiry with a branch writer (%+v)", h)
	}
}
