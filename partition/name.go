package partition

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// ErrInvalidFieldName reports a partition field name that an Avro
// manifest cannot hold. Avro names are [A-Za-z_][A-Za-z0-9_]*: iceberg-go
// writes each partition field as a field of the manifest's Avro record
// and fails on any other name ("event-date", "my field", "1day", "a/b",
// ".."), and a name is also the folder prefix of every data file path,
// where a separator or a ".." could leave the table location.
var ErrInvalidFieldName = errors.New("partition: invalid field name")

// CheckFieldName returns nil when name is a valid partition field name
// (an Avro name: a letter or "_", then letters, digits or "_"), and
// otherwise an error wrapping [ErrInvalidFieldName] that suggests one.
func CheckFieldName(name string) error {
	if validName(name) {
		return nil
	}

	return fmt.Errorf("%w %q: an Avro manifest holds only names of letters, digits and \"_\", not starting with a digit; use %q",
		ErrInvalidFieldName, name, suggestName(name))
}

// CheckFieldNames checks every field name of spec with [CheckFieldName]:
// before creating a table, and before writing to one.
func CheckFieldNames(spec iceberg.PartitionSpec) error {
	for _, f := range spec.Fields() {
		if err := CheckFieldName(f.Name); err != nil {
			return fmt.Errorf("partition: spec %d: %w", spec.ID(), err)
		}
	}

	return nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9' {
			continue
		}

		return false
	}

	return true
}

// suggestName is name with every character an Avro name cannot hold
// replaced by "_", and "_" in front of a leading digit.
func suggestName(name string) string {
	var b strings.Builder
	for i, c := range name {
		switch {
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c >= '0' && c <= '9':
			if i == 0 && c >= '0' && c <= '9' {
				b.WriteByte('_')
			}
			b.WriteRune(c)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}

	return b.String()
}
