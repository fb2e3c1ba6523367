package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/runner/eventtext"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/state/follow"
)

// eventsOptions are the flags of runner events.
type eventsOptions struct {
	follow, asJSON bool
	since, after   string
	project, task  string
	host           string
}

func (a *app) newEventsCmd() *cobra.Command {
	var o eventsOptions
	cmd := &cobra.Command{
		Use:   "events [--follow] [--json] [--since T | --after CURSOR] [--project P] [--host H] [--task ID]",
		Short: "Print every change of tasks and messages, and follow them as they happen",
		Long: `Print the event stream: one line per change — a task's status with its reason, the
end of a turn with the first line of its answer, a message posted, delivered,
dropped or failed, an overlap between tasks — oldest first. Each event has a
cursor: --after CURSOR prints only what came after it, so a reader that stops
goes on exactly where it left, nothing missed or repeated. --since takes a
duration (1h) or a time (RFC 3339). --follow keeps printing as changes are
written (it wakes on the write, it does not poll) until interrupted (exit
130, as any interrupted command).

With --json each line is a JSON object (schema version "v": 1):
  {"cursor", "v", "time", "type": "status"|"turn"|"message"|"overlap"|"check",
   "task", "project", "host", "pool", "group", "status", "reason", "answer", "message", "from", "to",
   "with", "files"}
Exit codes: 0; 2 bad flags (an unknown task, a cursor that is no number).`,
		Example: `  runner events --since 1h
  runner events --task t_abc123 --json
  runner events --follow --project api   # until Ctrl-C`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.runEvents(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.BoolVarP(&o.follow, "follow", "f", false, "keep printing changes as they are written")
	f.StringVar(&o.since, "since", "", "only events from this long ago (1h) or this time (RFC 3339) on")
	f.StringVar(&o.after, "after", "", "only events after this cursor")
	f.StringVar(&o.project, "project", "", "only events of this project")
	f.StringVar(&o.host, "host", "", "only events of tasks on this host (local: this machine's)")
	f.StringVar(&o.task, "task", "", "only events of this task (its id or a unique prefix)")
	a.jsonFlag(cmd, &o.asJSON, "print each event as one JSON line")
	return cmd
}

// runEvents turns the flags into a filter and a cursor, and prints the
// stream through state/follow.
func (a *app) runEvents(ctx context.Context, o eventsOptions) error {
	fo := follow.Options{Follow: o.follow, Filter: follow.Filter{Project: o.project, Host: o.host}}
	switch {
	case o.after != "" && o.since != "":
		return fault.Usagef("events: give --since or --after, not both")
	case o.after != "":
		n, err := strconv.ParseUint(o.after, 10, 64)
		if err != nil {
			return fault.Usagef("--after %q: a cursor is the number an event's \"cursor\" gives", o.after)
		}
		fo.After = n
	case o.since != "":
		t, err := parseSince(o.since, "1h")
		if err != nil {
			return err
		}
		fo.Filter.Since = t
	}
	env, _, err := a.runnerEnv(false)
	if err != nil {
		return err
	}
	fo.Store = env.Store
	if o.task != "" {
		st, err := fo.Store.Read(ctx)
		if err != nil {
			return err
		}
		t, err := st.FindTask(o.task)
		if err != nil {
			return fault.Usagef("%v (see 'runner ps --all')", err)
		}
		fo.Filter.Task = t.ID
	}
	// Unfiltered JSON goes out as written: a follower of a busy stream
	// decodes nothing but the cursor.
	if o.asJSON && fo.Filter.IsZero() {
		fo.Line = func(line []byte) { a.rawOut.Write(line) }
	} else {
		fo.Event = func(ev state.StreamEvent) { a.printEvent(ev, o.asJSON) }
	}
	fo.Lost = func(first uint64) {
		fmt.Fprintf(a.errOut, "runner: events %d to %d were rotated away; going on from %d\n", fo.After+1, first-1, first)
	}
	// A follower only reads: it runs when nothing else wants the CPU, so
	// that many of them cost the writers (supervisors, dispatches)
	// nothing on a small machine. An idle machine runs it at once.
	fo.Following = lowerPriority
	return follow.Run(ctx, fo)
}

// printEvent prints one event: a JSON line, or a line for a person (what
// agents wrote is made visible text).
func (a *app) printEvent(ev state.StreamEvent, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(ev)
		a.rawOut.Write(append(b, '\n'))
		return
	}
	io.WriteString(a.out, eventtext.Line(ev))
}
