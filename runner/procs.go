package runner

import (
	"os"

	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/proctree"
)

// LiveProcs is messaging.Procs on this machine's processes.
type LiveProcs struct{}

var _ messaging.Procs = LiveProcs{}

func (LiveProcs) Self() (int, string)              { return os.Getpid(), selfIdentity() }
func (LiveProcs) Alive(pid int, ident string) bool { return proctree.AliveAs(pid, ident) }
