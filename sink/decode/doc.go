// Package decode turns message values into Arrow rows of an Iceberg
// table's schema: the JSON and Avro decoders of the streaming sink, and
// the type inference of schema evolution. It reads only the bytes of each
// message (no key, header, timestamp or offset) and links no Kafka
// client, so a program that decodes JSON or Avro from another source
// (HTTP bodies, files) feeds a [sink.Sink] with it as package sink/kafka
// does.
//
// # Vocabulary
//
// A [Format] makes a [Decoder] for one table schema (the table's Arrow
// schema, with field ids); make it again when the schema changes. A
// Decoder takes the values of one source partition in order and returns a
// [Decoded]: one batch of rows, in order, for the values it can decode,
// and a [Rejected] (index and reason) for each value it cannot, which the
// caller routes to [sink.Sink.Reject]. Its error is for failures that are
// not a value's fault. Made with evolve, a Decoder also reports the
// fields the schema lacks as [Decoded.NewColumns], typed as
// [sink.Sink.AddColumns] takes them; the caller adds them and decodes the
// values again.
//
// The formats: [JSON] and [JSONFormat] (objects, fields mapped by name),
// [Avro] (bare Avro datums with one writer schema) and [AvroConfluent]
// (the Confluent wire format: writer schemas by id, from .avsc files with
// [LoadAvroSchemas]; no schema registry client), and the change-event
// formats of Debezium's envelopes: [DebeziumFormat] (Kafka Connect's
// JSON), [DebeziumAvroConfluent] and [DebeziumAvro] (Avro, framed as
// AvroConfluent and Avro frame rows). The Avro change formats read an
// event's envelope, then decode its image with the Avro row decoder; all
// of them share the rules that make an event a change.
//
// # Changes
//
// A change-event format says, besides each row's columns, what the row's
// event does to its key and where it stands in its source: a [Change]
// per row in [Decoded.Changes], an [Op] ([Upsert] or [Delete]) and the
// values of the format's ordering fields ([Change.Order], compared with
// [Change.Compare]). Its tombstones are no row and no reject: their
// indexes are in [Decoded.Skipped], so a caller still counts their source
// positions as consumed.
//
// # Concurrency
//
// A Decoder is not safe for concurrent use: call it from one goroutine
// (the caller serialises its polls), or make one per goroutine from its
// Format. A Format is safe for concurrent use.
package decode
