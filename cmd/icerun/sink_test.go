package main

import (
	"strings"
	"testing"
)

func TestSinkUsage(t *testing.T) {
	wh := warehouse(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sink", "-h"}, 0, "-brokers"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh}, 2, "-brokers, -topic and -group are required"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "avro"}, 2, "needs one of -avro-schemas"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "xml"}, 2, "json or avro"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-avro-schema", "x.avsc"}, 2, "need -format avro"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "avro", "-avro-schema", "/nonexistent.avsc"}, 2, "bad Avro schema"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-format", "avro", "-avro-schemas", wh}, 2, "no <id>.avsc file"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", "nope"}, 1, "key column"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-dead-letter", "nodot"}, 2, "namespace.name"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-dead-letter", "db.fact_orders"}, 1, "dead-letter table is the table"},
		{[]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-keep-snapshots", "-1"}, 2, "-keep-snapshots"},
	} {
		code, out, errs := icerun(tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("icerun %s = %d, %q%q; want %d with %q", strings.Join(tc.args, " "), code, out, errs, tc.code, tc.want)
		}
	}
}
