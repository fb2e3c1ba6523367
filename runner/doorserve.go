package runner

import (
	"context"
	"os"
	"path/filepath"

	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/state"
)

// DoorPath is where a sandboxed task's door socket is (package door).
func (env *Env) DoorPath(id string) string {
	return filepath.Join(env.Store.TaskFile(state.FileDoorDir, id), door.SocketName)
}

// serveDoor serves task t's door while ctx lasts (door.ServeTask): its
// agent's requests (runner msg, status, a child dispatch …) run as runner
// here, confined to t. For a task on a host (c), the door is forwarded to
// its socket there (remote.ForwardDoor).
func serveDoor(ctx context.Context, env *Env, t *state.Task, c *hosts.Conn) {
	environ := os.Environ
	if env.Environ != nil {
		environ = env.Environ
	}
	door.ServeTask(ctx, env.Store.TaskFile(state.FileDoorDir, t.ID), door.Runner{Exe: env.Exe, TaskID: t.ID, Dir: t.Dir, StateDir: env.Store.Dir(),
		Socket: env.TC.Socket(), Environ: environ(), Away: c != nil}, func(ctx context.Context) error {
		return remote.ForwardDoor(ctx, c, t.ID, env.DoorPath(t.ID))
	}, env.Warn)
}
