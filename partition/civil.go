package partition

import (
	"fmt"
	"math/big"
	"time"
)

// Calendar text of dates, times and timestamps, limited to years 0000-9999.

const (
	usPerSecond = int64(time.Second / time.Microsecond)
	usPerHour   = 3600 * usPerSecond
	usPerDay    = 24 * usPerHour
	nsPerDay    = int64(24 * time.Hour)
	hoursPerDay = 24
)

var (
	minDay = daysFromCivil(0, 1, 1)
	maxDay = daysFromCivil(9999, 12, 31)
)

// daysFromCivil is the day number (days since 1970-01-01) of y-m-d.
func daysFromCivil(y, m, d int) int64 {
	return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(days int64) (y, m, d int) {
	t := time.Unix(days*86400, 0).UTC()
	y, mo, d := t.Date()

	return y, int(mo), d
}

// digits parses s, which must be all ASCII digits.
func digits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}

	return n, true
}

// parseDate parses "2006-01-02" into a day number.
func parseDate(s string) (int64, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return 0, false
	}
	if d > time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
		return 0, false
	}

	return daysFromCivil(y, m, d), true
}

func formatDate(days int64) string {
	y, m, d := civilFromDays(days)

	return fmt.Sprintf("%04d-%02d-%02d", y, m, d)
}

// parseClock parses "15:04:05" followed by '.' and exactly frac digits into
// a time of day in units of 10^-frac seconds.
func parseClock(s string, frac int) (int64, bool) {
	if len(s) != 9+frac || s[2] != ':' || s[5] != ':' || s[8] != '.' {
		return 0, false
	}
	h, ok1 := digits(s[0:2])
	m, ok2 := digits(s[3:5])
	sec, ok3 := digits(s[6:8])
	f, ok4 := digits(s[9:])
	if !ok1 || !ok2 || !ok3 || !ok4 || h > 23 || m > 59 || sec > 59 {
		return 0, false
	}

	return int64((h*60+m)*60+sec)*pow10(frac) + int64(f), true
}

func formatClock(tod int64, frac int) string {
	unit := pow10(frac)
	secs := tod / unit

	return fmt.Sprintf("%02d:%02d:%02d.%0*d", secs/3600, secs/60%60, secs%60, frac, tod%unit)
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}

	return p
}

// parseTimestamp parses "2006-01-02T15:04:05." plus frac digits into units
// of 10^-frac seconds since the epoch.
func parseTimestamp(s string, frac int) (int64, bool) {
	if len(s) < 11 || s[10] != 'T' {
		return 0, false
	}
	days, ok := parseDate(s[:10])
	if !ok {
		return 0, false
	}
	tod, ok := parseClock(s[11:], frac)
	if !ok {
		return 0, false
	}
	perDay := 86400 * pow10(frac)
	v := new(big.Int).Mul(big.NewInt(days), big.NewInt(perDay))
	v.Add(v, big.NewInt(tod))
	if !v.IsInt64() {
		return 0, false
	}

	return v.Int64(), true
}

func formatTimestamp(v int64, frac int) string {
	perDay := 86400 * pow10(frac)
	days, tod := v/perDay, v%perDay
	if tod < 0 {
		tod += perDay
		days--
	}

	return formatDate(days) + "T" + formatClock(tod, frac)
}

// floorDiv is a / b rounded toward negative infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}

	return q
}

// Year, month and hour values count from 1970 (Iceberg's transform results).

func parseYear(s string) (int64, bool) {
	if len(s) != 4 {
		return 0, false
	}
	y, ok := digits(s)

	return int64(y) - 1970, ok
}

func formatYear(v int64) string { return fmt.Sprintf("%04d", 1970+v) }

func parseMonth(s string) (int64, bool) {
	if len(s) != 7 || s[4] != '-' {
		return 0, false
	}
	y, ok1 := digits(s[:4])
	m, ok2 := digits(s[5:])
	if !ok1 || !ok2 || m < 1 || m > 12 {
		return 0, false
	}

	return int64(y-1970)*12 + int64(m-1), true
}

func formatMonth(v int64) string {
	return fmt.Sprintf("%04d-%02d", 1970+floorDiv(v, 12), v-12*floorDiv(v, 12)+1)
}

func parseHour(s string) (int64, bool) {
	if len(s) != 13 || s[10] != '-' {
		return 0, false
	}
	days, ok := parseDate(s[:10])
	if !ok {
		return 0, false
	}
	h, ok := digits(s[11:])
	if !ok || h > 23 {
		return 0, false
	}

	return days*hoursPerDay + int64(h), true
}

func formatHour(v int64) string {
	days := floorDiv(v, hoursPerDay)

	return fmt.Sprintf("%s-%02d", formatDate(days), v-days*hoursPerDay)
}
