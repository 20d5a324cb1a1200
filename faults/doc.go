// Package faults injects failures into a real catalog and its file IO, to
// prove that a replacement is crash safe: whatever operation fails, the
// table is at its old or its new state, and a rerun converges.
//
// An [Injector] numbers every operation that goes through its wrappers
// (catalog loads and commits, file opens, creates, closes, writes,
// removes, stats, listings) and fails the k-th with one [Kind] of fault:
//
//   - [Fail]: the operation is not carried out and returns [ErrInjected];
//   - [Hang]: the operation blocks until its context ends (or the hang
//     limit passes) and returns the context's error;
//   - [ApplyThenFail]: the operation is carried out, then returns
//     [ErrInjected]: for a catalog commit this is the unknown-outcome case;
//   - [Outage]: the k-th and every later operation fail, as when the
//     catalog or the object store becomes unreachable.
//
// [WrapCatalog] wraps a catalog.Catalog; every table it loads or commits
// does its file IO through [WrapIO], so one Injector sees both. An Injector
// whose k is 0 never fails: it counts the operations of a run, to know
// which k to inject next.
//
// The wrappers are for tests and chaos drills; they add a mutex and an
// atomic counter per operation. All types are safe for concurrent use.
package faults
