package spend

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/runner/profile"
)

// spendWindow bounds how much of a session file is read for one turn:
// its last 16 MiB.
const spendWindow = 16 << 20

// TurnUsage reads what the turn that ev ended used, from the record p's
// Spend names; sig is a piece of the turn's prompt (its first line), ""
// for the last turn. ok is false when the CLI recorded nothing the runner
// can read (then the turn's spend is unknown); complete is false while the
// record does not have the turn's end yet (its answer, as the hook gave
// it: some CLIs run their hook before they write the record), so the
// caller reads again a little later. env looks up the agent's environment
// (HOME, CODEX_HOME). For a record of the session's total alone
// (profile.SessionTotal) u is that total: the caller takes the session's
// earlier turns out.
func TurnUsage(p *profile.Profile, ev profile.HookEvent, sig string, env func(string) string) (u profile.Usage, ok, complete bool) {
	if ev.Usage != nil {
		return *ev.Usage, true, true
	}
	if p == nil {
		return profile.Usage{}, false, true
	}
	switch p.Spend {
	case profile.SpendDroid:
		// The session's total, written before its Stop hook runs.
		u, ok = droidTotal(ev.Transcript)
		return u, ok, true
	case profile.SpendCline:
		// No hook names it: found by the turn's prompt.
		t := clineTurn(clineSessionMessages(env, sig), sig)
		return t.usage, t.ok, t.ended || !t.ok
	}
	r, known := recordOf(p.Spend)
	if !known {
		return profile.Usage{}, false, true
	}
	path := r.file(ev, env)
	if r.endInFile && path == "" {
		return profile.Usage{}, false, true
	}
	var t turnRecord
	if path != "" {
		t = scanTurn(path, r.format, query{sig: sig, turn: ev.Turn})
	}
	if r.endInFile {
		return t.usage, t.ok, t.ended
	}
	complete = t.ended || !ev.HasAnswer || answerIn(t.last, ev.Answer)
	return t.usage, t.ok, complete
}

// A record is where a CLI keeps its session, and how.
type record struct {
	// file is the record a turn-end event names: "" for none.
	file   func(ev profile.HookEvent, env func(string) string) string
	format format
	// endInFile: the hook's payload has no answer to check the record by
	// (Copilot CLI's): the turn is complete once the record has its end.
	endInFile bool
}

// recordOf is the CLI's record, by the profile's Spend (known false:
// none). A switch, not a package-level map built in every process's init.
func recordOf(spend string) (r record, known bool) {
	switch spend {
	case profile.SpendClaude:
		return record{file: transcript, format: claudeFormat}, true
	case profile.SpendCodex:
		return record{file: codexRollout, format: codexFormat}, true
	case profile.SpendGemini:
		return record{file: transcript, format: geminiFormat()}, true
	case profile.SpendQwen:
		return record{file: qwenChat, format: qwenFormat()}, true
	case profile.SpendCopilot:
		return record{file: answerFile, format: copilotFormat, endInFile: true}, true
	}
	return record{}, false
}

// transcript is the session file the payload names (transcript_path).
func transcript(ev profile.HookEvent, _ func(string) string) string { return ev.Transcript }

// answerFile is the session's events file Copilot CLI's agentStop names
// (transcriptPath).
func answerFile(ev profile.HookEvent, _ func(string) string) string { return ev.AnswerFile }

// codexRollout finds the rollout file of the Codex thread ev names under
// $CODEX_HOME/sessions (default ~/.codex/sessions): "" when there is none.
func codexRollout(ev profile.HookEvent, env func(string) string) string {
	id := ev.Session
	if id == "" || strings.ContainsAny(id, `/\*?[`) {
		return ""
	}
	home := cliHome(env, "CODEX_HOME", ".codex")
	if home == "" {
		return ""
	}
	return lastMatch(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*"+id+".jsonl"))
}

// cliHome is a CLI's home folder: the variable's value, else dir under
// HOME ("" when neither is set).
func cliHome(env func(string) string, variable, dir string) string {
	if home := env(variable); home != "" {
		return home
	}
	if h := env("HOME"); h != "" {
		return filepath.Join(h, dir)
	}
	return ""
}

// qwenChat is the chat file of a Qwen Code session: the payload's
// transcript_path, else ~/.qwen/projects/*/chats/<session>.jsonl.
func qwenChat(ev profile.HookEvent, env func(string) string) string {
	if ev.Transcript != "" {
		return ev.Transcript
	}
	home := env("HOME")
	if ev.Session == "" || home == "" || strings.ContainsAny(ev.Session, `/\*?[`) {
		return ""
	}
	return lastMatch(filepath.Join(home, ".qwen", "projects", "*", "chats", ev.Session+".jsonl"))
}

// copilotRecent bounds copilotSessionEvents (and recentWith): the sessions written last,
// and no older than copilotRecentAge.
const (
	copilotRecent    = 8
	copilotRecentAge = 24 * time.Hour
)

// copilotSessionEvents finds the events file of the Copilot CLI session
// whose latest prompt holds sig, under $COPILOT_HOME/session-state (default
// ~/.copilot): the running turn's, before its agentStop names the file.
// Of the sessions written last (copilotRecent), the newest whose last
// user.message is the turn's; "" when there is none (or sig is empty).
func copilotSessionEvents(env func(string) string, sig string) string {
	home := cliHome(env, "COPILOT_HOME", ".copilot")
	if home == "" || sig == "" {
		return ""
	}
	return recentWith(filepath.Join(home, "session-state", "*", "events.jsonl"), func(path string) bool {
		return copilotLastPrompt(path, sig)
	})
}

// recentWith is the newest of the files the glob pattern matches, of the
// copilotRecent written last within copilotRecentAge, for which has is
// true: "" when there is none.
func recentWith(pattern string, has func(path string) bool) string {
	matches, _ := filepath.Glob(pattern)
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() && clock.Since(clock.Outside(fi.ModTime())) < copilotRecentAge {
			files = append(files, file{m, clock.Outside(fi.ModTime())})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	for i, f := range files {
		if i == copilotRecent {
			break
		}
		if has(f.path) {
			return f.path
		}
	}
	return ""
}

// copilotLastPrompt reports whether the last user.message of a Copilot CLI
// events file holds sig.
func copilotLastPrompt(path, sig string) bool {
	last := ""
	_ = tailfile.Lines(path, answerWindow, func(l tailfile.Line) bool {
		var rec struct {
			Type string         `json:"type"`
			Data copilotMessage `json:"data"`
		}
		if bytes.Contains(l.Text, []byte(`"user.message"`)) && json.Unmarshal(bytes.TrimSpace(l.Text), &rec) == nil && rec.Type == "user.message" {
			last = rec.Data.Content
		}
		return true
	})
	return last != "" && promptMatches(last, sig)
}

// lastMatch is the last file the glob pattern matches: "" for none.
func lastMatch(pattern string) string {
	matches, _ := filepath.Glob(pattern)
	if len(matches) == 0 {
		return ""
	}
	return matches[len(matches)-1]
}

// turnRecord is what a session file tells of one turn: its spend (ok: the
// turn and some usage were found), the text of its last answer, and
// whether the file marks the turn's end.
type turnRecord struct {
	usage profile.Usage
	ok    bool
	last  string
	ended bool
}

// answerIn reports whether a record's last answer is the hook's: the
// first line of the hook's answer is in it.
func answerIn(last, answer string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(answer), "\n")
	return strings.Contains(normalizeSpace(last), normalizeSpace(first))
}

// promptMatches reports whether a user prompt's text is the turn's: it
// holds sig (any prompt does for an empty sig).
func promptMatches(text, sig string) bool {
	return sig == "" || strings.Contains(normalizeSpace(text), normalizeSpace(sig))
}

// normalizeSpace folds every run of white space (a pasted CR, a tab) to
// one space.
func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// plus is a and b added.
func plus(a, b profile.Usage) profile.Usage {
	a.Input += b.Input
	a.Output += b.Output
	a.Cached += b.Cached
	a.CostUSD += b.CostUSD
	a.HasCost = a.HasCost || b.HasCost
	return a
}
