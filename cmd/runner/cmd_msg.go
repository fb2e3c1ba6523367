package main

import (
	"context"
	"errors"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/mailbox"

	"github.com/runner-cli/runner/state"
	"github.com/spf13/cobra"
)

func (a *app) newMsgCmd() *cobra.Command {
	var opts msgOptions
	cmd := &cobra.Command{
		Use:   "msg TO [TEXT]",
		Short: "Send a message to a task; it is delivered when the task's agent is ready",
		Long: `Put a message in the queue of one or more tasks. TO is a task id (or unique
prefix), @parent, @siblings (the caller's parent's other children) or
@project:NAME or @project:DIR (every active task of the project — a registered
name or a directory such as ./a — like a chat room). Inside a
runner pane the sender is the pane's task (RUNNER_TASK_ID); elsewhere it is the
user.

A message is never typed into a busy agent: it waits until the agent's turn
ends, then every pending message of the task goes in as one prompt, with a
header per message (id, sender, type). A task that is done and idle at its
prompt gets its messages at once (a supervisor starts for that turn).

Loop protection: a message sent while the agent handles delivered messages
carries their hops + 1 and is refused past max_hops (config, default 8); a
repeat of a pending message (same sender, recipient and type) is merged into
it; the messages of one tree of tasks are capped (max_messages_per_root,
default 200); a queue holds at most 32 pending messages. Every acceptance,
refusal and delivery goes to the journal.

Exit status: 0 when every recipient accepted it, 2 when one refused it (the
reason is printed) or for bad input.`,
		Example: `  runner msg t_def456 "the API schema changed: regenerate the client first"
  runner msg @project:api --type update "main is green again"`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runMsg(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.typ, "type", "t", string(state.MessageRequest), "request, update, result or dependency")
	cmd.Flags().StringVarP(&opts.file, "file", "f", "", "read the text from file F ('-' for standard input)")
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// msgOptions are the arguments and flags of `runner msg`.
type msgOptions struct {
	args   []string
	typ    string
	file   string
	asJSON bool
}

func (a *app) runMsg(ctx context.Context, opts msgOptions) error {
	text, err := a.readText(opts.args[1:], opts.file)
	if err != nil {
		return err
	}
	env, cfg, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	d := mailboxDeps(env)
	d.TreeOnly = a.treeOnly(cfg)
	outs, err := mailbox.Post(ctx, d, mailbox.Request{To: opts.args[0], Text: text,
		Type: state.MessageType(opts.typ), MaxHops: cfg.MaxHops, MaxPerRoot: cfg.MaxMessagesPerRoot})
	if outs == nil {
		return err
	}
	if opts.asJSON {
		if perr := a.printJSON(outs); perr != nil {
			return perr
		}
		if err != nil {
			var refused *mailbox.RefusedError
			if errors.As(err, &refused) {
				return &exitcode.Error{Code: exitcode.Of(err)}
			}
			return err
		}
		return nil
	}
	mailbox.WriteOutcomes(a.out, outs) // the refused ones: in the error
	return err
}

func (a *app) newInboxCmd() *cobra.Command {
	var opts inboxOptions
	cmd := &cobra.Command{
		Use:   "inbox [ID]",
		Short: "List a task's messages, received and sent, pending and delivered",
		Long: `List the messages to and from a task, oldest first: id, direction, the other
task, type, status, hops, age and the first line. Without ID, inside a runner
pane, the pane's task.`,
		Example: `  runner inbox t_abc123
  runner inbox t_abc123 --json`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runInbox(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// inboxOptions are the arguments and flags of `runner inbox`.
type inboxOptions struct {
	args   []string
	asJSON bool
}

func (a *app) runInbox(ctx context.Context, opts inboxOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	ref := ""
	if len(opts.args) == 1 {
		ref = opts.args[0]
	}
	t, entries, err := mailbox.Inbox(ctx, mailboxDeps(env), ref)
	if err != nil {
		return err
	}
	if opts.asJSON {
		if entries == nil {
			entries = []mailbox.Entry{}
		}
		return a.printJSON(struct {
			Task     string          `json:"task"`
			Messages []mailbox.Entry `json:"messages"`
		}{t.ID, entries})
	}
	mailbox.WriteInbox(a.out, t.ID, entries, clock.Now())
	return nil
}

func (a *app) newQueueCmd() *cobra.Command {
	var opts queueOptions
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "Show each task's queue of undelivered messages: depth and oldest age",
		Example: `  runner queue
  runner queue --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runQueue(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// queueOptions are the arguments and flags of `runner queue`.
type queueOptions struct {
	asJSON bool
}

func (a *app) runQueue(ctx context.Context, opts queueOptions) error {
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	qs, err := mailbox.Queues(ctx, mailboxDeps(env))
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(qs)
	}
	mailbox.WriteQueues(a.out, qs)
	return nil
}
