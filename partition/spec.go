package partition

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/iceberg-go"
)

// Spec is an iceberg.PartitionSpec compiled against a schema. It is
// immutable and safe for concurrent use.
type Spec struct {
	id     int
	fields []field
	byName map[string]int // partition field name -> index in fields
}

// NewSpec compiles spec against sch, the schema its source ids refer to.
// It rejects transforms iceberg-go does not know or that cannot apply to
// their source column's type, transforms of several source columns and
// source columns missing from sch, with [ErrUnsupportedSpec].
func NewSpec(spec iceberg.PartitionSpec, sch *iceberg.Schema) (*Spec, error) {
	if sch == nil {
		return nil, fmt.Errorf("%w: spec %d: nil schema", ErrUnsupportedSpec, spec.ID())
	}
	s := &Spec{id: spec.ID(), byName: make(map[string]int, spec.NumFields())}
	for i, pf := range spec.Fields() {
		f, err := compileField(pf, sch)
		if err != nil {
			return nil, fmt.Errorf("%w: spec %d: field %s: %w", ErrUnsupportedSpec, s.id, pf.Name, err)
		}
		if _, dup := s.byName[f.name]; dup {
			return nil, fmt.Errorf("%w: spec %d: duplicate field name %s", ErrUnsupportedSpec, s.id, f.name)
		}
		s.byName[f.name] = i
		s.fields = append(s.fields, f)
	}

	return s, nil
}

// ID returns the partition spec id.
func (s *Spec) ID() int { return s.id }

// Parse parses key text (see the package documentation). Errors wrap
// [ErrMalformedKey].
func (s *Spec) Parse(str string) (Key, error) {
	vals, err := s.parse(str)
	if err != nil {
		return Key{}, err
	}

	return s.key(vals), nil
}

// key makes the key of typed values in spec order.
func (s *Spec) key(vals []any) Key {
	parts := make([]string, len(s.fields))
	for i := range s.fields {
		parts[i] = s.fields[i].text(vals[i])
	}

	return Key{spec: s.id, valid: true, text: strings.Join(parts, "/")}
}

// parse parses key text into typed values in spec order.
func (s *Spec) parse(str string) ([]any, error) {
	fail := func(field, format string, args ...any) error {
		return &keyError{subject: fmt.Sprintf("key %q", str), field: field, msg: fmt.Sprintf(format, args...)}
	}
	vals := make([]any, len(s.fields))
	if str == "" {
		if len(s.fields) > 0 {
			return nil, fail(s.fields[0].name, "missing")
		}

		return vals, nil
	}
	seen := make([]bool, len(s.fields))
	for seg := range strings.SplitSeq(str, "/") {
		rawName, rawVal, ok := strings.Cut(seg, "=")
		if !ok {
			return nil, fail("", "segment %q: missing \"=\"; %s", seg, s.keyHint())
		}
		name, err := unescape(rawName)
		if err != nil {
			return nil, fail("", "bad escape in field name %q", rawName)
		}
		i, ok := s.byName[name]
		if !ok {
			return nil, fail("", "unknown field %q; %s", name, s.keyHint())
		}
		if seen[i] {
			return nil, fail(name, "duplicate")
		}
		seen[i] = true
		if vals[i], err = s.fields[i].parse(rawVal); err != nil {
			return nil, fail(name, "%v", err)
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, fail(s.fields[i].name, "missing")
		}
	}

	return vals, nil
}

// KeyFromValues makes the key of partition values keyed by partition field
// id, as iceberg.DataFile.Partition returns them, both for files just
// written by table.WriteRecords and for files read back from manifests. A
// nil value is null; a void field may be absent. Errors wrap
// [ErrMalformedKey].
func (s *Spec) KeyFromValues(vals map[int]any) (Key, error) {
	fail := func(field, format string, args ...any) error {
		return &keyError{subject: "values", field: field, msg: fmt.Sprintf(format, args...)}
	}
	parts := make([]string, len(s.fields))
	used := 0
	for i := range s.fields {
		f := &s.fields[i]
		v, ok := vals[f.id]
		if ok {
			used++
		} else if f.tk != transformVoid {
			return Key{}, fail(f.name, "missing (partition field id %d)", f.id)
		}
		if v != nil && f.tk != transformVoid {
			var err error
			if v, err = convertValue(f.vt, v); err != nil {
				return Key{}, fail(f.name, "%v", err)
			}
		} else if v != nil {
			return Key{}, fail(f.name, "void value must be null, got %v", v)
		}
		parts[i] = f.text(v)
	}
	if used != len(vals) {
		return Key{}, fail("", "unknown partition field ids %v", s.unknownIDs(vals))
	}

	return s.Parse(strings.Join(parts, "/"))
}

func (s *Spec) unknownIDs(vals map[int]any) []int {
	var ids []int
	for id := range vals {
		known := false
		for i := range s.fields {
			known = known || s.fields[i].id == id
		}
		if !known {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)

	return ids
}

// Values returns the typed partition values of k keyed by partition field
// id, in the Go types iceberg-go's writer puts in iceberg.DataFile.Partition
// (int32 for year, month, hour and bucket; iceberg.Date for day; the source
// type's form for identity and truncate); nil is null. It returns an error
// wrapping [ErrWrongSpec] when k belongs to another spec.
func (s *Spec) Values(k Key) (map[int]any, error) {
	if err := s.check(k); err != nil {
		return nil, err
	}
	vals, err := s.parse(k.text)
	if err != nil {
		return nil, err
	}
	out := make(map[int]any, len(vals))
	for i, v := range vals {
		out[s.fields[i].id] = v
	}

	return out, nil
}

// check reports whether k is a valid key of s.
func (s *Spec) check(k Key) error {
	switch {
	case !k.valid:
		return fmt.Errorf("partition: invalid key: %w", ErrMalformedKey)
	case k.spec != s.id:
		return fmt.Errorf("partition: key %s of spec %d used with spec %d: %w", k.text, k.spec, s.id, ErrWrongSpec)
	}

	return nil
}
