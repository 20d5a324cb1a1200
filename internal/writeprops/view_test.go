package writeprops_test

import (
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/internal/writeprops"
)

// Views without the sort order, made concurrently while the tables of
// other writers are created, leave iceberg-go's UnsortedSortOrder alone:
// MetadataBuilder.AddSortOrder writes the order id into the order it is
// given, a data race on that global under -race (the race step runs
// this package).
func TestUnsortedViewsLeaveTheGlobalOrderAlone(t *testing.T) {
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64, Required: true})
	order, err := icetable.NewSortOrder(1, []icetable.SortField{{SourceIDs: []int{1}, Transform: iceberg.IdentityTransform{},
		Direction: icetable.SortASC, NullOrder: icetable.NullsFirst}})
	require.NoError(t, err)
	md, err := icetable.NewMetadata(sc, iceberg.UnpartitionedSpec, order, "file:///tmp/writeprops-view", nil)
	require.NoError(t, err)
	tbl := icetable.New(icetable.Identifier{"db", "t"}, md, "file:///tmp/writeprops-view/metadata/v1.metadata.json", nil, nil)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			v, err := writeprops.Unsorted(tbl)
			if err == nil && !v.SortOrder().IsUnsorted() {
				t.Errorf("Unsorted view has sort order %v", v.SortOrder())
			}
			if err != nil {
				t.Error(err)
			}
		}()
		go func() { // what creating an unsorted table reads
			defer wg.Done()
			if _, err := icetable.NewMetadata(sc, iceberg.UnpartitionedSpec, icetable.UnsortedSortOrder, "file:///tmp/other", nil); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 0, icetable.UnsortedSortOrder.OrderID(), "iceberg-go's UnsortedSortOrder")
}
