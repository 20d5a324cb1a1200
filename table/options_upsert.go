package table

import "fmt"

// WithUpsertOrder names an input column that decides between input rows
// of [Writer.Upsert] that share a key: the row with the greatest value
// wins (a null is lower than every value). Rows with an equal order value
// must be identical, or the upsert fails with [ErrDuplicateKey]. The
// column must be an integer, date, time, timestamp or string column.
// Default: no ordering column; rows that share a key must be identical.
func WithUpsertOrder(column string) Option {
	return func(c *config) error {
		if column == "" {
			return fmt.Errorf("%w: empty upsert order column", ErrBadOption)
		}
		c.upsertOrder = column
		return nil
	}
}
