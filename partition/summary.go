package partition

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/google/uuid"
)

// MayHold reports whether a manifest of spec s whose partition field
// summaries are sums may list data files of k. It is false only when the
// summaries prove that it lists none: a null value the manifest has no
// null for, or a value outside a field's lower and upper bound. Summaries
// it cannot read (absent, of another length, undecodable) give true, so
// pruning on it is always safe.
func (s *Spec) MayHold(k Key, sums []iceberg.FieldSummary) bool {
	if s.check(k) != nil || len(sums) != len(s.fields) {
		return true
	}
	vals, err := s.parse(k.text)
	if err != nil {
		return true
	}
	for i := range s.fields {
		if f := &s.fields[i]; f.result != nil && !f.mayHold(vals[i], sums[i]) {
			return false
		}
	}

	return true
}

// mayHold reports whether a manifest summarised by sum may hold value v of f.
func (f *field) mayHold(v any, sum iceberg.FieldSummary) bool {
	switch {
	case v == nil:
		return sum.ContainsNull
	case isNaN(v):
		return sum.ContainsNaN == nil || *sum.ContainsNaN
	case sum.LowerBound == nil || sum.UpperBound == nil:
		return true // no bounds written, or only nulls and NaN: not provable
	}
	lo, okLo := f.bound(*sum.LowerBound)
	hi, okHi := f.bound(*sum.UpperBound)
	if !okLo || !okHi || isNaN(lo) || isNaN(hi) {
		// Unreadable, or NaN: writers older than the rule that keeps NaN
		// out of bounds put it there, and cmp.Compare orders it below
		// every number.
		return true
	}
	cLo, okLo := compareValues(v, lo)
	cHi, okHi := compareValues(v, hi)
	if !okLo || !okHi || (cLo >= 0 && cHi <= 0) {
		return true
	}
	if u, ok := v.(uuid.UUID); ok {
		// Java Iceberg before apache/iceberg#14500 ordered UUIDs as
		// java.util.UUID does, two signed longs: its bounds are a range
		// in that order.
		return compareJavaUUID(u, lo.(uuid.UUID)) >= 0 && compareJavaUUID(u, hi.(uuid.UUID)) <= 0
	}

	return false
}

// compareJavaUUID orders UUIDs as java.util.UUID.compareTo does.
func compareJavaUUID(a, b uuid.UUID) int {
	if c := cmp.Compare(int64(binary.BigEndian.Uint64(a[:8])), int64(binary.BigEndian.Uint64(b[:8]))); c != 0 {
		return c
	}

	return cmp.Compare(int64(binary.BigEndian.Uint64(a[8:])), int64(binary.BigEndian.Uint64(b[8:])))
}

// bound decodes a summary bound (Iceberg's single-value serialisation) to
// f's Go form.
func (f *field) bound(b []byte) (any, bool) {
	if f.vt.kind == kindFixed && len(b) != f.vt.length {
		return nil, false // iceberg-go would pad a short one with zeros
	}
	lit, err := iceberg.LiteralFromBytes(f.result, b)
	if err != nil {
		return nil, false
	}
	v, err := convertValue(f.vt, lit)

	return v, err == nil
}

func isNaN(v any) bool {
	switch f := v.(type) {
	case float32:
		return math.IsNaN(float64(f))
	case float64:
		return math.IsNaN(f)
	}

	return false
}

// compareValues orders two partition values of the same Go form (see
// convertValue) the way Iceberg orders them; false when it cannot.
func compareValues(a, b any) (int, bool) {
	switch a := a.(type) {
	case bool:
		b, ok := b.(bool)
		if !ok {
			return 0, false
		}
		switch {
		case a == b:
			return 0, true
		case !a:
			return -1, true
		}

		return 1, true
	case int32:
		return compareOrdered(a, b)
	case int64:
		return compareOrdered(a, b)
	case float32:
		return compareOrdered(a, b)
	case float64:
		return compareOrdered(a, b)
	case iceberg.Date:
		return compareOrdered(a, b)
	case iceberg.Time:
		return compareOrdered(a, b)
	case iceberg.Timestamp:
		return compareOrdered(a, b)
	case iceberg.TimestampNano:
		return compareOrdered(a, b)
	case string:
		return compareOrdered(a, b) // Go compares strings bytewise, as Iceberg orders UTF-8
	case iceberg.Decimal:
		b, ok := b.(iceberg.Decimal)
		if !ok || a.Scale != b.Scale {
			return 0, false
		}

		return a.Val.Cmp(b.Val), true
	case uuid.UUID:
		b, ok := b.(uuid.UUID)
		if !ok {
			return 0, false
		}

		return bytes.Compare(a[:], b[:]), true
	case []byte:
		b, ok := b.([]byte)
		if !ok {
			return 0, false
		}

		return bytes.Compare(a, b), true
	}

	return 0, false
}

func compareOrdered[T cmp.Ordered](a T, b any) (int, bool) {
	bv, ok := b.(T)
	if !ok {
		return 0, false
	}

	return cmp.Compare(a, bv), true
}

// Compare orders two keys of s by their partition values, field by field,
// the way Iceberg orders values (nulls first), so that files sorted by it
// give manifests with narrow partition ranges. Keys that are not of s, or
// values it cannot order, compare by their text.
func (s *Spec) Compare(a, b Key) int {
	va, errA := s.parse(a.text)
	vb, errB := s.parse(b.text)
	if s.check(a) != nil || s.check(b) != nil || errA != nil || errB != nil {
		return cmp.Compare(a.text, b.text)
	}

	return compareTuples(va, vb, a.text, b.text)
}

// SortKeys sorts keys of s in place by [Spec.Compare], parsing each once.
func (s *Spec) SortKeys(keys []Key) {
	type parsed struct {
		key  Key
		vals []any
	}
	ps := make([]parsed, len(keys))
	for i, k := range keys {
		ps[i].key = k
		if s.check(k) == nil {
			ps[i].vals, _ = s.parse(k.text)
		}
	}
	slices.SortStableFunc(ps, func(a, b parsed) int {
		if a.vals == nil || b.vals == nil {
			return cmp.Compare(a.key.text, b.key.text)
		}
		return compareTuples(a.vals, b.vals, a.key.text, b.key.text)
	})
	for i := range ps {
		keys[i] = ps[i].key
	}
}

func compareTuples(a, b []any, ta, tb string) int {
	for i := range a {
		switch {
		case a[i] == nil && b[i] == nil:
			continue
		case a[i] == nil:
			return -1
		case b[i] == nil:
			return 1
		}
		c, ok := compareValues(a[i], b[i])
		if !ok {
			return cmp.Compare(ta, tb)
		}
		if c != 0 {
			return c
		}
	}

	return 0
}

// Summaries returns the partition field summaries of a manifest of spec s
// that lists files with partition values parts (keyed by partition field
// id, as iceberg.DataFile.Partition gives them), in spec field order, as
// the spec's field_summary defines them and Java writes them:
// contains_null and contains_nan (set for every type) say whether a null
// and a NaN are there; the bounds are the least and greatest other value
// in Iceberg's order, where -0.0 is below +0.0, so that a -0.0 never has
// +0.0 as its lower bound nor a +0.0 -0.0 as its upper bound; NaN is never
// a bound. A bound of an empty string or byte string is zero-length bytes,
// never null: Java reads a null lower bound as "no value can match".
//
// It fails when a value cannot be converted to its field's type.
func (s *Spec) Summaries(parts []map[int]any) ([]iceberg.FieldSummary, error) {
	out := make([]iceberg.FieldSummary, len(s.fields))
	for i := range s.fields {
		f := &s.fields[i]
		var lo, hi any
		nan := false
		for _, part := range parts {
			v := part[f.id]
			if v == nil || f.tk == transformVoid {
				out[i].ContainsNull = true
				continue
			}
			v, err := convertValue(f.vt, v)
			if err != nil {
				return nil, fmt.Errorf("partition: spec %d: field %s: %w", s.id, f.name, err)
			}
			if isNaN(v) {
				nan = true
				continue
			}
			if lo == nil {
				lo, hi = v, v
				continue
			}
			cLo, okLo := boundOrder(v, lo)
			cHi, okHi := boundOrder(v, hi)
			if !okLo || !okHi {
				return nil, fmt.Errorf("partition: spec %d: field %s: cannot order %v", s.id, f.name, v)
			}
			if cLo < 0 {
				lo = v
			}
			if cHi > 0 {
				hi = v
			}
		}
		out[i].ContainsNaN = &nan
		if lo == nil {
			continue
		}
		lb, err := boundBytes(lo)
		if err != nil {
			return nil, fmt.Errorf("partition: spec %d: field %s: %w", s.id, f.name, err)
		}
		ub, err := boundBytes(hi)
		if err != nil {
			return nil, fmt.Errorf("partition: spec %d: field %s: %w", s.id, f.name, err)
		}
		out[i].LowerBound, out[i].UpperBound = &lb, &ub
	}

	return out, nil
}

// boundOrder is compareValues with -0.0 ordered below +0.0, as Java's
// Float.compare and Double.compare order them.
func boundOrder(a, b any) (int, bool) {
	c, ok := compareValues(a, b)
	if !ok || c != 0 {
		return c, ok
	}
	switch a := a.(type) {
	case float32:
		return cmp.Compare(boolInt(!math.Signbit(float64(a))), boolInt(!math.Signbit(float64(b.(float32))))), true
	case float64:
		return cmp.Compare(boolInt(!math.Signbit(a)), boolInt(!math.Signbit(b.(float64)))), true
	}

	return 0, true
}

func boolInt(b bool) int {
	if b {
		return 1
	}

	return 0
}

// boundBytes is Iceberg's single-value serialisation of v, a value in
// convertValue's Go form: a fresh slice, zero-length (not nil) for an
// empty string or byte string.
func boundBytes(v any) ([]byte, error) {
	var lit iceberg.Literal
	switch v := v.(type) {
	case bool:
		lit = iceberg.NewLiteral(v)
	case int32:
		lit = iceberg.NewLiteral(v)
	case int64:
		lit = iceberg.NewLiteral(v)
	case float32:
		lit = iceberg.NewLiteral(v)
	case float64:
		lit = iceberg.NewLiteral(v)
	case iceberg.Decimal:
		lit = iceberg.NewLiteral(v)
	case iceberg.Date:
		lit = iceberg.NewLiteral(v)
	case iceberg.Time:
		lit = iceberg.NewLiteral(v)
	case iceberg.Timestamp:
		lit = iceberg.NewLiteral(v)
	case iceberg.TimestampNano:
		lit = iceberg.NewLiteral(v)
	case string:
		lit = iceberg.NewLiteral(v)
	case uuid.UUID:
		lit = iceberg.NewLiteral(v)
	case []byte:
		lit = iceberg.NewLiteral(v)
	default:
		return nil, fmt.Errorf("no bound serialisation for %T", v)
	}
	b, err := lit.MarshalBinary()
	if err != nil {
		return nil, err
	}

	return append(make([]byte, 0, len(b)), b...), nil
}

// RepairSummaries returns sums, the partition field summaries of a
// manifest of spec s, with the lower bounds that a writer like iceberg-go
// v0.7.0 left null for the empty string or byte string set to zero-length
// bytes, and whether it changed any. Such a writer serialises the empty
// value to nil bytes, which Avro writes as null, and Java readers then skip
// every partition of the manifest. Only string and binary fields with an
// upper bound and no lower bound change: their least value was empty, and
// the empty value is below every other, so the repaired bound never
// excludes a value. A field without bounds is left alone: that every value
// was empty cannot be told from a writer that wrote no bounds.
func (s *Spec) RepairSummaries(sums []iceberg.FieldSummary) ([]iceberg.FieldSummary, bool) {
	if len(sums) != len(s.fields) {
		return sums, false
	}
	out, changed := sums, false
	for i := range s.fields {
		f, sum := &s.fields[i], sums[i]
		if f.tk == transformVoid || (f.vt.kind != kindString && f.vt.kind != kindBinary) || sum.LowerBound != nil || sum.UpperBound == nil {
			continue
		}
		if !changed {
			out, changed = slices.Clone(sums), true
		}
		out[i].LowerBound = &[]byte{}
	}

	return out, changed
}
