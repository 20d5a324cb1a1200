package table

import (
	"fmt"

	icetable "github.com/apache/iceberg-go/table"
)

// WriteMode says how [Writer.Upsert] changes the rows of a partition.
type WriteMode uint8

const (
	// TableWriteMode follows the table's properties: merge-on-read when
	// write.upsert.mode, write.merge.mode or write.update.mode is
	// "merge-on-read" (checked in that order, the first one set decides),
	// copy-on-write otherwise.
	TableWriteMode WriteMode = iota
	// CopyOnWrite rewrites every partition an upsert touches whole: no
	// delete files, reads cost nothing extra, the upsert costs the
	// partition.
	CopyOnWrite
	// MergeOnRead writes the new rows as new data files and deletes the
	// old ones with delete files (position deletes on format v2, deletion
	// vectors on v3): the upsert costs the change plus a read of the
	// partition's key columns; readers merge the deletes until
	// [Writer.Compact] folds them in.
	MergeOnRead
)

// Table properties that ask for merge-on-read (Java Iceberg's names, and
// write.upsert.mode for upserts alone).
const (
	PropertyUpsertMode = "write.upsert.mode"
	PropertyMergeMode  = "write.merge.mode"
	PropertyUpdateMode = "write.update.mode"
	PropertyDeleteMode = "write.delete.mode"
	ModeMergeOnRead    = "merge-on-read"
	ModeCopyOnWrite    = "copy-on-write"
)

// WithWriteMode sets how Upsert writes, overriding the table's
// properties. Default [TableWriteMode].
func WithWriteMode(m WriteMode) Option {
	return func(c *config) error {
		if m > MergeOnRead {
			return fmt.Errorf("%w: write mode %d", ErrBadOption, m)
		}
		c.writeMode = m
		return nil
	}
}

// mergeOnRead reports whether an upsert into tbl is merge-on-read: asked
// for by the option or the table, on a format that has delete files (v2
// and later), on main (a write-audit-publish branch is published by
// replacing partitions, which carries no delete files).
func (c config) mergeOnRead(tbl *icetable.Table) bool {
	if tbl.Metadata().Version() < 2 || c.branch != "" {
		return false
	}
	switch c.writeMode {
	case MergeOnRead:
		return true
	case CopyOnWrite:
		return false
	}
	props := tbl.Properties()
	for _, k := range []string{PropertyUpsertMode, PropertyMergeMode, PropertyUpdateMode} {
		if v, ok := props[k]; ok {
			return v == ModeMergeOnRead
		}
	}
	return false
}
