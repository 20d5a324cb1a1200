package partition

import (
	"errors"
	"strings"
)

const upperHex = "0123456789ABCDEF"

// needsEscape reports whether b is written %XX in key text.
func needsEscape(b byte) bool {
	return b == '%' || b == '/' || b == '=' || b == ',' || b < 0x20 || b >= 0x7F
}

// escape writes every byte that needsEscape as %XX.
func escape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])

			continue
		}
		b.WriteByte(c)
	}

	return b.String()
}

var errBadEscape = errors.New("bad escape")

// unescape decodes %XX (either case).
func unescape(s string) (string, error) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)

			continue
		}
		if i+2 >= len(s) {
			return "", errBadEscape
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", errBadEscape
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}

	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}

	return 0, false
}
