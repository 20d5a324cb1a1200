package main

import "github.com/icerun/icerun/backfill"

// inputIdentity is filled in with the backfill input identity.
func inputIdentity(dir string) []backfill.Option { return nil }
