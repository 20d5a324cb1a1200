package snapshotcommit

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/commit"
	"github.com/icerun/icerun/partition"
)

// publishPlan is what publishing a branch means in one table state.
type publishPlan struct {
	head *icetable.Snapshot // the branch's head
	// base is main's snapshot the branch was cut from or last published
	// to; nil when main had no snapshot then.
	base *icetable.Snapshot
	// forked: base is on the branch's ancestry (not a re-planned publish).
	forked bool
	// records are the newest icerun write of each partition the branch
	// replaced since base, by canonical key.
	records map[string]Record
	// specs are the partition specs of every write since base
	// (Record.SpecID; -1 for a write that does not say).
	specs map[int]bool
}

// planPublish finds the base of branch (head its head) and the branch's
// writes since. Both walks follow parent snapshots; one that meets an
// expired snapshot before it found what it looks for (main's walk the
// base, the branch's walk the base or its root) fails with
// [commit.ErrBranchExpired]: the writes the expired snapshots recorded are
// unknown, and main's history past that point is too.
func planPublish(md icetable.Metadata, branch string, head *icetable.Snapshot) (publishPlan, error) {
	pl := publishPlan{head: head, records: map[string]Record{}, specs: map[int]bool{}}
	onBranch := ancestors(md, head)
	var stop *int64 // the branch's last snapshot already on main
	for s := md.CurrentSnapshot(); s != nil; {
		if onBranch[s.SnapshotID] {
			pl.base, pl.forked, stop = s, true, &s.SnapshotID
			break
		}
		if p := s.Summary; p != nil && p.Properties[commit.SummaryPublishedBranch] == branch {
			if h, err := strconv.ParseInt(p.Properties[commit.SummaryPublishedHead], 10, 64); err == nil && onBranch[h] {
				pl.base, stop = s, &h
				break
			}
		}
		if s.ParentSnapshotID == nil {
			break
		}
		parent := md.SnapshotByID(*s.ParentSnapshotID)
		if parent == nil {
			return pl, fmt.Errorf("%w: main's snapshot %d was expired before the base of branch %s was found", commit.ErrBranchExpired, *s.ParentSnapshotID, branch)
		}
		s = parent
	}
	for s := head; s != nil && (stop == nil || s.SnapshotID != *stop); {
		for _, r := range snapshotRecords(s) {
			pl.specs[r.SpecID] = true
			if _, seen := pl.records[r.Key]; !seen {
				pl.records[r.Key] = r
			}
		}
		if s.ParentSnapshotID == nil || stop != nil && *s.ParentSnapshotID == *stop {
			break
		}
		parent := md.SnapshotByID(*s.ParentSnapshotID)
		if parent == nil {
			return pl, fmt.Errorf("%w: snapshot %d of branch %s was expired before the branch was published", commit.ErrBranchExpired, *s.ParentSnapshotID, branch)
		}
		s = parent
	}
	return pl, nil
}

// sameSpec fails with [commit.ErrBranchSpecChanged] unless every write of
// the plan was made under md's current spec: a key's text names other rows
// under another spec (bucket[4] and bucket[8] of one field name). A write
// that does not record its spec is taken for the current spec only when
// the table never had another.
func (pl publishPlan) sameSpec(md icetable.Metadata, branch string) error {
	cur := md.DefaultPartitionSpec()
	var other []string
	for _, id := range slices.Sorted(maps.Keys(pl.specs)) {
		switch {
		case id == cur, id == -1 && len(md.PartitionSpecs()) == 1:
		case id == -1:
			other = append(other, "unrecorded")
		default:
			other = append(other, strconv.Itoa(id))
		}
	}
	if len(other) == 0 {
		return nil
	}
	return fmt.Errorf("%w: branch %s wrote partitions under spec %s, main's spec is %d now and main moved since the branch's base: drop the branch and write them again on a new one",
		commit.ErrBranchSpecChanged, branch, strings.Join(other, ", "), cur)
}

// codeVersion is the code version of the branch's writes when they all
// agree, else fallback.
func (pl publishPlan) codeVersion(fallback string) string {
	cv := ""
	for _, r := range pl.records {
		if cv != "" && r.CodeVersion != cv {
			return fallback
		}
		cv = r.CodeVersion
	}
	if cv == "" {
		return fallback
	}
	return cv
}

// carriedDeletes fails with [commit.ErrUnsupported] when a partition a
// re-planned publish carries to main holds equality delete files (another
// engine's): the carried files all take the publish's sequence number,
// and an equality delete applies only to data files of a lower one, so
// its rows would come back. Position deletes and deletion vectors apply
// to data files of an equal one: they are carried in delete manifests.
func carriedDeletes(branch string, files map[partition.Key][]iceberg.DataFile) error {
	var keys []string
	for k, fs := range files {
		for _, f := range fs {
			if f.ContentType() == iceberg.EntryContentEqDeletes {
				keys = append(keys, k.String())
				break
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	return fmt.Errorf("%w: branch %s holds equality delete files in %s: only a fast-forward publishes it (main still at the branch's base)",
		commit.ErrUnsupported, branch, strings.Join(keys, ", "))
}

// liveRows is the number of rows files (data and delete files of one
// partition) hold: data rows less position deletes.
func liveRows(files []iceberg.DataFile) int64 {
	var n int64
	for _, f := range files {
		switch f.ContentType() {
		case iceberg.EntryContentData:
			n += f.Count()
		case iceberg.EntryContentPosDeletes:
			n -= f.Count()
		}
	}
	return max(n, 0)
}
