package snapshotcommit

import (
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// Row-level delete files (format v2 and later) in a replacement.
//
// A replacement removes, besides data files, the delete files that Java's
// ReplacePartitions (MergingSnapshotProducer) removes:
//   - the delete files of a replaced partition (same spec, same partition
//     tuple): position deletes and deletion vectors there can only refer to
//     the partition's data files, and its equality deletes only apply to
//     them, all of which the replacement removes;
//   - delete files whose data sequence number is below that of every live
//     data file left in the table: they apply to no row (equality deletes
//     apply to data files of a lower sequence number, position deletes to
//     a lower or equal one). That covers global equality deletes (of an
//     unpartitioned spec) that only applied to replaced files;
//   - on format v3, deletion vectors whose referenced data file the
//     replacement removes (Java's removeDanglingDeletesFor).
//
// Every other delete file stays: a global equality delete that still
// applies to other partitions, position deletes of an older spec. None of
// them applies to the new data files, whose sequence number is higher.

// fileID names a file of a manifest entry: its path, and for a deletion
// vector the offset of its blob, since one Puffin file holds the vectors
// of several data files (of several partitions).
func fileID(f iceberg.DataFile) string {
	if off := f.ContentOffset(); off != nil && icetable.IsDeletionVector(f) {
		return f.FilePath() + "#" + strconv.FormatInt(*off, 10)
	}

	return f.FilePath()
}

// taskID names an older-spec data file together with the delete files that
// apply to it: a decision taken on its rows holds while both are the same.
func taskID(t icetable.FileScanTask) string {
	ids := []string{fileID(t.File)}
	for _, fs := range [][]iceberg.DataFile{t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles} {
		for _, f := range fs {
			ids = append(ids, fileID(f))
		}
	}
	slices.Sort(ids[1:])

	return strings.Join(ids, "\x00")
}

// deleteDrop decides which live delete entries of the table a commit
// removes, besides those it names.
type deleteDrop struct {
	minDataSeq int64           // delete files below it apply to no live data file
	deadData   map[string]bool // paths of the data files the commit removes (v3: their deletion vectors go)
}

// drops reports whether the live delete entry e applies to nothing once
// the commit is applied.
func (d *deleteDrop) drops(e iceberg.ManifestEntry) bool {
	if e.SequenceNum() >= 0 && e.SequenceNum() < d.minDataSeq {
		return true
	}
	f := e.DataFile()
	ref := f.ReferencedDataFile()

	return d.deadData != nil && ref != nil && icetable.IsDeletionVector(f) && d.deadData[*ref]
}

// minDataSequence is the lowest data sequence number of the live data
// files in manifests (Java: the data manifests' min_sequence_number),
// capped at the table's last sequence number. Manifests the commit wrote
// with only new files have none yet (-1).
func minDataSequence(md icetable.Metadata, manifests []iceberg.ManifestFile) int64 {
	low := md.LastSequenceNumber()
	for _, mf := range manifests {
		if mf.ManifestContent() == iceberg.ManifestContentData && mf.MinSequenceNum() >= 0 {
			low = min(low, mf.MinSequenceNum())
		}
	}

	return low
}
