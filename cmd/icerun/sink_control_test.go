package main

import (
	"strings"
	"testing"
)

// -control-topic takes -event-time and -dead-letter (each member commits
// its late rows and dead letters to their side tables before it hands
// over), -upsert and -key (members hand their rows over): the sink opens
// and goes on to the brokers (here unreachable: it fails creating the
// control topic, exit 75).
func TestSinkControlTopicOptions(t *testing.T) {
	wh := warehouse(t)
	base := []string{"sink", "db.fact_orders", "-warehouse", wh, "-brokers", unreachable, "-topic", "t", "-group", "g", "-control-topic", "ctl", "-connect-timeout", "1s"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-event-time", "event_date", "-dead-letter", "db.fact_orders_dead"}, exitRetry, "kafka: create control topic ctl"},
		{[]string{"-event-time", "event_date", "-drop-late"}, exitRetry, "kafka: create control topic ctl"},
		{[]string{"-key", "order_id,event_date"}, exitRetry, "kafka: create control topic ctl"},
		{[]string{"-upsert", "order_id", "-order", "amount_minor"}, exitRetry, "kafka: create control topic ctl"},
	} {
		args := append(append([]string{}, base...), tc.args...)
		code, out, errs := icerun(args...)
		if code != tc.code || !strings.Contains(out+unquoted(errs), tc.want) {
			t.Errorf("icerun %s = %d, %q%q; want %d with %q", strings.Join(tc.args, " "), code, out, errs, tc.code, tc.want)
		}
	}
}
