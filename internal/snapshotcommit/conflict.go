package snapshotcommit

import (
	"errors"
	"io/fs"
	"strings"

	icetable "github.com/apache/iceberg-go/table"
)

// IsConflict reports whether err says the catalog refused the commit
// because the table moved, so that nothing was applied. Other committers
// (backfill's maintenance commits) classify their errors with it too.
//
// iceberg-go wraps optimistic-concurrency failures of the SQL and REST
// catalogs in table.ErrCommitFailed, but the requirement checks it runs
// before writing (AssertRefSnapshotID, AssertCreate, ...) return plain
// errors whose text starts with "requirement failed". Those are checked
// before anything is written, so they are conflicts too.
//
// So are the refusals of a snapshot whose sequence number or first row id
// another ref's commit has taken (see movedByAnotherRef).
func IsConflict(err error) bool {
	// iceberg-go spells its requirement errors "requirement failed" and
	// "Requirement failed"; either means the catalog checked and refused.
	return errors.Is(err, errCommitFailed) || strings.Contains(strings.ToLower(err.Error()), "requirement failed") || movedByAnotherRef(err) || prunedUnderCommit(err)
}

// prunedUnderCommit reports whether err is the catalog failing to read the
// metadata file it names as current: iceberg-go's SQL catalog reads the
// table's row, then its metadata.json, before it applies anything, and
// with write.metadata.delete-after-commit and a small
// write.metadata.previous-versions-max (the backfill's metadata pruning)
// other writers' commits can move the table past that file and delete it
// in between. Nothing was applied; a new attempt reloads the table.
func prunedUnderCommit(err error) bool {
	return errors.Is(err, fs.ErrNotExist) && strings.Contains(err.Error(), ".metadata.json")
}

// movedByAnotherRef reports whether err is the catalog refusing a new
// snapshot because another ref committed since the commit was planned. A
// commit to one ref asserts only that ref, but a snapshot's sequence
// number (format v2 and later) and first row id (v3) are table-wide: they
// were taken from the table's last ones when the commit was planned, and
// a commit of another ref (main while a branch commits, or a branch while
// main does) has taken them since. The metadata builders check both
// before anything is applied: iceberg-go's SQL and REST catalogs ("can't
// add snapshot with sequence number 5, must be > than last sequence
// number 5", "first-row-id 40 is behind table next-row-id 50") and Java's
// REST servers ("Cannot add snapshot with sequence number 5 older than
// last sequence number 5"). A new attempt plans on the moved table with
// fresh numbers.
func movedByAnotherRef(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "add snapshot with sequence number") ||
		strings.Contains(msg, "is behind table next-row-id")
}

// rootGuards are the requirements of a commit of a snapshot without a
// parent (the first of main, or of a branch cut from an empty main), to
// ref, planned on md: every other ref is where it was, and main still has
// no snapshot. The catalogs' metadata builders (iceberg-go's and Java's)
// check a new snapshot's sequence number against the table's last one
// only when it has a parent, and then set the table's last sequence
// number to the snapshot's: a root snapshot planned before other refs
// committed would set it back, and leave metadata that no reader can load
// ("snapshot has sequence number 2 which is greater than last-sequence-
// number 1"). With these requirements a commit of another existing ref
// since the planning is a conflict instead. A ref created since the
// planning is not covered: two branches cut at once from an empty table.
func rootGuards(md icetable.Metadata, ref string) []icetable.Requirement {
	var out []icetable.Requirement
	for name, r := range md.Refs() {
		if name != ref {
			id := r.SnapshotID
			out = append(out, icetable.AssertRefSnapshotID(name, &id))
		}
	}
	if _, ok := Ref(md, icetable.MainBranch); !ok && ref != icetable.MainBranch {
		out = append(out, icetable.AssertRefSnapshotID(icetable.MainBranch, nil))
	}
	return out
}
