// The runtime's periodic look at the cgroup's CPU limit (Go 1.25) would
// wake a long-running runner serve every second or so: set once, at the
// start, as runner does.

//go:debug updatemaxprocs=0

// Command runner-ext runs the commands of runner that link big libraries:
// runner serve, runner mcp, runner watch and the push sender (package
// extcmd). It is installed beside runner, which runs it for those
// commands with its own path as the first argument; runner-ext's help and
// errors speak as runner. Run `runner watch`, not `runner-ext watch`.
package main

import (
	"os"

	"github.com/runner-cli/runner/cmd/runner/internal/extcmd"
	"github.com/runner-cli/runner/runner/buildinfo"
)

// A release stamps these as it stamps runner's (scripts/release.sh):
//
//	-ldflags "-X main.version=v1.2.3 -X main.commit=<full hash> -X main.date=<the commit's time, RFC 3339>"
var (
	version = ""
	commit  = ""
	date    = ""
)

func main() {
	v := buildinfo.Read(buildinfo.Stamp{Version: version, Commit: commit, Date: date}).Version
	os.Exit(extcmd.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, v))
}
