package table

import "fmt"

// WithUpsertOrder names the input columns that decide between input rows
// of [Writer.Upsert] that share a key, compared lexicographically (the
// first column decides, the next breaks its ties, and so on): the row
// with the greatest order wins (a null is lower than every value). Rows
// with an equal order must be identical, or the upsert fails with
// [ErrDuplicateKey]. Each column must be an integer, date, time,
// timestamp or string column. Default: no ordering columns; rows that
// share a key must be identical.
func WithUpsertOrder(columns ...string) Option {
	return func(c *config) error {
		if len(columns) == 0 {
			return fmt.Errorf("%w: no upsert order column", ErrBadOption)
		}
		for _, col := range columns {
			if col == "" {
				return fmt.Errorf("%w: empty upsert order column", ErrBadOption)
			}
		}
		c.upsertOrder = append([]string(nil), columns...)
		return nil
	}
}

// WithUpsertNewerOnly makes [Writer.Upsert] compare each input key's
// winning row with the rows the table holds for that key (in any
// partition), by the [WithUpsertOrder] columns: an input row whose order
// is not greater than the greatest stored one changes nothing, and is
// counted in [commit.Result].Stale. A late or redelivered older event
// then never overwrites a newer state. It needs [WithUpsertOrder]; Open
// fails without it. Default: off, the input's rows replace the stored
// ones whatever their order.
func WithUpsertNewerOnly() Option {
	return func(c *config) error {
		c.upsertNewerOnly = true
		return nil
	}
}
