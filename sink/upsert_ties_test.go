package sink_test

import (
	"maps"
	"testing"
	"time"

	"github.com/icerun/icerun/internal/catalogtest"
	"github.com/icerun/icerun/sink"
)

// In the sink the source offset is the last tie-breaker, across commits
// too: a row of a later commit whose order equals the stored row's (a
// later message of the same event time) wins, as it does over a row of
// its own commit. A redelivery never ties: it is dropped by its position.
func TestUpsertSinkTieAcrossCommitsLaterOffsetWins(t *testing.T) {
	t.Parallel()
	for _, m := range upsertModes {
		t.Run(m.name, func(t *testing.T) {
			cat, _ := catalogtest.New(t)
			ident := ordersTable(t, cat, "orders", m.v, m.mor)
			s := mustOpen(t, cat, ident, sink.WithUpsert(upsertSpec))
			writeEvents(t, s, 0, orderEvent{"a", "created", time.Hour}, orderEvent{"b", "created", time.Hour})
			mustCommit(t, s)
			writeEvents(t, s, 2, orderEvent{"a", "paid", time.Hour}, orderEvent{"b", "deleted", time.Hour})
			mustCommit(t, s)
			if got, w := states(t, cat, ident), map[string]string{"a": "paid"}; !maps.Equal(got, w) {
				t.Errorf("table after later messages of equal order = %v, want %v", got, w)
			}
			writeEvents(t, s, 0, orderEvent{"a", "created", time.Hour}, orderEvent{"b", "created", time.Hour})
			mustCommit(t, s)
			if got, w := states(t, cat, ident), map[string]string{"a": "paid"}; !maps.Equal(got, w) {
				t.Errorf("table after a redelivery = %v, want %v", got, w)
			}
		})
	}
}
