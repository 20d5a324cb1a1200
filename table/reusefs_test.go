package table_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/examples/orderdata"
)

// openCounter is a catalog whose tables count the file IOs they open
// (each open of an S3 IO is a new client, its configuration loaded and
// parsed again).
type openCounter struct {
	catalog.Catalog
	loads, opens atomic.Int64
}

func (c *openCounter) LoadTable(ctx context.Context, ident icetable.Identifier) (*icetable.Table, error) {
	tbl, err := c.Catalog.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	c.loads.Add(1)
	return icetable.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), func(ctx context.Context) (iceio.IO, error) {
		c.opens.Add(1)
		return tbl.FS(ctx)
	}, c), nil
}

// TestReplaceOpensOneIOPerLoad: a replacement opens the file IO of a
// table state once, however many files it reads and writes through it:
// at most one open per table load, for data files, manifests, the manifest
// list and the lineage alike.
func TestReplaceOpensOneIOPerLoad(t *testing.T) {
	cat, ident, _ := ordersTable(t)
	c := &openCounter{Catalog: cat}
	w := open(t, c, ident)
	for _, n := range []int{30, 20, 10} {
		_, err := w.ReplacePartition(context.Background(), dayKey(t, w, day0), reader(orderdata.Day(day0, n)))
		require.NoError(t, err)
	}
	require.Positive(t, c.opens.Load())
	assert.LessOrEqual(t, c.opens.Load(), c.loads.Load(), "file IO opens against table loads")
}
