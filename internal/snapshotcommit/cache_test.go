package snapshotcommit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"

	"github.com/icerun/icerun/examples/orderdata"
	"github.com/icerun/icerun/faults"
	"github.com/icerun/icerun/internal/catalogtest"
)

// conflictFirst refuses the first commit as a conflict, without applying
// it, and records how many operations the counter had seen then.
type conflictFirst struct {
	catalog.Catalog
	counter *faults.Injector
	mu      sync.Mutex
	at      int // counter.Count() at the refused commit; 0 before
}

func (c *conflictFirst) CommitTable(ctx context.Context, ident icetable.Identifier, reqs []icetable.Requirement, ups []icetable.Update) (icetable.Metadata, string, error) {
	c.mu.Lock()
	first := c.at == 0
	if first {
		c.at = c.counter.Count()
	}
	c.mu.Unlock()
	if first {
		return nil, "", fmt.Errorf("%w: injected conflict", icetable.ErrCommitFailed)
	}
	return c.Catalog.CommitTable(ctx, ident, reqs, ups)
}

// TestRetryReadsOnlyNewManifests: the attempt after a conflict reads no
// manifest the first attempt read (manifests never change once written);
// here the table did not move, so it reads none at all.
func TestRetryReadsOnlyNewManifests(t *testing.T) {
	cat, _ := catalogtest.New(t)
	ident := ordersTable(t, cat, "orders", nil)
	replaceDays(t, openWriter(t, cat, ident), days(3, day(0), day(1), day(2)))

	counter := faults.New(faults.Fail, 0)
	cc := &conflictFirst{Catalog: faults.WrapCatalog(cat, counter), counter: counter}
	w := openWriter(t, cc, ident)
	start := counter.Count()
	res := replaceDay(t, w, day(1), repriced(orderdata.Day(day(1), 2), 7))
	assert.Equal(t, 2, res.Attempts, "one conflict, then the commit")
	first, _ := manifestReads(counter.Ops()[start:cc.at])
	retry, names := manifestReads(counter.Ops()[cc.at:])
	assert.GreaterOrEqual(t, first, 1, "the first attempt reads the partition's manifest (is the counter counting?)")
	assert.Zero(t, retry, "manifests read again after the conflict: %v", names)
}
