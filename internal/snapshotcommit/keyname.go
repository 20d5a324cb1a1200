package snapshotcommit

import (
	"strings"

	"github.com/icerun/icerun/partition"
)

// KeyName names partition key k in a message: its canonical text, or
// "unpartitioned" for the one key of an unpartitioned table, whose text
// is empty (a message never shows an empty word for it).
func KeyName(k partition.Key) string {
	if k.IsValid() && k.String() == "" {
		return "unpartitioned"
	}
	return k.String()
}

// keyNames names keys, comma-separated, as KeyName does.
func keyNames(keys []partition.Key) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = KeyName(k)
	}
	return strings.Join(names, ", ")
}
