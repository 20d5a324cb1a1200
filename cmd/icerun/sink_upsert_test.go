package main

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/icerun/icerun/table"
)

func TestSinkUpsertSpec(t *testing.T) {
	good := []struct {
		upsert, order, del string
		retention          time.Duration
		want               *table.ChangeSpec
	}{
		{"", "", "", 0, nil},
		{"order_id", "updated_at", "", 0, &table.ChangeSpec{Key: []string{"order_id"}, Order: []string{"updated_at"}}},
		{"shop,order_id", "version,offset", "event_type=deleted", 48 * time.Hour, &table.ChangeSpec{
			Key: []string{"shop", "order_id"}, Order: []string{"version", "offset"},
			Delete: table.DeleteWhen{Column: "event_type", Value: "deleted"}, Retention: 48 * time.Hour}},
		{"id", "ts", "op=", 0, &table.ChangeSpec{Key: []string{"id"}, Order: []string{"ts"}, Delete: table.DeleteWhen{Column: "op"}}},
		{"id", "ts", "op=d=x", 0, &table.ChangeSpec{Key: []string{"id"}, Order: []string{"ts"}, Delete: table.DeleteWhen{Column: "op", Value: "d=x"}}},
	}
	for _, tc := range good {
		got, err := sinkUpsertSpec("json", tc.upsert, tc.order, tc.del, tc.retention)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("sinkUpsertSpec(%q, %q, %q, %s) = %+v, %v; want %+v", tc.upsert, tc.order, tc.del, tc.retention, got, err, tc.want)
		}
	}
	// -format debezium: the columns its decoder fills are the defaults.
	dbz := []struct {
		order, del string
		want       *table.ChangeSpec
	}{
		{"", "", &table.ChangeSpec{Key: []string{"id"}, Order: []string{"_cdc_lsn"}, Delete: table.DeleteWhen{Column: "_cdc_op", Value: "d"}}},
		{"v", "kind=gone", &table.ChangeSpec{Key: []string{"id"}, Order: []string{"v"}, Delete: table.DeleteWhen{Column: "kind", Value: "gone"}}},
	}
	for _, tc := range dbz {
		got, err := sinkUpsertSpec("debezium", "id", tc.order, tc.del, 0)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("debezium: sinkUpsertSpec(id, %q, %q) = %+v, %v; want %+v", tc.order, tc.del, got, err, tc.want)
		}
	}
	bad := []struct {
		upsert, order, del string
		retention          time.Duration
		want               string
	}{
		{"", "ts", "", 0, "need -upsert"},
		{"", "", "op=d", 0, "need -upsert"},
		{"", "", "", time.Hour, "need -upsert"},
		{"id", "", "", 0, "needs -order"},
		{"id", "ts", "deleted", 0, "want COLUMN=VALUE"},
		{"id", "ts", "=deleted", 0, "want COLUMN=VALUE"},
		{"id,", "ts", "", 0, "empty column name"},
		{"id", "ts,", "", 0, "empty column name"},
		{"id", "ts", "", -time.Hour, "-retention"},
	}
	for _, tc := range bad {
		_, err := sinkUpsertSpec("json", tc.upsert, tc.order, tc.del, tc.retention)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sinkUpsertSpec(%q, %q, %q, %s) = %v; want a usage error with %q", tc.upsert, tc.order, tc.del, tc.retention, err, tc.want)
		}
	}
}

// The upsert flags reach the sink, which checks them against the table
// before any broker is tried.
func TestSinkUpsertFlags(t *testing.T) {
	wh := warehouse(t)
	for _, tc := range []struct {
		flags []string
		code  int
		want  string
	}{
		{[]string{"-upsert", "order_id", "-order", "nope"}, exitRequest, `"nope" is not a top-level column`},
		{[]string{"-upsert", "order_id", "-order", "event_date", "-delete-when", "gone=1"}, exitRequest, `"gone" is not a top-level column`},
		{[]string{"-upsert", "order_id", "-order", "event_date", "-key", "order_id,event_date"}, exitRequest, "keyed mode"},
		{[]string{"-delete-when", "order_id=1"}, exitUsage, "need -upsert"},
		{[]string{"-format", "debezium", "-upsert", "order_id"}, exitRequest, `"_cdc_lsn" is not a top-level column`},
		{[]string{"-format", "debezium", "-upsert", "order_id", "-order", "event_date"}, exitRequest, `"_cdc_op" is not a top-level column`},
		{[]string{"-format", "debezium", "-upsert", "order_id"}, exitRequest, "declare them"},
		{[]string{"-format", "debezium", "-avro-schema", "x.avsc"}, exitUsage, "-avro-schema: decode: bad Avro schema"},
		{[]string{"-format", "debezium", "-avro-schemas", "nodir", "-avro-schema", "x.avsc"}, exitUsage, "not both"},
		{[]string{"-upsert", "order_id", "-order", "event_date", "-compact-delete-ratio", "1.5"}, exitRequest, "want a ratio in [0, 1]"},
	} {
		args := append([]string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-connect-timeout", "1ms"}, tc.flags...)
		code, out, errs := icerun(args...)
		if code != tc.code || !strings.Contains(unquoted(out+errs), tc.want) {
			t.Errorf("icerun sink %q = %d, %q%q; want exit %d with %q", tc.flags, code, out, errs, tc.code, tc.want)
		}
	}
}
