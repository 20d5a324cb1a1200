// Package kafka feeds a [sink.Sink] from Apache Kafka topics with franz-go,
// in a consumer group: the broker's group protocol spreads the topic's
// partitions over the sink processes, and the table decides where each one
// resumes.
//
// On assignment, the start offsets come from the table ([sink.Sink.Start]:
// one past the highest offset it holds of the partition), never from the
// broker's committed offsets, which may be ahead of the table (a consumer
// that acknowledged before its commit landed) or behind it. On revocation
// the sink commits what it holds of the partitions. The adapter never
// commits offsets to the broker: give it a group of its own.
//
// Messages are decoded by a [Format]: [JSONFormat], [Avro] (bare Avro
// datums with one writer schema) or [AvroConfluent] (the Confluent wire
// format, writer schemas by id from .avsc files: no schema registry
// client). With [Config.Evolve] a field the table lacks becomes an
// optional column, and a field inside a struct column the struct lacks an
// optional field of it ([sink.Sink.AddColumns]), before the rows that
// carry it.
//
// Keeping this package apart from package sink means a program that does
// not read Kafka never links a Kafka client.
package kafka
