package table_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/internal/catalogtest"
)

// lossyCatalog makes the commit's reply get lost: the commit is applied
// (or not, with drop) and an error is returned. With loadFails, every
// LoadTable after that fails too.
type lossyCatalog struct {
	catalog.Catalog
	apply, loadFails bool
	lost             bool
	err              error // the error returned; errLost when nil
}

var errLost = errors.New("connection reset by peer")

func (c *lossyCatalog) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	if c.apply {
		if _, _, err := c.Catalog.CommitTable(ctx, ident, reqs, ups); err != nil {
			return nil, "", err
		}
	}
	c.lost = true
	if c.err != nil {
		return nil, "", c.err
	}
	return nil, "", errLost
}

func (c *lossyCatalog) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	if c.lost && c.loadFails {
		return nil, errLost
	}
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, c), nil
}

func TestUnknownOutcomeAppliedIsFoundByToken(t *testing.T) {
	t.Parallel()
	cat, ident, _ := ordersTable(t)
	replaceDay(t, open(t, cat, ident), day0, 10)
	lc := &lossyCatalog{Catalog: cat, apply: true}
	w := open(t, lc, ident)
	res, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, 7)))
	require.NoError(t, err, "the commit landed: the token must be found")
	assert.Equal(t, 1, res.Attempts, "an unknown outcome must not be retried blindly")
	assert.Equal(t, 2, catalogtest.Snapshots(t, cat, ident))
	tbl, err := cat.LoadTable(context.Background(), ident)
	require.NoError(t, err)
	assert.Equal(t, tbl.CurrentSnapshot().SnapshotID, res.SnapshotID)
	assert.Len(t, tagsByDay(t, cat, ident)[day0.Format("2006-01-02")], 7, "7 distinct amounts: the new rows only")
}

func TestUnknownOutcomeNotAppliedFails(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	replaceDay(t, open(t, cat, ident), day0, 10)
	files := catalogtest.DataFiles(t, dir)
	lc := &lossyCatalog{Catalog: cat}
	w := open(t, lc, ident)
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, 7)))
	require.ErrorIs(t, err, errLost)
	assert.NotErrorIs(t, err, commit.ErrUnknownOutcome)
	assert.Equal(t, 1, catalogtest.Snapshots(t, cat, ident))
	assert.Equal(t, files, catalogtest.DataFiles(t, dir), "not applied: the staged files must be removed")
}

func TestUnknownOutcomeUnresolvedKeepsFiles(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	replaceDay(t, open(t, cat, ident), day0, 10)
	before := len(catalogtest.DataFiles(t, dir))
	lc := &lossyCatalog{Catalog: cat, apply: true, loadFails: true}
	w := open(t, lc, ident)
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, 7)))
	require.ErrorIs(t, err, commit.ErrUnknownOutcome)
	var u *commit.UnknownOutcomeError
	require.ErrorAs(t, err, &u)
	assert.NotEmpty(t, u.Token)
	require.NotEmpty(t, u.Files)
	// The commit did land: the files it names must still exist.
	assert.Len(t, catalogtest.DataFiles(t, dir), before+len(u.Files))
	assert.Equal(t, 2, catalogtest.Snapshots(t, cat, ident))
}

// A REST catalog's "commit state unknown" (a 5xx) is not resolved by a
// reload that does not find the token: the server may still apply it, so
// the files are kept and the outcome is reported unknown.
func TestUnknownOutcomeRESTStateUnknownKeepsFiles(t *testing.T) {
	t.Parallel()
	cat, ident, dir := ordersTable(t)
	replaceDay(t, open(t, cat, ident), day0, 10)
	before := len(catalogtest.DataFiles(t, dir))
	lc := &lossyCatalog{Catalog: cat, err: rest.ErrCommitStateUnknown}
	w := open(t, lc, ident)
	_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, 7)))
	require.ErrorIs(t, err, commit.ErrUnknownOutcome)
	var u *commit.UnknownOutcomeError
	require.ErrorAs(t, err, &u)
	assert.Len(t, catalogtest.DataFiles(t, dir), before+len(u.Files))
	assert.Equal(t, 1, catalogtest.Snapshots(t, cat, ident))
}
