package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/icerun/icerun/sink"
	"github.com/icerun/icerun/sink/decode"
	"github.com/icerun/icerun/sink/kafka"
	"github.com/icerun/icerun/table"
)

// sinkCmd runs the streaming sink: a Kafka topic of JSON or Avro messages
// into the table, in a consumer group, until SIGTERM or SIGINT, then a final commit.
func sinkCmd(ctx context.Context, e *env, args []string) error {
	fs := e.tableFlags()
	e.writeFlags(fs)
	brokers := fs.String("brokers", envOr("ICERUN_KAFKA_BROKERS", ""), "Kafka bootstrap brokers, comma-separated (ICERUN_KAFKA_BROKERS)")
	topic := fs.String("topic", "", "topics to consume, comma-separated (each partition of each keeps its own position in the table)")
	topicRegex := fs.String("topic-regex", "", "instead of -topic: consume every topic whose whole name matches this regular expression (Go syntax), those created later too")
	var skips stringList
	fs.Var(&skips, "skip", "pass the message at `TOPIC/PARTITION@OFFSET` without a row or a dead letter when the stream reaches it (repeatable): the table's position moves over it, its commit names it (icerun.sink.skipped), it is counted and logged")
	var sec kafkaSecurity
	sec.addFlags(fs)
	group := fs.String("group", "", "consumer group (its own: the sink never commits offsets to the broker; it resumes from the table)")
	format := fs.String("format", "json", "message format: json (objects, fields mapped to columns by name), avro (with -avro-schemas or -avro-schema) or debezium (Debezium change events in Kafka Connect's JSON, with or without the schema part, or in Avro with -avro-schemas or -avro-schema: the row from after, or before for a delete; the table's _cdc_op (string), _cdc_lsn and _cdc_ts_ms (long) columns, when it has them, take the op and source.lsn/ts_ms; tombstones move the position without a row)")
	avroSchemas := fs.String("avro-schemas", "", "with -format avro or debezium: messages in the Confluent wire format (magic byte 0, 4-byte schema id, Avro datum), writer schemas read from DIR/<id>.avsc (no schema registry client)")
	avroSchema := fs.String("avro-schema", "", "with -format avro or debezium: each message is one bare Avro datum written with the schema in this .avsc file")
	evolve := fs.Bool("evolve", false, "add an optional column to the table for a message field it lacks, and an optional field to a struct column for a field inside it the struct lacks (type from the Avro writer schema, or from the JSON value), in a commit of its own before the rows that need it; without it such fields are ignored")
	rows := fs.Int64("commit-rows", 100_000, "commit once this many rows are pending")
	bytes := fs.Int64("commit-bytes", 64<<20, "commit once the pending rows hold this many bytes")
	interval := fs.Duration("commit-interval", 10*time.Second, "commit once the oldest pending row waited this long")
	eventTime := fs.String("event-time", "", "event time column: rows for a partition the watermark closed go to TABLE_sink_late")
	lateness := fs.Duration("allowed-lateness", time.Hour, "with -event-time: how far behind the newest event a row may be")
	dropLate := fs.Bool("drop-late", false, "with -event-time: drop late rows (counted) instead of writing them to the side table")
	session := fs.Duration("session-timeout", kafka.DefaultSessionTimeout, "how long the group waits for a silent member (a killed pod) before moving its partitions; within the broker's group.min/max.session.timeout.ms (6s..30m by default)")
	httpAddr := fs.String("http", "", "serve /healthz, /readyz and /metrics (Prometheus text format) on this address, e.g. :8080")
	deadLetter := fs.String("dead-letter", "", "table (namespace.name, created when missing) for messages that are not rows of the table (bad JSON or Avro, a wrong type, a required field missing), with their bytes, reason and offset; without it such a message stops the sink (exit 65) at its offset")
	keep := fs.Int("keep-snapshots", sink.DefaultKeepSnapshots, "expire the table's snapshots beyond the last N (checked every 10 commits); 0: never expire")
	key := fs.String("key", "", "keyed mode: key columns, comma-separated, identifying a message (on a partitioned table they include every partition source column, e.g. id,event_time); a row whose key its partition holds is dropped as a duplicate")
	upsert := fs.String("upsert", "", "upsert mode: key columns, comma-separated; the table keeps the latest row of each key, by -order, whatever the arrival order (each commit is one changelog write with its positions); not with -key; with -format debezium the default is the table's identifier fields, when it declares them (icerun create -identifier-fields)")
	order := fs.String("order", "", "with -upsert: ordering columns, comma-separated (a version, an LSN, an event time; the first decides, the next break ties): a change not newer than the table's row of its key changes nothing; with -format debezium the default is _cdc_lsn")
	deleteWhen := fs.String("delete-when", "", "with -upsert: `COLUMN=VALUE` marking delete rows (e.g. status=deleted): the key's row is deleted and a tombstone keeps a late older change from bringing it back; with -format debezium the default is _cdc_op=d")
	retention := fs.Duration("retention", 0, "with -upsert: how long a tombstone counts, in the first -order column's time (a timestamp or date column); a change older than that for a key the table does not know goes to the late table; 0: tombstones kept for ever")
	control := fs.String("control-topic", "", "fleet mode: the sinks of -group hand their data files over on this Kafka topic (one partition, created when missing) instead of committing, and the one the group assigns its partition commits every member's in one snapshot per -commit-interval; exactly once still holds by the table's positions (docs/scale-out.md); with -event-time and -dead-letter each member commits its own late rows and dead letters to their side tables before it hands over; with -upsert and -key members hand their rows over and the committer applies them as one changelog write, or appends those of new keys; not with -topic-regex")
	deleteRatio := fs.Float64("compact-delete-ratio", sink.DefaultCompactDeleteRatio, "with -upsert: after each commit, rewrite a data file of a partition the commit changed once its position deletes or deletion vector delete at least this share of its rows, in [0, 1] (0: any delete); the compaction removes exactly the files it read")
	connect := fs.Duration("connect-timeout", time.Minute, "give up (exit 75) when the brokers do not answer, or the topic does not exist, this long after the start (a warning says which after a few seconds); 0: wait for ever")
	if err := sinkDefaults(fs); err != nil {
		return err
	}
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if *brokers == "" || (*topic == "") == (*topicRegex == "") || *group == "" {
		return fmt.Errorf("%w: -brokers, -group and one of -topic and -topic-regex are required", errUsage)
	}
	skip, err := sinkSkips(skips, kafka.Config{Topics: strings.Split(*topic, ","), TopicRegex: *topicRegex})
	if err != nil {
		return err
	}
	kopts, err := sec.options()
	if err != nil {
		return err
	}
	if *connect < 0 {
		return fmt.Errorf("%w: -connect-timeout %s: must be 0 (wait for ever) or more", errUsage, *connect)
	}
	msgFormat, err := sinkFormat(*format, *avroSchemas, *avroSchema)
	if err != nil {
		return err
	}
	ident, err := e.ident()
	if err != nil {
		return err
	}
	ctx, cat, tbl, err := e.loadTable(ctx) // a missing table fails here, before the brokers are tried
	if err != nil {
		return err
	}
	log, err := e.logger()
	if err != nil {
		return err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	defer routeStdLog(log)()
	opts := []sink.Option{
		sink.WithCommitRows(*rows), sink.WithCommitBytes(*bytes), sink.WithCommitInterval(*interval),
		sink.WithRunID(e.runID), sink.WithCodeVersion(e.codeVersion), sink.WithLogger(log),
	}
	if *eventTime != "" {
		opts = append(opts, sink.WithEventTime(*eventTime, *lateness))
		if *dropLate {
			opts = append(opts, sink.WithLateRows(table.DropLate))
		}
	}
	if *key != "" {
		opts = append(opts, sink.WithKey(strings.Split(*key, ",")...)) // checked by sink.Open: sink.ErrBadOption, exit 64
	}
	upsertKey := *upsert
	if upsertKey == "" && *format == "debezium" && *key == "" {
		// A change stream keeps the latest row of each key by default:
		// the key is the table's identifier fields, which a table made
		// for a source table declares as its primary key.
		if upsertKey = identifierKey(tbl.Schema()); upsertKey != "" {
			log.Info("upsert on the table's identifier fields", "key", upsertKey)
		} else {
			log.Info("the table declares no identifier fields: every change is appended as a row (-upsert KEY, or icerun create -identifier-fields, keeps the latest row of each key)")
		}
	}
	cs, err := sinkUpsertSpec(*format, upsertKey, *order, *deleteWhen, *retention)
	if err != nil {
		return err
	}
	if cs != nil {
		opts = append(opts, sink.WithUpsert(*cs)) // checked by sink.Open: sink.ErrBadOption, exit 64
		opts = append(opts, sink.WithDeleteRatioCompaction(*deleteRatio))
	}
	if *deadLetter != "" {
		dl, err := parseIdent(*deadLetter)
		if err != nil {
			return fmt.Errorf("-dead-letter: %w", err)
		}
		opts = append(opts, sink.WithDeadLetter(dl))
	}
	switch {
	case *keep < 0:
		return fmt.Errorf("%w: -keep-snapshots %d: must be 0 or more", errUsage, *keep)
	case *keep == 0:
		opts = append(opts, sink.WithoutSnapshotExpiry())
	default:
		opts = append(opts, sink.WithSnapshotExpiry(*keep, 0, sink.DefaultExpireEvery))
	}
	ops, err := startOps(ctx, *httpAddr, log) // httpserve.go
	if err != nil {
		return err
	}
	defer ops.close(ctx)
	ops.probeCatalog(cat, ident)
	opts = append(opts, ops.sinkOptions()...)
	var openCommitter func(context.Context) (*sink.Committer, error)
	if *control != "" {
		committerOpts := slices.Clone(opts)
		openCommitter = func(ctx context.Context) (*sink.Committer, error) {
			return sink.OpenCommitter(ctx, cat, ident, committerOpts...)
		}
		host, _ := os.Hostname()
		opts = append(opts, sink.WithHandOver(fmt.Sprintf("%s-%d", host, os.Getpid())))
	}
	s, err := sink.Open(ctx, cat, ident, opts...)
	if err != nil {
		if cs != nil && *format == "debezium" && errors.Is(err, sink.ErrBadOption) {
			return fmt.Errorf("%w (-format debezium -upsert orders by the table's %s column (long) and deletes by its %s column (string): declare them, or name others with -order and -delete-when)",
				err, decode.DebeziumLSNColumn, decode.DebeziumOpColumn)
		}
		return err
	}
	err = kafka.Run(ctx, s, kafka.Config{
		Brokers: strings.Split(*brokers, ","), Topics: strings.Split(*topic, ","), TopicRegex: *topicRegex, Group: *group,
		Format: msgFormat, Evolve: *evolve, Logger: log, SessionTimeout: *session, ConnectTimeout: *connect,
		Options: kopts, Skip: skip,
		ControlTopic: *control, CommitInterval: *interval, Committer: openCommitter,
		Status: ops.status, MeterProvider: ops.meterProvider(),
	})
	if errors.Is(err, kafka.ErrNotConnected) {
		return fmt.Errorf("%w; -connect-timeout sets how long the sink waits", err)
	}
	if errors.Is(err, sink.ErrBadMessage) {
		return fmt.Errorf("%w (the rows before it are committed; -dead-letter TABLE routes such messages to a table)", err)
	}
	return err
}

// sinkFormat is the message format the flags name.
func sinkFormat(format, avroDir, avroFile string) (decode.Format, error) {
	switch format {
	case "json":
		if avroDir != "" || avroFile != "" {
			return nil, fmt.Errorf("%w: -avro-schemas and -avro-schema need -format avro or debezium", errUsage)
		}
		return decode.JSONFormat(), nil
	case "avro":
		if avroDir == "" && avroFile == "" {
			return nil, fmt.Errorf("%w: -format avro needs one of -avro-schemas DIR (Confluent wire format) and -avro-schema FILE (bare datums)", errUsage)
		}
		return sinkAvroFormat(avroDir, avroFile, decode.AvroConfluent, decode.Avro)
	case "debezium":
		if avroDir == "" && avroFile == "" {
			return decode.DebeziumFormat(), nil // Kafka Connect's JSON
		}
		return sinkAvroFormat(avroDir, avroFile, decode.DebeziumAvroConfluent, decode.DebeziumAvro)
	}
	return nil, fmt.Errorf("%w: -format %q: json, avro or debezium", errUsage, format)
}

// sinkAvroFormat is the Avro format of -avro-schemas DIR (confluent, the
// Confluent wire format) or -avro-schema FILE (bare datums).
func sinkAvroFormat(avroDir, avroFile string, confluent func(map[int32]avro.Schema) decode.Format, bare func(avro.Schema) decode.Format) (decode.Format, error) {
	switch {
	case avroDir != "" && avroFile != "":
		return nil, fmt.Errorf("%w: -avro-schemas DIR (Confluent wire format) or -avro-schema FILE (bare datums), not both", errUsage)
	case avroDir != "":
		schemas, err := decode.LoadAvroSchemas(avroDir)
		if err != nil {
			return nil, fmt.Errorf("%w: -avro-schemas: %w", errUsage, err)
		}
		return confluent(schemas), nil
	}
	w, err := decode.LoadAvroSchema(avroFile)
	if err != nil {
		return nil, fmt.Errorf("%w: -avro-schema: %w", errUsage, err)
	}
	return bare(w), nil
}
