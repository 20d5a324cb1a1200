package decode

import (
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/hamba/avro/v2"
)

// Kafka Connect's semantic types: a converter (Confluent's AvroConverter)
// names a field's Connect type in the "connect.name" property of its Avro
// type. Debezium's time types have no Avro logical type: with its
// default time.precision.mode (adaptive), a date is an int named
// io.debezium.time.Date, a timestamptz a string named
// io.debezium.time.ZonedTimestamp.
const (
	connectDate           = "io.debezium.time.Date"           // int: days since the epoch
	connectTime           = "io.debezium.time.Time"           // int: milliseconds since midnight
	connectMicroTime      = "io.debezium.time.MicroTime"      // long: microseconds since midnight
	connectTimestamp      = "io.debezium.time.Timestamp"      // long: milliseconds since the epoch
	connectMicroTimestamp = "io.debezium.time.MicroTimestamp" // long: microseconds since the epoch
	connectNanoTimestamp  = "io.debezium.time.NanoTimestamp"  // long: nanoseconds since the epoch
	connectZonedTimestamp = "io.debezium.time.ZonedTimestamp" // string: ISO 8601 with an offset
	connectUUID           = "io.debezium.data.Uuid"           // string
)

// compileConnect is the decoder of the Connect semantic type w names
// into target, when it names one that fits target; otherwise ok is false
// and w maps as its Avro type does.
func compileConnect(w *avro.PrimitiveSchema, target arrow.Field) (fn decodeFn, ok bool) {
	name, _ := w.Prop("connect.name").(string)
	t := target.Type
	switch {
	case name == connectDate && w.Type() == avro.Int && t.ID() == arrow.DATE32:
		return func(in *avroIn, b array.Builder) error {
			b.(*array.Date32Builder).Append(arrow.Date32(in.ReadInt()))
			return nil
		}, true
	case name == connectTime && w.Type() == avro.Int && t.ID() == arrow.TIME64:
		unit := t.(*arrow.Time64Type).Unit
		return func(in *avroIn, b array.Builder) error {
			b.(*array.Time64Builder).Append(arrow.Time64(convertUnit(int64(in.ReadInt()), arrow.Millisecond, unit)))
			return nil
		}, true
	case name == connectMicroTime && w.Type() == avro.Long && t.ID() == arrow.TIME64:
		unit := t.(*arrow.Time64Type).Unit
		return func(in *avroIn, b array.Builder) error {
			b.(*array.Time64Builder).Append(arrow.Time64(convertUnit(in.ReadLong(), arrow.Microsecond, unit)))
			return nil
		}, true
	case w.Type() == avro.Long && t.ID() == arrow.TIMESTAMP:
		from, known := map[string]arrow.TimeUnit{
			connectTimestamp: arrow.Millisecond, connectMicroTimestamp: arrow.Microsecond, connectNanoTimestamp: arrow.Nanosecond,
		}[name]
		if !known {
			return nil, false
		}
		unit := t.(*arrow.TimestampType).Unit
		return func(in *avroIn, b array.Builder) error {
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(convertUnit(in.ReadLong(), from, unit)))
			return nil
		}, true
	case name == connectZonedTimestamp && w.Type() == avro.String && t.ID() == arrow.TIMESTAMP:
		unit := t.(*arrow.TimestampType).Unit
		return func(in *avroIn, b array.Builder) error {
			s := in.ReadString()
			if in.Error != nil {
				return in.Error
			}
			at, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return fmt.Errorf("field %q: %q is not an RFC 3339 timestamp", target.Name, s)
			}
			b.(*array.TimestampBuilder).Append(arrow.Timestamp(inUnit(at, unit)))
			return nil
		}, true
	case name == connectUUID && w.Type() == avro.String && isUUID(t):
		return avroUUID(target), true
	}
	return nil, false
}
