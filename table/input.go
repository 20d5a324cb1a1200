package table

import (
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/icerun/icerun/internal/snapshotcommit"
)

// InputIdentifier is an optional interface of the rows given to a
// replacement: InputIdentity returns the identity of the input of the
// partition with canonical key text key (a content hash of its files, the
// source snapshot id it read, ...), or "" when unknown. The identity is
// recorded in the snapshot's lineage ([Write].Input), where a backfill
// compares it to decide whether a key is done (see package backfill).
type InputIdentifier interface {
	InputIdentity(key string) string
}

// setInputs records the input identities rows know in parts.
func setInputs(rows array.RecordReader, parts []snapshotcommit.Part) {
	id, ok := rows.(InputIdentifier)
	if !ok {
		return
	}
	for i := range parts {
		parts[i].Input = id.InputIdentity(parts[i].Key.String())
	}
}
