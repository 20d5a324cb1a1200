package writeprops

import icetable "github.com/apache/iceberg-go/table"

// WritersSort reports whether iceberg-go's data file writers can sort the
// rows of a batch by md's default sort order: every sort field's source is
// a top-level column of the current schema. They fail every write to a
// table whose order names a nested or dropped column (another engine's
// order); such a table is written unsorted, its files making no claim.
func WritersSort(md icetable.Metadata) bool {
	sch := md.CurrentSchema()
	for _, f := range md.SortOrder().Fields() {
		top := false
		for _, c := range sch.Fields() {
			top = top || c.ID == f.SourceID()
		}
		if !top {
			return false
		}
	}
	return true
}
