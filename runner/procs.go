package runner

import (
	"os"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/proctree"
)

// liveProcs is messaging.Procs on this machine's processes.
type liveProcs struct{}

var _ messaging.Procs = liveProcs{}

func (liveProcs) Self() (int, string)              { return os.Getpid(), selfIdentity() }
func (liveProcs) Alive(pid int, ident string) bool { return proctree.AliveAs(pid, ident) }
