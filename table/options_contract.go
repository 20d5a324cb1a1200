package table

import (
	"fmt"

	"github.com/icerun/icerun/schema"
)

// WithContract registers the producer's input contract. Every input is
// checked against it before anything is written; an input that violates it
// (a missing required column, a null in one, a type that cannot be
// promoted, an unknown field under schema.RejectUnknown) is quarantined:
// its rows are written, with the reason, the run id and the time, to the
// sibling table <table>_quarantine (created on first use), and the call
// fails with [ErrQuarantined] naming that table. Nothing reaches the target
// table. Default: no contract (the table schema alone is checked, and
// violations are plain errors).
func WithContract(c schema.Contract) Option {
	return func(cfg *config) error {
		if len(c.Columns) == 0 {
			return fmt.Errorf("%w: contract without columns", ErrBadOption)
		}
		cfg.contract = &c
		return nil
	}
}
