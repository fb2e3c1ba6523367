package agentsim

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/subproc"
)

// contextHook is the executor's context hook (nil without --context-hook).
func (o *Options) contextHook() func(ctx context.Context, prompt string) string {
	if len(o.ContextHook) == 0 {
		return nil
	}
	return func(ctx context.Context, prompt string) string { return runContextHook(ctx, o, prompt) }
}

// runContextHook runs the --context-hook argv after a tool (write, run)
// with a PostToolUse event on stdin, as Claude Code runs its PostToolUse
// hooks, and returns the context it adds to the running turn: its
// output's hookSpecificOutput.additionalContext ("" for none, or when the
// hook fails).
func runContextHook(ctx context.Context, o *Options, prompt string) string {
	if len(o.ContextHook) == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	in, _ := json.Marshal(hookInput{HookEventName: "PostToolUse", CWD: o.Dir, SessionID: o.SessionID, LastPrompt: prompt})
	cmd := subproc.Command(ctx, o.ContextHook[0], o.ContextHook[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin, cmd.WaitDelay = o.Dir, o.Env, bytes.NewReader(in), time.Second
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	var v struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if json.Unmarshal(out, &v) != nil {
		return ""
	}
	return v.HookSpecificOutput.AdditionalContext
}

// showContext shows context a hook added to the turn, one line per line
// of it that says something, as "context: LINE" (the turn's answer
// carries them).
func showContext(ui turnUI, text string) {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ui.line("context: " + l)
		}
	}
}
