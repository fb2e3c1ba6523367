// Package eventtext writes the state's event stream (state.StreamEvent)
// for people: `runner events` without --json, a line per event (Line).
// What agents wrote reaches the terminal as visible text only.
package eventtext

import (
	"fmt"
	"strings"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// Line is ev for people: its time, cursor, type and task, then what
// happened (with "@host" or "@(pool P)" where it ran), ending in a
// newline.
func Line(ev state.StreamEvent) string {
	what := What(ev)
	if ev.Host != "" {
		what = "@" + ev.Host + " " + what
	} else if ev.Pool != "" {
		what = "@(pool " + ev.Pool + ") " + what
	}
	return fmt.Sprintf("%s  %6d  %-8s %-11s %s\n", ev.Time.Local().Format("2006-01-02 15:04:05.000"), ev.Cursor, ev.Type,
		textutil.OrDash(ev.Task), textutil.VisibleLine(what))
}

// What says what happened in ev, by its type ("" for a type it does
// not know).
func What(ev state.StreamEvent) string {
	withReason := func(s string) string {
		if ev.Reason != "" {
			return s + ": " + ev.Reason
		}
		return s
	}
	switch ev.Type {
	case state.EventStatus:
		return withReason(ev.Status)
	case state.EventTurn:
		return "turn ended: " + ev.Answer
	case state.EventMessage:
		return withReason(fmt.Sprintf("%s %s from %s to %s", ev.Message, ev.Status, ev.From, ev.To))
	case state.EventCheck:
		return "check " + ev.Status + ": " + ev.Reason
	case state.EventPush:
		return "push " + ev.Status + " to " + ev.To + ": " + ev.Reason
	case state.EventAnswer:
		return withReason(fmt.Sprintf("answer %s option %s (op %s, digest %s, by %s)", ev.Status, ev.Option, ev.Op, ev.Digest, textutil.OrDash(ev.By)))
	case state.EventOverlap:
		if len(ev.Files) == 0 {
			return "no longer overlaps " + ev.With
		}
		return "overlaps " + ev.With + ": " + strings.Join(ev.Files, ", ")
	}
	return ""
}
