package decode

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/hamba/avro/v2"
)

// ErrAvroSchema is returned for an Avro schema file that cannot be read
// or parsed.
var ErrAvroSchema = errors.New("decode: bad Avro schema")

// LoadAvroSchema parses the Avro schema in file (JSON, .avsc).
func LoadAvroSchema(file string) (avro.Schema, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAvroSchema, err)
	}
	// A cache of its own: named types of one file never clash with
	// another's (schema versions reuse their record names).
	sch, err := avro.ParseBytesWithCache(b, "", &avro.SchemaCache{})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrAvroSchema, file, err)
	}
	return sch, nil
}

// LoadAvroSchemas parses the files <id>.avsc of dir: the writer schemas of
// Confluent-framed messages by schema id (what a schema registry would
// serve). Other files are ignored.
func LoadAvroSchemas(dir string) (map[int32]avro.Schema, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAvroSchema, err)
	}
	out := map[int32]avro.Schema{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".avsc")
		if !ok || e.IsDir() {
			continue
		}
		id, err := strconv.ParseInt(name, 10, 32)
		if err != nil || id < 0 {
			continue
		}
		sch, err := LoadAvroSchema(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out[int32(id)] = sch
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no <id>.avsc file in %s", ErrAvroSchema, dir)
	}
	return out, nil
}

// AvroConfluent is the [Format] of messages in the Confluent wire format:
// a zero magic byte, the writer schema's id (4 bytes, big-endian), then
// the Avro binary datum. schemas are the writer schemas by id
// ([LoadAvroSchemas]); a message naming another id is rejected. See
// [Avro] for the mapping to the table's columns.
func AvroConfluent(schemas map[int32]avro.Schema) Format {
	return func(sc *arrow.Schema, evolve bool) (Decoder, error) {
		return newAvroDecoder(sc, evolve, confluentFraming(schemas)).decode, nil
	}
}

// avroFraming finds the writer schema of a message, with an id that
// names it among the framing's schemas, and the message's datum.
type avroFraming func(value []byte) (id int32, w avro.Schema, datum []byte, err error)

// confluentFraming is the Confluent wire format's: the schema id in the
// message, the writer schemas by id.
func confluentFraming(schemas map[int32]avro.Schema) avroFraming {
	return func(value []byte) (int32, avro.Schema, []byte, error) {
		if len(value) < 5 || value[0] != 0 {
			return 0, nil, nil, errors.New("not a Confluent Avro message (magic byte 0 and a 4-byte schema id)")
		}
		id := int32(binary.BigEndian.Uint32(value[1:5]))
		w, ok := schemas[id]
		if !ok {
			return 0, nil, nil, fmt.Errorf("unknown Avro schema id %d", id)
		}
		return id, w, value[5:], nil
	}
}

// bareFraming is that of bare datums of the writer schema w (id 0).
func bareFraming(w avro.Schema) avroFraming {
	return func(value []byte) (int32, avro.Schema, []byte, error) { return 0, w, value, nil }
}

// Avro is the [Format] of messages that are each one Avro binary datum
// written with schema w (no framing).
//
// The writer schema must be a record. Its fields map to the table's
// columns by Iceberg field id when they carry a "field-id" property the
// table has, else by name (case-sensitive); fields the table lacks are
// skipped (or, with evolve, reported as new columns, or new fields of
// the struct columns whose records have them), and columns the
// writer lacks are null (a required one rejects the message). Nested
// records, arrays and maps map to structs, lists and maps alike, and
// unions with null to optional values. Types: boolean; int into int, long,
// float or double; long into long, double or a timestamp (in the column's
// unit); float into float or double; double; string and enum into string;
// bytes and fixed into binary (fixed of the column's size into fixed);
// logical types date, time-millis and time-micros, timestamp-millis and
// timestamp-micros and their local-timestamp-* forms into timestamp and
// timestamptz (converted to the column's unit; a local timestamp is taken
// as UTC), decimal (bytes or fixed; the column's scale, at most its
// precision), uuid (string or fixed 16) into uuid or string. A writer
// field whose type cannot go into its column rejects every message that
// carries a value of that type, with the reason; so does a corrupt datum,
// or a string or bytes value over 1 MiB (hamba/avro's bound).
func Avro(w avro.Schema) Format {
	return func(sc *arrow.Schema, evolve bool) (Decoder, error) {
		return newAvroDecoder(sc, evolve, bareFraming(w)).decode, nil
	}
}
