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

// Unsorted is tbl without its default sort order, for writers only (it
// cannot commit).
func Unsorted(tbl *icetable.Table) (*icetable.Table, error) {
	b, err := icetable.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	if err := b.AddSortOrder(&icetable.UnsortedSortOrder); err != nil {
		return nil, err
	}
	if err := b.SetDefaultSortOrderID(-1); err != nil {
		return nil, err
	}
	md, err := b.Build()
	if err != nil {
		return nil, err
	}
	return icetable.New(tbl.Identifier(), md, tbl.MetadataLocation(), tbl.FS, nil), nil
}
