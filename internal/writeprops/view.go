package writeprops

import icetable "github.com/apache/iceberg-go/table"

// Unsorted is tbl without its default sort order, for writers only (it
// cannot commit).
func Unsorted(tbl *icetable.Table) (*icetable.Table, error) { return View(tbl, nil, true) }

// View is tbl with the properties set, and without its default sort
// order when unsorted is set, for writers only (it cannot commit).
func View(tbl *icetable.Table, set map[string]string, unsorted bool) (*icetable.Table, error) {
	b, err := icetable.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	if len(set) > 0 {
		if err := b.SetProperties(set); err != nil {
			return nil, err
		}
	}
	if unsorted {
		unsortedOrder := icetable.UnsortedSortOrder // AddSortOrder writes its order id into what it is given: never iceberg-go's global
		if err := b.AddSortOrder(&unsortedOrder); err != nil {
			return nil, err
		}
		if err := b.SetDefaultSortOrderID(-1); err != nil {
			return nil, err
		}
	}
	md, err := b.Build()
	if err != nil {
		return nil, err
	}
	return icetable.New(tbl.Identifier(), md, tbl.MetadataLocation(), tbl.FS, nil), nil
}
