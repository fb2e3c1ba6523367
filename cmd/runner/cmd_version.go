package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// the module version or the VCS revision from the build info is used.
var version = ""

type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

func readVersion() versionInfo {
	v := versionInfo{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	return v
}

func (a *app) newVersionCmd() *cobra.Command {
	var opts versionOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print runner's version",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runVersion(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.asJSON, "json", false, "print as JSON")
	return cmd
}

// versionOptions are the arguments and flags of `runner version`.
type versionOptions struct {
	asJSON bool
}

func (a *app) runVersion(ctx context.Context, opts versionOptions) error {
	v := readVersion()
	if opts.asJSON {
		return a.printJSON(v)
	}
	commit := ""
	if v.Commit != "" {
		commit = " " + v.Commit[:min(12, len(v.Commit))]
		if v.Modified {
			commit += "+dirty"
		}
	}
	fmt.Fprintf(a.out, "runner %s%s (%s, %s)\n", v.Version, commit, v.GoVersion, v.Platform)
	return nil
}
