package table

// CountOnly switches row hashing off (rows are counted only), for
// BenchmarkReplaceFingerprintCost.
var CountOnly = &countOnly
