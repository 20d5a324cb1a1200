package main

import (
	"strings"
	"testing"
)

// -key takes comma-separated key columns, checked when the sink opens:
// on db.fact_orders (partitioned by event_date) a key without event_date
// is refused, naming it; each column is checked on its own.
func TestSinkKeyColumns(t *testing.T) {
	wh := warehouse(t)
	for _, tc := range []struct{ key, want string }{
		{"order_id", "event_date"},
		{"amount_minor", "event_date"},
		{"order_id,nope", `key column "nope"`},
		{"order_id,", "empty column name"},
		{"order_id,event_date,order_id", `"order_id" twice`},
	} {
		args := []string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", "x:1", "-topic", "t", "-group", "g", "-key", tc.key}
		code, out, errs := icerun(args...)
		if code == 0 || !strings.Contains(out+unquoted(errs), tc.want) {
			t.Errorf("icerun sink -key %s = %d, %q%q; want a failure with %q", tc.key, code, out, errs, tc.want)
		}
	}
}
