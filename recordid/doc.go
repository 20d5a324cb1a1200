// Package recordid derives deterministic record ids from source columns.
//
// A record's id must come from the data itself (an order id, an event type,
// an event time), never from the writer: then a redelivered or replayed
// record gets the same id, and an upsert on that id replaces it instead of
// adding a copy.
//
// # Basics
//
// [Encoder] writes the values of chosen columns of one row as canonical
// bytes: the same values give the same bytes on any machine, in any run,
// whatever the batch boundaries. Integers of every width encode alike (so an
// int -> long promotion of the table keeps every id), as do float and
// double, and timestamps of every unit (as nanoseconds since the epoch,
// whatever the time zone). Strings are length-prefixed, so ("ab","c") and
// ("a","bc") differ. A null is a value of its own, distinct from every
// other value and equal to itself.
//
// [Deriver] turns those bytes into a name-based UUID (version 5, SHA-1,
// RFC 9562) under a namespace UUID of the caller's choosing, one per row,
// without a per-row allocation. [Deriver.Append] adds the ids as a string
// column; [Deriver.Reader] does so for every batch of a reader.
//
// # Caveats
//
// Nested columns (struct, list, map) are not supported as id sources
// ([ErrUnsupportedType]). Ids are only as stable as the chosen columns:
// a column filled from the clock or a sequence gives a new id per run.
package recordid
