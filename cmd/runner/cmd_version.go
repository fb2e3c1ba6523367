package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// A release stamps these at build time (scripts/release.sh):
//
//	-ldflags "-X main.version=v1.2.3 -X main.commit=<full hash> -X main.date=<the commit's time, RFC 3339>"
//
// Left empty, each comes from the build info: the module version
// (go install …@v1.2.3), vcs.revision and vcs.time.
var (
	version = ""
	commit  = ""
	date    = ""
)

type versionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

// buildStamp is what the linker's -X flags set (empty when not given).
type buildStamp struct {
	version, commit, date string
}

func readVersion() versionInfo {
	bi, _ := debug.ReadBuildInfo()
	return makeVersion(buildStamp{version, commit, date}, bi, runtime.Version(), runtime.GOOS+"/"+runtime.GOARCH)
}

// makeVersion fills the version from the stamp, falling back to the build
// info (bi may be nil) field by field. Whether the tree was modified is
// taken from the build info only with its commit: a stamped commit names
// exactly what was built.
func makeVersion(s buildStamp, bi *debug.BuildInfo, goVersion, platform string) versionInfo {
	v := versionInfo{Version: s.version, Commit: s.commit, Date: s.date, GoVersion: goVersion, Platform: platform}
	if bi != nil {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				if s.commit == "" {
					v.Commit = kv.Value
				}
			case "vcs.time":
				if s.date == "" {
					v.Date = kv.Value
				}
			case "vcs.modified":
				v.Modified = s.commit == "" && kv.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "devel"
	}
	return v
}

// String is the line `runner version` prints:
//
//	runner v1.2.3 0123456789ab (2026-11-28T10:00:00Z, go1.26.8, linux/amd64)
func (v versionInfo) String() string {
	s := "runner " + v.Version
	if v.Commit != "" {
		s += " " + v.Commit[:min(12, len(v.Commit))]
		if v.Modified {
			s += "+dirty"
		}
	}
	s += " ("
	if v.Date != "" {
		s += v.Date + ", "
	}
	return s + v.GoVersion + ", " + v.Platform + ")"
}

func (a *app) newVersionCmd() *cobra.Command {
	var opts versionOptions
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print runner's version",
		Long: `version prints runner's version, the commit it was built from and that commit's
date, the Go version and the platform. --json prints them as
{version, commit, date, modified, go_version, platform}.`,
		Example: `  runner version
  runner version --json`,
		Args: args(cobra.NoArgs),
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
	fmt.Fprintln(a.out, v)
	return nil
}
