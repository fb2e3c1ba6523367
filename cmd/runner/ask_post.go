package main

import (
	"context"
	"errors"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/state"
)

// postAskMessage posts a message from `runner ask` (the FYI after a shadow
// answer, or the question to a target without a headless mode) to a task's
// queue. Messages between tasks are not part of this build: ask reports
// this error per target and still prints the answers.
func postAskMessage(ctx context.Context, env *runner.Env, to *state.Task, typ, text string) error {
	return errors.New("messages between tasks are not available in this build")
}
