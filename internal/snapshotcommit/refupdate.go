package snapshotcommit

import icetable "github.com/apache/iceberg-go/table"

// setBranch is the update that points branch name at snapshot id, keeping
// the retention (min-snapshots-to-keep, max-snapshot-age-ms,
// max-ref-age-ms) the branch has in md, as Java's SnapshotRef.builderFrom
// and iceberg-go's MetadataBuilder.NewRetainingSnapshotRefUpdate do. A new
// branch, or a name that is a tag in md, gets no retention: the catalog's
// defaults apply. It never carries a non-positive retention: iceberg-go
// serializes any non-zero value, and catalogs that validate refs (Apache
// Iceberg's REST server and the Java services built like it) refuse one.
func setBranch(md icetable.Metadata, name string, id int64) icetable.Update {
	var maxRefAge, maxSnapshotAge int64
	var minSnapshots int
	if r, ok := Ref(md, name); ok && r.SnapshotRefType == icetable.BranchRef {
		if v := r.MaxRefAgeMs; v != nil && *v > 0 {
			maxRefAge = *v
		}
		if v := r.MaxSnapshotAgeMs; v != nil && *v > 0 {
			maxSnapshotAge = *v
		}
		if v := r.MinSnapshotsToKeep; v != nil && *v > 0 {
			minSnapshots = *v
		}
	}
	return icetable.NewSetSnapshotRefUpdate(name, id, icetable.BranchRef, maxRefAge, maxSnapshotAge, minSnapshots)
}
