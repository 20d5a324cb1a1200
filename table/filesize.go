package table

import (
	"strconv"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/writeprops"
)

// writeView is tbl as a stager's writers see it: with
// write.target-file-size-bytes honored, zstd at [DefaultZstdLevel] unless
// the table sets a level (compression.go), row groups of at most
// rowGroupRows rows when above 0 and the table sets no row-group limit,
// and, when unsorted is set (icerun sorts the rows itself), without
// iceberg-go's per-batch sort.
//
// iceberg-go v0.7.0 rolls to a new file once the bytes flushed to the
// current one reach the target, but it flushes only whole row groups
// (write.parquet.row-group-size-bytes, 128 MiB, or the row-group row
// limit, 1M rows), so a target below the row group was never met: a
// 1M-row partition became one file whatever the target. The view caps the
// row group at the target, and the page size (1 MiB by default) at an
// eighth of it: a row group counts only the pages it has flushed, so a
// file ends within about one page per column past the target. A table
// whose properties already satisfy this is returned as it is. A sort
// order the writers cannot apply (writeprops.WritersSort) is dropped from
// the view: icerun does not sort by it either, and the files claim none. A table
// property the writers cannot take fails with commit.ErrUnsupported
// (writeprops.Check).
func writeView(tbl *icetable.Table, unsorted bool, rowGroupRows int64) (*icetable.Table, error) {
	props := tbl.Properties()
	if err := writeprops.Check(props); err != nil {
		return nil, err
	}
	target := int64(props.GetInt(icetable.WriteTargetFileSizeBytesKey, icetable.WriteTargetFileSizeBytesDefault))
	set := map[string]string{}
	if target > 0 {
		for key, def := range map[string]int{icetable.ParquetRowGroupSizeBytesKey: icetable.ParquetRowGroupSizeBytesDefault, icetable.ParquetPageSizeBytesKey: icetable.ParquetPageSizeBytesDefault} {
			limit := target
			if key == icetable.ParquetPageSizeBytesKey {
				limit = max(target/8, 1)
			}
			if int64(props.GetInt(key, def)) > limit {
				set[key] = strconv.FormatInt(limit, 10)
			}
		}
	}
	compressionLevel(props, set)
	if _, ok := props[icetable.ParquetRowGroupLimitKey]; !ok && rowGroupRows > 0 && rowGroupRows < icetable.ParquetRowGroupLimitDefault {
		set[icetable.ParquetRowGroupLimitKey] = strconv.FormatInt(rowGroupRows, 10)
	}
	unsorted = (unsorted || !writeprops.WritersSort(tbl.Metadata())) && !tbl.SortOrder().IsUnsorted()
	if len(set) == 0 && !unsorted {
		return tbl, nil
	}
	return writeprops.View(tbl, set, unsorted)
}
