// Package partition holds partition keys: the value of every partition field
// of one Iceberg partition, parsed once and compared as a value.
//
// # Basics
//
// A [Spec] is an iceberg.PartitionSpec compiled against a table schema. It
// parses key text ([Spec.Parse], [ParseKey]), converts the partition values
// iceberg-go stores in data files ([Spec.KeyFromValues], [Spec.Values]),
// turns a key into a scan filter over the source columns ([Spec.Filter]) and
// checks Arrow rows against a key ([Spec.Matcher], [Matcher.Check]). For
// manifests it computes the partition field summaries the spec defines
// ([Spec.Summaries]: zero-length bounds for empty strings, -0.0 below
// +0.0, NaN never a bound) and prunes on them ([Spec.MayHold]).
//
// A [Key] is small, comparable and immutable, like net/netip.Addr: use it as a
// map key, compare it with ==. Its zero value is invalid. Keys of different
// spec ids are never equal.
//
// # Text form
//
// A key is written name=value for every partition field, in spec order,
// joined by "/": "event_date=2026-07-14/region=eu". The name is the partition
// field name (not the source column name). An unpartitioned spec (no fields)
// has one key, written "". [Key.String] is canonical; parsing accepts the
// fields in any order, but each exactly once.
//
// Values are written by the type of the partition value:
//
//	bool                  true, false
//	int, long             decimal integer
//	float, double         strconv 'g' format, shortest form (NaN, +Inf, -Inf)
//	decimal(P,S)          -123.45, exactly S fraction digits (no point when S=0)
//	date                  2006-01-02
//	time                  15:04:05.000000
//	timestamp             2006-01-02T15:04:05.000000
//	timestamptz           2006-01-02T15:04:05.000000+00:00
//	timestamp_ns          2006-01-02T15:04:05.000000000 (timestamptz_ns adds +00:00)
//	string                the string itself
//	uuid                  canonical lowercase form
//	binary, fixed         lowercase hex
//
// Transforms write their result: identity and truncate write the source type
// form (a truncate value must already be truncated, and may be any value
// Java and iceberg-go produce: truncating an int or long near its minimum
// wraps, truncate[10] of int -2147483648 is 2147483646, and a decimal
// truncation may have one digit more than its precision); year "2026", month
// "2026-07", day "2026-07-14" and hour "2026-07-14-10" (Iceberg's human
// strings); bucket an integer in [0, N). Dates and times are limited to years
// 0000 to 9999.
//
// A null value is written "null"; a void field is always null. The string
// whose value is "null" is written "%6Eull". An empty value is allowed for
// string and binary only: "name=" for another type is malformed ("missing
// value").
//
// Escaping: the bytes '%', '/', '=', ',', bytes below 0x20, 0x7F and every
// byte from 0x80 (so each byte of non-ASCII UTF-8) are written %XX with
// uppercase hex, in names and values. Parsing decodes %XX in either case,
// rejects a bad escape, an unescaped '=' in a value and invalid UTF-8 in a
// string value.
//
// Parse errors wrap [ErrMalformedKey] and name the field:
//
//	partition: key "event_date=2026-13-01": field event_date: bad date "2026-13-01"
//
// # Caveats
//
// Partition fields with several source columns and transforms iceberg-go does
// not know are not supported: [NewSpec] rejects them.
package partition
