package table

import (
	"strconv"

	icetable "github.com/apache/iceberg-go/table"
)

// DefaultZstdLevel is the zstd level of the data files icerun writes to a
// table that sets no write.parquet.compression-level: level 1, the level
// PyIceberg writes (pyarrow's default). Iceberg Java leaves the level to
// parquet-mr (3), iceberg-go to arrow-go (its "default" encoder, about
// zstd's 3). On the order schema level 1 files are also smaller than
// arrow-go's default level's (see README "Performance"). A table that
// sets the property gets its level.
const DefaultZstdLevel = 1

// compressionLevel adds to set the compression level the writers use
// when the table's properties props leave zstd's level to the library.
func compressionLevel(props map[string]string, set map[string]string) {
	if _, ok := props[icetable.ParquetCompressionLevelKey]; ok {
		return
	}
	if props[icetable.ParquetCompressionKey] != "" && props[icetable.ParquetCompressionKey] != "zstd" {
		return
	}
	set[icetable.ParquetCompressionLevelKey] = strconv.Itoa(DefaultZstdLevel)
}
