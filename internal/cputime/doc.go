// Package cputime reads the CPU time a process has used: benchmarks on a
// shared machine report it beside elapsed time, which the other work on
// the machine stretches more.
package cputime
