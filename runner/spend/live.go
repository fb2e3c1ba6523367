package spend

import (
	"bytes"

	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/runner/profile"
)

// UsageEvent is the name of a hook event that reports what the turn now
// running used so far (its "usage"), sent while the turn goes on: the
// sim's usage directive sends one.
const UsageEvent = "Usage"

// liveEventsWindow bounds how much of a task's events file LiveUsage
// reads: its last MiB (a line per turn, a few per turn at most).
const liveEventsWindow = 1 << 20

// LiveUsage reads what the turn now running used so far, while it runs:
// the last usage event (UsageEvent) in the task's events file after byte
// offset from (where the turn's delivery began; -1 when not known: then
// none is taken), else, for a CLI whose spend is read from its own record,
// the turns in the record the task's latest hook event named (Claude
// Code's transcript, Codex's thread, …) after the prompt that holds sig.
// ok is false when nothing can be read yet: the record is named only by a
// turn's end for most CLIs, so a task's first turn has none (Claude Code's
// prompt hook names it as the turn begins; Copilot CLI's events file is
// found by the turn's prompt, copilotSessionEvents). env looks up the agent's
// environment; nil: the record is on another machine.
func LiveUsage(p *profile.Profile, eventsFile string, from int64, sig string, env func(string) string) (u profile.Usage, ok bool) {
	if p == nil || p.Spend == "" || eventsFile == "" || sig == "" {
		return profile.Usage{}, false
	}
	lines := eventLines(eventsFile, liveEventsWindow)
	// Parsed from the newest back, and no further than needed.
	var named *profile.HookEvent
	for i := len(lines) - 1; i >= 0 && !ok; i-- {
		l := lines[i]
		if named != nil && (from < 0 || l.off < from) {
			break // the record is named, and no usage event can come
		}
		ev, parsed := profile.ParseHookEvent(l.text)
		switch {
		case !parsed:
		case ev.Name == UsageEvent && ev.Usage != nil && from >= 0 && l.off >= from:
			u, ok = *ev.Usage, true
		case named == nil && (ev.Transcript != "" || ev.Session != "" || ev.AnswerFile != ""):
			named = &ev
		}
	}
	if !ok && named == nil && p.Spend == profile.SpendCopilot && env != nil {
		// Copilot CLI names its record only as a turn ends: on a task's
		// first turn the session whose latest prompt is this turn's.
		if f := copilotSessionEvents(env, sig); f != "" {
			named = &profile.HookEvent{AnswerFile: f}
		}
	}
	if !ok && named == nil && FoundByPrompt(p.Spend) {
		named = &profile.HookEvent{} // Cline's: found by the turn's prompt
	}
	if ok || p.Spend == profile.SpendHook || named == nil || env == nil {
		return u, ok
	}
	// The record the task's session keeps, read for the turn sig names
	// (not the earlier turn the event was about).
	rec := profile.HookEvent{Transcript: named.Transcript, Session: named.Session, AnswerFile: named.AnswerFile}
	u, ok, _ = TurnUsage(p, rec, sig, env)
	return u, ok
}

// eventLine is a line of an events file and the offset it starts at.
type eventLine struct {
	text string
	off  int64
}

// eventLines reads the whole lines in the last window bytes of the events
// file at path (a first line cut by the window is left out, and a last
// one still being written).
func eventLines(path string, window int64) []eventLine {
	var out []eventLine
	_ = tailfile.Lines(path, window, func(l tailfile.Line) bool {
		if l.Whole && !l.Cut {
			out = append(out, eventLine{string(bytes.TrimSpace(l.Text)), l.Off})
		}
		return true
	})
	return out
}

// FoundByPrompt reports whether the record a profile's Spend names is
// found by the turn's prompt alone, no hook event naming it (Cline CLI's,
// whose turns the screen ends).
func FoundByPrompt(spend string) bool { return spend == profile.SpendCline }
