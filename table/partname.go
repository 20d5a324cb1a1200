package table

import (
	"strings"

	"github.com/icerun/icerun/internal/snapshotcommit"
	"github.com/icerun/icerun/partition"
)

// Messages name the partition an operation was done to. The one key of an
// unpartitioned table has the empty text: a message names the table alone
// (partName), or says "unpartitioned" where it names the key alone
// (keyName), never an empty word.

// partName names partition k of table name: "name/key", or name for the
// key of an unpartitioned table (the table is the partition).
func partName(name string, k partition.Key) string {
	if k.IsValid() && k.String() == "" {
		return name
	}
	return name + "/" + k.String()
}

// keyName names partition key k alone ([snapshotcommit.KeyName]).
func keyName(k partition.Key) string { return snapshotcommit.KeyName(k) }

// keyNames names keys, comma-separated, as keyName does.
func keyNames(keys []partition.Key) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = keyName(k)
	}
	return strings.Join(names, ", ")
}
