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
// Keeping this package apart from package sink means a program that does
// not read Kafka never links a Kafka client.
package kafka
