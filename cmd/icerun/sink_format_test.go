package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// -format debezium reads Kafka Connect's JSON, or Avro with
// -avro-schemas (the Confluent wire format) or -avro-schema.
func TestSinkFormatDebezium(t *testing.T) {
	dir := filepath.Join("..", "..", "sink", "decode", "testdata", "debezium", "avro")
	sc := arrow.NewSchema([]arrow.Field{{Name: "order_id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	for _, tc := range []struct {
		dir, file string
		value     string
		want      string
	}{
		{"", "", `{}`, "no op"},
		{dir, "", "\x00\x00\x00\x00\x09x", "unknown Avro schema id 9"},
		{"", filepath.Join(dir, "1.avsc"), "\x02", "debezium: "}, // a before image, then the datum ends
	} {
		f, err := sinkFormat("debezium", tc.dir, tc.file)
		if err != nil {
			t.Fatalf("sinkFormat(debezium, %q, %q): %v", tc.dir, tc.file, err)
		}
		dec, err := f(sc, false)
		if err != nil {
			t.Fatal(err)
		}
		d, err := dec([][]byte{[]byte(tc.value)})
		if err != nil {
			t.Fatal(err)
		}
		d.Rows.Release()
		if len(d.Bad) != 1 || !strings.Contains(d.Bad[0].Reason, tc.want) {
			t.Errorf("sinkFormat(debezium, %q, %q) decodes %q to bad %+v, want a reject with %q", tc.dir, tc.file, tc.value, d.Bad, tc.want)
		}
	}
}
