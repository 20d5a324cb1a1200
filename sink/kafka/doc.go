// Package kafka feeds a [sink.Sink] from Apache Kafka topics with franz-go,
// in a consumer group: the broker's group protocol spreads the topics'
// partitions over the sink processes, and the table decides where each one
// resumes. One consumer reads one or more topics ([Config.Topics], or
// [Config.TopicRegex]); each partition of each topic is a source partition
// of its own ([Source]: kafka:<topic>).
//
// On assignment, the start offsets come from the table ([sink.Sink.Start]:
// one past the highest offset it holds of the partition), never from the
// broker's committed offsets, which may be ahead of the table (a consumer
// that acknowledged before its commit landed) or behind it. On revocation
// the sink commits what it holds of the partitions. The adapter never
// commits offsets to the broker: give it a group of its own.
//
// The values of the records are decoded by a [decode.Format] of package
// sink/decode ([Config.Format]: [decode.JSONFormat], [decode.Avro] for
// bare Avro datums with one writer schema, [decode.AvroConfluent] for the
// Confluent wire format) or a [decode.Decoder] ([Config.Decode]); the
// decoders read only the value (nil for a tombstone: the formats reject
// it), never the key, headers or timestamp; a rejected record goes to
// [sink.Sink.RejectMessage] with its topic, key, headers and timestamp,
// which the dead-letter table keeps. [Config.Skip] names records to pass
// without decoding them ([sink.Sink.Skip]). This package has no decoder of its own, nor
// aliases of that package's names: callers import sink/decode. With
// [Config.Evolve] a field the table lacks becomes an optional column, and
// a field inside a struct column the struct lacks an optional field of it
// ([sink.Sink.AddColumns]), before the rows that carry it.
//
// While [Run] runs, a [Status] ([Config.Status]) tells which partitions
// this member holds, the broker's high watermark of each (from the
// fetches, and from a ListOffsets request every 10 s) and the table's
// position, hence the lag; [Status.Ready] is a readiness rule (partitions
// assigned, [sink.Health.Check] passing). The same figures are gauges of
// [Config.MeterProvider]. A member that dies without leaving the group
// has its partitions moved after [DefaultSessionTimeout] (10 s) unless
// [Config.SessionTimeout] says otherwise.
//
// Keeping this package apart from package sink means a program that does
// not read Kafka never links a Kafka client, and keeping the decoders
// apart from this one means a program that decodes JSON or Avro from
// another source does not either.
package kafka
