package main

import (
	"context"
	"fmt"
	"runtime/debug"
)

// versionCmd prints the module version of icerun (or its VCS revision for
// a build from a checkout) and those of iceberg-go and arrow-go.
func versionCmd(ctx context.Context, e *env, args []string) error {
	fs := e.flagsOnly()
	rest, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintln(e.out, "icerun (no build information)")
		return nil
	}
	v := bi.Main.Version
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+modified"
			}
		}
	}
	if rev != "" {
		v += " (" + rev + dirty + ")"
	}
	fmt.Fprintf(e.out, "icerun %s, %s\n", v, bi.GoVersion)
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/apache/iceberg-go", "github.com/apache/arrow-go/v18":
			fmt.Fprintf(e.out, "  %s %s\n", d.Path, d.Version)
		}
	}
	return nil
}
