package table

import (
	"errors"
	"fmt"
	"strings"

	"github.com/icerun/icerun/partition"
)

// ErrUnsafePartitionValue is returned for a partition value that would
// place a data file outside the table's data folder, or that no file
// system can store in a path (a NUL byte).
//
// iceberg-go escapes a partition value into its data file's path with
// url.QueryEscape ("/" becomes "%2F"), but its local file IO decodes the
// file URI again, so "%2F" turns back into a separator: a string value
// such as "x/../../../etc" would put the file outside the table location.
var ErrUnsafePartitionValue = errors.New("table: unsafe partition value")

// checkPathSafe fails with ErrUnsafePartitionValue when a string value of
// k, split at path separators, has a "." or ".." segment after its first
// (the first is prefixed with "name=", so it is never one), or a NUL byte.
func checkPathSafe(spec *partition.Spec, k partition.Key) error {
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
	return nil
}
