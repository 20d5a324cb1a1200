package schema

import (
	"errors"
	"fmt"
	"strings"
)

// suggest adds to a missing-column error the input name nearest to the
// table column name, among the input fields that matched nothing: a typo
// or another spelling ("eventDate" for event_date) is then obvious.
func suggest(err error, column string, unmatched []string) error {
	if !errors.Is(err, ErrMissingRequired) || len(unmatched) == 0 {
		return err
	}
	best, bestD := "", -1
	for _, name := range unmatched {
		d := distance(normalize(column), normalize(name))
		if bestD < 0 || d < bestD {
			best, bestD = name, d
		}
	}
	if bestD > max(2, len(column)/2) {
		return fmt.Errorf("%w (input columns that match nothing: %s)", err, strings.Join(unmatched, ", "))
	}
	return fmt.Errorf("%w (did you mean input column %q? rename it, or add %q to the table's name mapping)", err, best, best)
}

// normalize folds case and drops '_', '-' and spaces.
func normalize(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-', ' ':
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
