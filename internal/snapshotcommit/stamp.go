package snapshotcommit

import (
	"context"
	"slices"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
)

// Stamp returns what a caller adds to a commit, computed on every
// attempt from the table state the attempt commits on: summary properties
// of the snapshot and table properties to set in the same commit. An
// error stops the loop and is returned wrapped with the request's Op;
// nothing is committed. A streaming sink records its source positions
// this way and fails when another writer took them.
type Stamp func(tbl *icetable.Table) (summary, props iceberg.Properties, err error)

type stampKey struct{}

type stampFor struct {
	ident icetable.Identifier
	fn    Stamp
}

// WithStamp returns ctx carrying fn for the commits of table ident: every
// attempt of a [Replace] or [RowDelta] of ident run with the returned
// context (or one derived from it) calls fn just before it stages its
// snapshot, and adds what fn returns. Commits of other tables under the
// same context (side tables written by the same call) are not stamped.
// It lets a caller stamp the commits a higher-level operation makes
// (table.Writer.ApplyChanges) without that operation knowing about it.
func WithStamp(ctx context.Context, ident icetable.Identifier, fn Stamp) context.Context {
	return context.WithValue(ctx, stampKey{}, stampFor{ident: slices.Clone(ident), fn: fn})
}

// stamp adds the stamp ctx carries for t's table, if any, to the
// summary properties summary and the table properties props of an
// attempt on tbl, and returns them.
func stamp(ctx context.Context, t *Target, tbl *icetable.Table, summary, props iceberg.Properties) (iceberg.Properties, iceberg.Properties, error) {
	s, ok := ctx.Value(stampKey{}).(stampFor)
	if !ok || s.fn == nil || !slices.Equal(s.ident, t.Ident) {
		return summary, props, nil
	}
	sum, set, err := s.fn(tbl)
	if err != nil {
		return nil, nil, err
	}
	if summary == nil {
		summary = iceberg.Properties{}
	}
	for k, v := range sum {
		summary[k] = v
	}
	if len(set) > 0 && props == nil {
		props = iceberg.Properties{}
	}
	for k, v := range set {
		props[k] = v
	}
	return summary, props, nil
}
