package main

import "testing"

func TestScrambleRoundTrips(t *testing.T) {
	for _, x := range []uint64{0, 1, 2, 63, 1 << 20, 10_000_000, 1<<63 - 1} {
		y := scramble(x)
		if y > mask63 {
			t.Errorf("scramble(%d) = %d, above 2^63-1", x, y)
		}
		if got := unscramble(y); got != x {
			t.Errorf("unscramble(scramble(%d)) = %d, want %d", x, got, x)
		}
	}
}

// The change mix and where the changes land: updates and deletes of live
// orders only (the newest 5% with time-ordered keys), inserts above every
// order placed.
func TestChangeGen(t *testing.T) {
	for _, keys := range []keyOrder{timeOrdered, randomKeys} {
		const rows, n = 100_000, 200_000
		g := newChangeGen(keys, rows, 7)
		var kinds [3]int
		for range n {
			placed := g.next
			c := g.nextChange()
			kinds[c.kind]++
			switch c.kind {
			case changeInsert:
				if c.order != placed {
					t.Fatalf("%s: insert of order %d, want %d", keys, c.order, placed)
				}
			default:
				if keys == timeOrdered && c.order < placed-rows/20 {
					t.Fatalf("%s: change of order %d, below the newest 5%% (from %d)", keys, c.order, placed-rows/20)
				}
				if c.kind == changeUpdate && g.isDeleted(c.order) {
					t.Fatalf("%s: update of deleted order %d", keys, c.order)
				}
			}
		}
		if u, d := float64(kinds[changeUpdate])/n, float64(kinds[changeDelete])/n; u < 0.79 || u > 0.81 || d < 0.018 || d > 0.022 {
			t.Errorf("%s: %.3f updates, %.3f deletes, want 0.80 and 0.02", keys, u, d)
		}
		e, err := expect(keys, rows, 7, n)
		if err != nil {
			t.Fatal(err)
		}
		if e.g.live() != g.live() || int64(len(e.last)) != g.next {
			t.Errorf("%s: expected state of %d live orders of %d, want %d of %d", keys, e.g.live(), len(e.last), g.live(), g.next)
		}
	}
}
