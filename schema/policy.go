package schema

import "strconv"

// UnknownPolicy says what [Resolve] does with input fields that match no
// table column, at any depth.
type UnknownPolicy int

const (
	// IgnoreUnknown drops unmatched input fields; [Resolution.Ignored] lists them.
	IgnoreUnknown UnknownPolicy = iota
	// RejectUnknown makes [Resolve] fail with [ErrUnknownField].
	RejectUnknown
)

// String returns the constant's name.
func (p UnknownPolicy) String() string {
	switch p {
	case IgnoreUnknown:
		return "IgnoreUnknown"
	case RejectUnknown:
		return "RejectUnknown"
	}
	return "UnknownPolicy(" + strconv.Itoa(int(p)) + ")"
}
