package decode

import (
	"slices"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/icerun/icerun/sink"
)

// Decoder turns message values (in the order of their source, one
// partition's offsets for Kafka) into an Arrow batch with one row per
// value it can decode, in the same order, and the values it cannot. A
// nil value (a Kafka tombstone) decodes as an empty one: [JSON] and
// [AvroConfluent] reject it, and so does [Avro] unless its writer
// schema's datums can be empty; the change-event formats skip it
// ([Decoded.Skipped]). Its error stops the sink: keep it for
// failures that are not a message's fault.
type Decoder func(values [][]byte) (Decoded, error)

// Decoded is what a [Decoder] made of values: each value is a row of
// Rows, a reject in Bad, or (change-event formats only) in Skipped. The
// caller releases Rows.
type Decoded struct {
	Rows arrow.RecordBatch // one row per value not in Bad or Skipped, in order
	Bad  []Rejected        // by increasing Index
	// NewColumns are fields of the values the schema lacks, with the
	// type a column for them takes, and, for a struct column (or a list
	// or map of structs) whose values have fields it lacks, the column
	// with a type of only those fields; only decoders made to evolve
	// report them, and their values are not in Rows.
	NewColumns []sink.Column
	// Changes, from a change-event format ([DebeziumFormat],
	// [DebeziumAvroConfluent], [DebeziumAvro]), are one
	// per row of Rows: what the row's event does to its key, and where
	// it stands in its source. Other formats leave it nil.
	Changes []Change
	// Skipped are the values that are neither a row nor a reject: the
	// tombstones a change-event format skips (their source positions
	// still count as consumed). By increasing index; other formats
	// leave it nil, and then Rows has one row per value not in Bad.
	Skipped []int
}

// Format makes the [Decoder] of rows of the table Arrow schema sc (the
// table's schema as table.SchemaToArrowSchema makes it, with field ids).
// With evolve, the decoder reports in [Decoded.NewColumns] the fields the
// schema lacks. [JSONFormat], [Avro], [AvroConfluent] and the change-event
// formats ([DebeziumFormat], [DebeziumAvroConfluent], [DebeziumAvro]) are
// formats.
type Format func(sc *arrow.Schema, evolve bool) (Decoder, error)

// Rejected is a value a [Decoder] could not turn into a row: it goes to
// [sink.Sink.Reject].
type Rejected struct {
	Index  int // in the values handed to the decoder
	Reason string
}

func sortRejected(bad []Rejected) {
	slices.SortFunc(bad, func(a, b Rejected) int { return a.Index - b.Index })
}
