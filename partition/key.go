package partition

import "github.com/apache/iceberg-go"

// Key is the value of every partition field of one partition of one spec.
// It is small, comparable and immutable, like net/netip.Addr; the zero Key
// is invalid. Two keys are equal when they have the same spec id and the
// same canonical text.
type Key struct {
	spec  int
	valid bool
	text  string // canonical text
}

// ParseKey parses key text s against spec compiled with sch. It is
// NewSpec(spec, sch) followed by [Spec.Parse]; compile the spec once with
// [NewSpec] to parse many keys.
func ParseKey(spec iceberg.PartitionSpec, sch *iceberg.Schema, s string) (Key, error) {
	sp, err := NewSpec(spec, sch)
	if err != nil {
		return Key{}, err
	}

	return sp.Parse(s)
}

// String returns the canonical text "name=value/name=value" described in the
// package documentation, "" for the key of an unpartitioned spec and
// "invalid key" for the zero Key.
func (k Key) String() string {
	if !k.valid {
		return "invalid key"
	}

	return k.text
}

// SpecID returns the id of the partition spec k belongs to.
func (k Key) SpecID() int { return k.spec }

// IsValid reports whether k is a key, not the zero Key.
func (k Key) IsValid() bool { return k.valid }
