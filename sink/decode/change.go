package decode

import "fmt"

// Op is what a change event does to the row of its key.
type Op uint8

const (
	// Upsert makes the event's row the key's state: an insert, an
	// update, or a row read by a snapshot of the source table.
	Upsert Op = iota + 1
	// Delete removes the key's row. The event's row is the image the
	// source gave of the deleted row: its key columns at least; the
	// others may be placeholders (Debezium's PostgreSQL connector writes
	// the zero of each NOT NULL column under the default replica
	// identity) or null even where the table requires them, so a deleted
	// row is matched by its key and never written as data.
	Delete
)

// String is "upsert" or "delete".
func (o Op) String() string {
	switch o {
	case Upsert:
		return "upsert"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Change is what a change-event format says of one row besides its
// columns: the operation, and the row's order in its source, the values
// of the format's ordering fields (for [DebeziumFormat], [DebeziumOrder])
// in that order. Of two changes of one key, the one whose Order is
// greater, compared element by element with the first difference
// deciding, is the later. A Change is a value: safe to copy, and Order
// is never changed once made.
type Change struct {
	Op    Op
	Order []int64
}

// Compare is -1, 0 or +1 as c's order is before, the same as or after
// o's, element by element (a shorter order that is a prefix of the other
// is before it).
func (c Change) Compare(o Change) int {
	for i := 0; i < len(c.Order) && i < len(o.Order); i++ {
		switch {
		case c.Order[i] < o.Order[i]:
			return -1
		case c.Order[i] > o.Order[i]:
			return 1
		}
	}
	switch {
	case len(c.Order) < len(o.Order):
		return -1
	case len(c.Order) > len(o.Order):
		return 1
	}
	return 0
}
