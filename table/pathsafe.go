package table

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/partition"
)

// ErrUnsafePartitionValue is returned for a partition value that would
// place a data file outside the table's data folder, or that no file
// system can store in a path (a NUL byte, or a path segment longer than
// [MaxPathSegment] bytes).
//
// iceberg-go escapes a partition value into its data file's path with
// url.QueryEscape ("/" becomes "%2F"), but its local file IO decodes the
// file URI again, so "%2F" turns back into a separator: a string value
// such as "x/../../../etc" would put the file outside the table location.
var ErrUnsafePartitionValue = errors.New("table: unsafe partition value")

// ErrSharedPartitionPath is returned, before anything is committed, when
// one input of a dynamic write holds two partitions whose folder names
// iceberg-go spells alike: a null string and the string "null" are both
// "s=null". iceberg-go v0.7.0's partitioned writer keeps one file writer
// per folder name, so it would write both partitions' rows into one file
// recorded under the first row's values; icerun's own routing (route.go)
// refuses the second key of a folder alike. Write such partitions in
// separate calls.
var ErrSharedPartitionPath = errors.New("table: two partitions share a data folder")

// MaxPathSegment is the longest folder name, in bytes, that a partition
// field may give a data file's path: "name=" and the value, unescaped.
// Common file systems (ext4, XFS, APFS, NTFS) refuse longer names; a value
// over the limit is refused before anything is written. The folder icerun
// creates spells every escaped byte in three (see dataPaths) and is cut
// to this length, ending in a hash, when that spelling is longer.
const MaxPathSegment = 255

// checkPathSafe fails with ErrUnsafePartitionValue when a partition field
// name of tbl's spec is not a valid name (partition.CheckFieldName; the
// error wraps partition.ErrInvalidFieldName too), when a string value of
// k, split at path separators, has a "." or ".." segment after its first
// (the first is prefixed with "name=", so it is never one), or a NUL byte,
// or when a folder of k's path in tbl (a key of spec, tbl's current spec)
// is longer than MaxPathSegment bytes.
func checkPathSafe(tbl *icetable.Table, spec *partition.Spec, k partition.Key) error {
	// A field name is a folder prefix: one with a separator or a ".."
	// would place files elsewhere. Writes refuse such names up front
	// (Writer.head); this keeps any path built here from holding one.
	if err := partition.CheckFieldNames(tbl.Spec()); err != nil {
		return fmt.Errorf("%w: key %s: %w", ErrUnsafePartitionValue, shortKey(k), err)
	}
	vals, err := spec.Values(k)
	if err != nil {
		return err
	}
	for _, v := range vals {
		s, ok := v.(string)
		if !ok {
			continue
		}
		if strings.IndexByte(s, 0) >= 0 {
			return fmt.Errorf("%w: key %s: value has a NUL byte", ErrUnsafePartitionValue, k)
		}
		segs := strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' })
		if strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
			segs = append([]string{""}, segs...)
		}
		for i, seg := range segs {
			if i > 0 && (seg == "." || seg == "..") {
				return fmt.Errorf("%w: key %s: value has a %q path segment", ErrUnsafePartitionValue, k, seg)
			}
		}
	}
	for seg := range strings.SplitSeq(partitionPath(tbl, vals), "/") {
		if name, err := url.PathUnescape(seg); err == nil {
			seg = name
		}
		if len(seg) > MaxPathSegment {
			name, _, _ := strings.Cut(seg, "=")
			return fmt.Errorf("%w: key %s: field %s makes a %d-byte folder name, over the %d-byte limit of file systems",
				ErrUnsafePartitionValue, shortKey(k), name, len(seg), MaxPathSegment)
		}
	}
	return nil
}

// partitionPath is the folder, relative to the table's data folder, in
// which iceberg-go writes the files of the partition with values vals
// (partition field id to value, as [partition.Spec.Values] gives them) of
// tbl's current spec: "name=value/..." with escaped values.
func partitionPath(tbl *icetable.Table, vals map[int]any) string {
	ps := tbl.Spec()
	row := make(partitionRow, 0, ps.NumFields())
	for _, f := range ps.Fields() {
		row = append(row, vals[f.FieldID])
	}
	return ps.PartitionToPath(row, tbl.Schema())
}

// shortKey is k's text, cut to a length fit for an error message.
func shortKey(k partition.Key) string {
	const limit = 120
	if s := k.String(); len(s) > limit {
		return fmt.Sprintf("%s... (%d bytes)", s[:limit], len(s))
	}
	return k.String()
}
