package partition

import "strings"

// keyHint says which fields a key of s has and how one is written, for
// errors about key text: "the spec's fields are event_date (date); write
// event_date=VALUE, fields joined by /".
func (s *Spec) keyHint() string {
	if len(s.fields) == 0 {
		return "the spec is unpartitioned: the key is empty"
	}
	names := make([]string, len(s.fields))
	forms := make([]string, len(s.fields))
	for i, f := range s.fields {
		names[i] = f.name
		if f.vt.kind != 0 {
			names[i] += " (" + f.vt.kind.String() + ")"
		}
		forms[i] = f.name + "=VALUE"
	}
	return "the spec's fields are " + strings.Join(names, ", ") + "; write " + strings.Join(forms, "/")
}
