package table

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/internal/rowdelete"
	"github.com/icerun/icerun/recordid"
)

// keyMatcher picks the rows whose encoded key is in keys. With a
// keyRange (the keys' first column values) it skips the data files whose
// bounds on that column hold none of them.
type keyMatcher struct {
	schema *iceberg.Schema // the key columns
	enc    *recordid.Encoder
	keys   map[string]struct{}
	filter *keyFilter // keys, to turn most other rows away without a lookup
	// firstInts, when not nil, holds the first key column's values of
	// every key (from rng, when that column is an integer, date, time or
	// timestamp): a row whose value it turns away is not encoded at all.
	firstInts *keyFilter
	buf       []byte
	rng       *keyRange // nil: every file is read
	first     int       // field id of the first key column
}

func newKeyMatcher(tbl *icetable.Table, keyColumns []string, keys map[string]struct{}, rng *keyRange) (*keyMatcher, error) {
	ks, err := tbl.Schema().Select(true, keyColumns...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	enc, err := recordid.NewEncoder(keyColumns...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	m := &keyMatcher{schema: ks, enc: enc, keys: keys, filter: newKeyFilter(keys)}
	if f, ok := tbl.Schema().FindFieldByName(keyColumns[0]); ok && rng.prunes() {
		m.rng, m.first = rng, f.ID
		if len(rng.ints) > 0 {
			m.firstInts = newIntFilter(rng.ints)
		}
	}
	return m, nil
}

func (m *keyMatcher) ReadSchema() *iceberg.Schema { return m.schema }

func (m *keyMatcher) Fork() rowdelete.Matcher {
	enc, _ := recordid.NewEncoder(m.enc.Columns()...) // the same columns: cannot fail
	return &keyMatcher{schema: m.schema, enc: enc, keys: m.keys, filter: m.filter, firstInts: m.firstInts, rng: m.rng, first: m.first}
}

func (m *keyMatcher) MayHold(f iceberg.DataFile) bool {
	return m.rng == nil || m.rng.mayHold(f, m.first)
}

func (m *keyMatcher) Match(_ context.Context, rec arrow.RecordBatch, hit func(row int, key []byte)) error {
	if err := m.enc.Bind(rec); err != nil {
		return fmt.Errorf("%w: %w", ErrBadUpsertKey, err)
	}
	var first func(int) int64
	if m.firstInts != nil {
		if idx := rec.Schema().FieldIndices(m.rng.column); len(idx) == 1 {
			first = intValues(rec.Column(idx[0]))
		}
	}
	for row := range int(rec.NumRows()) {
		if first != nil && !m.firstInts.mayHoldInt(first(row)) {
			continue
		}
		m.buf = m.enc.Append(m.buf[:0], row)
		if !m.filter.mayHold(m.buf) {
			continue
		}
		if _, ok := m.keys[string(m.buf)]; ok {
			hit(row, m.buf)
		}
	}
	return nil
}
