package table

// CountOnly switches row hashing off (rows are counted only), for
// BenchmarkReplaceFingerprintCost.
var CountOnly = &countOnly

// DropLineage makes rewritten rows get new row ids, for
// BenchmarkRowLineageCost.
var DropLineage = &dropLineage
