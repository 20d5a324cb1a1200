package snapshotcommit

import (
	"net/url"
	"strings"

	"github.com/apache/iceberg-go"

	"github.com/icerun/icerun/commit"
)

// inputsProperty is the value of SummaryPartitionInputs for parts: their
// Input identities, query-escaped (an identity may hold a comma) and
// comma-joined in the order of the parts; false when no part has one.
func inputsProperty(parts []Part) (string, bool) {
	vals := make([]string, len(parts))
	any := false
	for i, p := range parts {
		vals[i] = url.QueryEscape(p.Input)
		any = any || p.Input != ""
	}
	return strings.Join(vals, ","), any
}

// inputAt is the input identity of the i-th key of a snapshot summary.
func inputAt(p iceberg.Properties, i int) string {
	raw := p[commit.SummaryPartitionInputs]
	if raw == "" {
		return ""
	}
	vals := strings.Split(raw, ",")
	if i >= len(vals) {
		return ""
	}
	v, err := url.QueryUnescape(vals[i])
	if err != nil {
		return ""
	}
	return v
}
