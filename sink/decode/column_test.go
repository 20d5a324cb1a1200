package decode

import (
	"context"
	"slices"
	"testing"

	icetable "github.com/apache/iceberg-go/table"
)

// column reads column name of every row of tbl, sorted.
func column(t *testing.T, tbl *icetable.Table, name string) []string {
	t.Helper()
	if tbl.CurrentSnapshot() == nil {
		return nil
	}
	_, recs, err := tbl.Scan(icetable.WithSelectedFields(name)).ToArrowRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for r, err := range recs {
		if err != nil {
			t.Fatal(err)
		}
		col := r.Column(0)
		for i := 0; i < col.Len(); i++ {
			out = append(out, col.ValueStr(i))
		}
		r.Release()
	}
	slices.Sort(out)
	return out
}
