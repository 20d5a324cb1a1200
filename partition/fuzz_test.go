package partition

import (
	"errors"
	"testing"
)

// fuzzSpecs are the specs the fuzz tests parse against: one per test field
// and a multi-field spec, picked by the first fuzz argument.
func fuzzSpecs(t testing.TB) []*Spec {
	specs := []*Spec{multiSpec(t)}
	for _, f := range testFields {
		specs = append(specs, newTestSpec(t, 0, f))
	}

	return specs
}

func addKeySeeds(f *testing.F) {
	specs := fuzzSpecs(f)
	index := make(map[string]uint8)
	for i, s := range specs[1:] {
		index[s.fields[0].name] = uint8(i + 1)
	}
	for _, tc := range goodKeys {
		f.Add(index[tc.field], tc.in)
	}
	for _, tc := range badKeys {
		f.Add(index[tc.field], tc.in)
	}
	f.Add(uint8(0), "event_date=2026-07-14/region=eu%2Fwest/shard=3/a%2Fb%3Dc=00")
	f.Add(uint8(0), "region=null/event_date=null/shard=null/a%2Fb%3Dc=null")
}

// FuzzParseKey checks that every accepted key text parses back from its
// canonical form to the same key, and that every error is ErrMalformedKey.
func FuzzParseKey(f *testing.F) {
	addKeySeeds(f)
	specs := fuzzSpecs(f)
	f.Fuzz(func(t *testing.T, which uint8, in string) {
		s := specs[int(which)%len(specs)]
		k, err := s.Parse(in)
		if err != nil {
			if !errors.Is(err, ErrMalformedKey) || k.IsValid() {
				t.Fatalf("Parse(%q) = %v, %v, want invalid key and ErrMalformedKey", in, k, err)
			}

			return
		}
		k2, err := s.Parse(k.String())
		if err != nil || k2 != k {
			t.Fatalf("Parse(%q) = %q, %v, want %q (from %q)", k.String(), k2, err, k, in)
		}
	})
}

// FuzzKeyFromValues checks KeyFromValues(Values(k)) == k for every
// accepted key text.
func FuzzKeyFromValues(f *testing.F) {
	addKeySeeds(f)
	specs := fuzzSpecs(f)
	f.Fuzz(func(t *testing.T, which uint8, in string) {
		s := specs[int(which)%len(specs)]
		k, err := s.Parse(in)
		if err != nil {
			return
		}
		vals, err := s.Values(k)
		if err != nil {
			t.Fatalf("Values(%q) = %v", k, err)
		}
		if got, err := s.KeyFromValues(vals); err != nil || got != k {
			t.Fatalf("KeyFromValues(%v) = %q, %v, want %q", vals, got, err, k)
		}
	})
}
