// Package cleanup finds and removes orphan files: files under a table's
// location that no snapshot, manifest list, manifest or metadata file of the
// table references.
//
// Orphans are left behind by writers that crashed (SIGKILL, OOM, a lost
// machine) between writing their data files and committing them, and by
// replacements whose commit outcome was unknown (commit.ErrUnknownOutcome:
// the files are kept because the table may reference them). [Orphans]
// lists them; with [Execute] it removes them.
//
// # Safety
//
// A file written by a replacement that is still running is, until its
// commit, unreferenced too. Only files older than a minimum age are
// considered: [DefaultMinAge] unless [MinAge] says otherwise, and never zero
// unless [AnyAge] is given explicitly (for tests, or when no writer can be
// running). The default is a dry run: nothing is removed without [Execute].
//
// The reference walk is iceberg-go's (Table.PlanOrphanFiles): every
// snapshot's manifest list and manifests, the metadata log and statistics.
// Files outside the table location are never looked at.
package cleanup
