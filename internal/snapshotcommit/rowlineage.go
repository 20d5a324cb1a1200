package snapshotcommit

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/commit"
)

// rowIDs is the row-lineage range a format v3 snapshot assigns (the
// spec's "Row Lineage"): its first-row-id is the table's next-row-id, and
// added-rows counts the ids its manifest list hands out. The catalog then
// moves the table's next-row-id to first+added.
type rowIDs struct{ first, added int64 }

// writeManifestList writes the manifest list of the producer's snapshot to
// out. On format v3 iceberg-go's list writer assigns each data manifest
// that has no first_row_id yet (the ones this commit wrote, and manifests
// of a table upgraded from v2) the next range of row ids, added plus
// existing rows long, as Java's ManifestListWriter does; manifests kept
// from the parent keep theirs. Data files of a rewritten manifest keep
// the first_row_id they were read with, so a row keeps its _row_id; new
// files inherit theirs from the manifest. The returned range is nil below
// v3.
func (p *producer) writeManifestList(out io.Writer, parent *int64, manifests []iceberg.ManifestFile) (_ *rowIDs, err error) {
	var (
		w     *iceberg.ManifestListWriter
		rows  *rowIDs
		first int64
	)
	switch v := p.md.Version(); v {
	case 1:
		w, err = iceberg.NewManifestListWriterV1(out, p.id, parent)
	case 2:
		w, err = iceberg.NewManifestListWriterV2(out, p.id, p.seq, parent)
	case 3:
		first = p.md.NextRowID()
		rows = &rowIDs{first: first}
		w, err = iceberg.NewManifestListWriterV3(out, p.id, p.seq, first, parent)
	default:
		return nil, fmt.Errorf("%w: format version %d", commit.ErrUnsupported, v)
	}
	if err != nil {
		return nil, err
	}
	if err := w.AddManifests(manifests); err != nil {
		if rows != nil && errors.Is(err, iceberg.ErrInvalidArgument) {
			// e.g. a manifest of a table upgraded to v3 without row counts:
			// no row ids can be assigned to its rows
			return nil, fmt.Errorf("%w: row lineage: %w", commit.ErrUnsupported, err)
		}
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	if rows != nil {
		next := w.NextRowID()
		if next == nil || *next < first {
			return nil, fmt.Errorf("manifest list: no row-lineage range after first-row-id %d", first)
		}
		rows.added = *next - first
	}

	return rows, nil
}
