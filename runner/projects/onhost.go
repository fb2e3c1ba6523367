package projects

import (
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/hosts"
)

// OnHost is dir as Add takes it for a directory on host (`project add
// --host HOST DIR`): host:HOST:DIR; dir as it is without host. A dir that
// names its host already is a usage error: the host is given once.
func OnHost(dir, host string) (string, error) {
	if host == "" {
		return dir, nil
	}
	if _, _, ok := hosts.Path(dir); ok {
		return "", fault.Usagef("project add: give the host once: --host %s with a path, or host:HOST:/dir", host)
	}
	return "host:" + host + ":" + dir, nil
}
