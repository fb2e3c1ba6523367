package runner

import (
	"context"

	"github.com/runner-cli/runner/runner/remote"
	"github.com/runner-cli/runner/state"
)

// startMirror starts streaming t's files from its host into their local
// copies (remote.Mirror).
func startMirror(ctx context.Context, env *Env, t *state.Task) (context.Context, func(), error) {
	c, err := env.Hosts.Conn(ctx, t.Tmux.Host)
	if err != nil {
		return nil, nil, err
	}
	return remote.Mirror(ctx, c, env.Store, t, GetenvOf(env)(remote.LostAfterVar))
}

// startEarlyMirror starts streaming t's files now, for the supervisor this
// process runs next (nil when it cannot: the supervisor tries again, and
// says why).
func startEarlyMirror(ctx context.Context, env *Env, t *state.Task) *remote.Early {
	runCtx, stop, err := startMirror(ctx, env, t)
	if err != nil {
		return nil
	}
	return remote.NewEarly(runCtx, stop)
}
