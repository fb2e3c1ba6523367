package runner

import (
	"context"
	"os"
	"path/filepath"

	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/state"
)

// DoorPath is where a sandboxed task's door socket is (package door).
func (env *Env) DoorPath(id string) string {
	return filepath.Join(env.Store.TaskFile("door-dir", id), door.SocketName)
}

// serveDoor serves task t's door while ctx lasts (door.Open): its agent's
// requests (runner msg, status, a child dispatch …) run as runner here,
// confined to t, in t's folder (door.Runner). A door that cannot be
// opened is logged: the task runs on, its agent's runner commands then
// fail with what happened.
func serveDoor(ctx context.Context, env *Env, t *state.Task) {
	if env.Exe == "" {
		return
	}
	environ := os.Environ
	if env.Environ != nil {
		environ = env.Environ
	}
	r := door.Runner{Exe: env.Exe, TaskID: t.ID, Dir: t.Dir, StateDir: env.Store.Dir(), Socket: env.TC.Socket(), Environ: environ()}
	if err := door.Open(ctx, env.Store.TaskFile("door-dir", t.ID), r.Handle); err != nil {
		env.Warn("door of %s: %v", t.ID, err)
	}
}
