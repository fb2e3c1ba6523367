package main

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/runner/buildinfo"
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

// readVersion is this binary's version: the stamp over the build info.
func readVersion() buildinfo.Info {
	return buildinfo.Read(buildinfo.Stamp{Version: version, Commit: commit, Date: date})
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
