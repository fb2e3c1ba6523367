// Package notice carries runner's own notices (an overlap's message) into
// a turn that is running, through the agent CLI's hook where that hook can
// add context to the turn (Claude Code's and Qwen Code's PostToolUse and
// PostToolUseFailure, Gemini CLI's AfterTool, runner's OpenCode plugin
// and pi extension after each tool call, the simulated agent's
// --context-hook): runner's notices never start a turn (DESIGN,
// "Promises to scripts"; docs/agents.md "Notices within a turn").
//
// The parts, all files (the hook runs in the agent's process tree, inside
// its sandbox, where runner's state is out of reach):
//
//   - Offer: whoever posts a notice to a running task writes it, framed as
//     the prompt would carry it, as a file of the task's hook directory
//     (read-only in a sandbox): notices/<message>.<merged>.json.
//   - Take: the CLI's hook (`runner hook --task ID --context EVENT`) prints
//     the notices not taken yet as the hook's output (additionalContext)
//     and appends a NoticeTaken event, naming them, to the task's events
//     file. The events file's flock makes hooks that run at once (parallel
//     tool calls) take a notice once.
//   - Settle: at the turn's end the supervisor reads which notices were
//     taken (those messages are delivered) and removes the files; a notice
//     no hook took stays pending, for the next turn someone starts.
//
// Take and Settle both hold the events file's flock, and Take lists the
// offers again once it holds it: a notice is either taken before Settle
// reads the events (delivered with this turn) or finds its offer gone
// (pending, for the next turn): given once, never lost.
//
// Of the module it imports only internal/atomicfile, internal/filelock
// (the events file's flock) and internal/untrusted (TestImports).
package notice

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/atomicfile"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/filelock"
	"github.com/runner-cli/runner/internal/untrusted"
)

// TakenEvent is the events file's event a hook appends for the notices
// it gave the agent.
const TakenEvent = "NoticeTaken"

// Notice is one offered notice: a message of runner's, at one merge count.
type Notice struct {
	Message string `json:"message"`
	Merged  int    `json:"merged"`
	// From is the events file's size when it was offered: a taken
	// event for it comes after.
	From int64  `json:"from"`
	Text string `json:"text"`
}

// Name is the notice's file name, and how a taken event names it.
func (n Notice) Name() string { return n.Message + "." + strconv.Itoa(n.Merged) + ".json" }

// Dir is where the notices of the task whose hook directory is hookDir
// are offered.
func Dir(hookDir string) string { return filepath.Join(hookDir, "notices") }

// maxText bounds one notice's text (a message's text, framed).
const maxText = 64 << 10

// Offer writes n in dir (made 0700 when missing), replacing the notice of
// the same message at another merge count.
func Offer(dir string, n Notice) error {
	if len(n.Text) > maxText {
		n.Text = n.Text[:maxText]
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("offer notice %s: %w", n.Message, err)
	}
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(dir, n.Message+".*.json"))
	if err := atomicfile.Write(filepath.Join(dir, n.Name()), b, 0o600, false); err != nil {
		return fmt.Errorf("offer notice %s: %w", n.Message, err)
	}
	for _, f := range old {
		if filepath.Base(f) != n.Name() {
			_ = os.Remove(f)
		}
	}
	return nil
}

// List reads the notices offered in dir, oldest message first.
func List(dir string) []Notice {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Notice
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		f, err := untrusted.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		b, err := io.ReadAll(io.LimitReader(f, 2*maxText))
		f.Close()
		var n Notice
		if err != nil || json.Unmarshal(b, &n) != nil || n.Name() != e.Name() {
			continue
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Message < out[j].Message })
	return out
}

// takenData is a taken event's data.
type takenData struct {
	Notices []string `json:"notices"`
}

// Taken lists the notices named by taken events in the events file at or
// after offset from.
func Taken(events string, from int64) map[string]bool {
	taken := map[string]bool{}
	f, err := untrusted.Open(events)
	if err != nil {
		return taken
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return taken
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 32<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), TakenEvent) {
			continue
		}
		var ev struct {
			Event string    `json:"event"`
			Data  takenData `json:"data"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Event == TakenEvent {
			for _, n := range ev.Data.Notices {
				taken[n] = true
			}
		}
	}
	return taken
}

// hookOutput is what a hook that adds context prints: Claude Code's shape
// (hookSpecificOutput.additionalContext), which the simulated agent reads
// too.
type hookOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// lockWait bounds how long a hook waits for another hook's take (or
// Settle).
const lockWait = 5 * time.Second

// lock takes the events file's flock, waiting at most lockWait
// (filelock.Lock: woken as soon as it is free); release lets it go.
func lock(events string) (release func(), err error) {
	release, err = filelock.Lock(context.Background(), events, false, lockWait)
	if errors.Is(err, filelock.ErrTimeout) {
		return nil, fmt.Errorf("lock %s: %w", events, errHeld)
	}
	return release, err
}

// errHeld: another hook, or Settle, held the events file past lockWait.
var errHeld = errors.New("another hook holds the events file")

// afterList runs in Take between its first look at the offers and its
// lock (tests: a Settle there).
var afterList = func() {}

// Take gives the notices in dir that no hook took yet: the hook's output
// for event (nil when there is none), their taken event appended to the
// events file first, under its flock. The offers are listed again under
// the lock: those Settle withdrew meanwhile are not given.
func Take(dir, events, event string) ([]byte, error) {
	if len(List(dir)) == 0 {
		return nil, nil
	}
	afterList()
	release, err := lock(events)
	if err != nil {
		return nil, err
	}
	defer release()
	ns := List(dir)
	if len(ns) == 0 {
		return nil, nil
	}
	from := ns[0].From
	for _, n := range ns {
		from = min(from, n.From)
	}
	taken := Taken(events, from)
	var texts, names []string
	for _, n := range ns {
		if !taken[n.Name()] {
			texts, names = append(texts, n.Text), append(names, n.Name())
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	data, _ := json.Marshal(takenData{Notices: names})
	line, _ := json.Marshal(struct {
		Time  time.Time       `json:"time"`
		Event string          `json:"event"`
		Data  json.RawMessage `json:"data"`
	}{clock.Now().UTC(), TakenEvent, data})
	f, err := untrusted.OpenFile(events, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(append(line, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("record the notices taken: %w", err)
	}
	var out hookOutput
	out.HookSpecificOutput.HookEventName = event
	out.HookSpecificOutput.AdditionalContext = "runner: while you work, " + strconv.Itoa(len(texts)) +
		" notice(s) for you (no reply is needed unless it matters to your task):\n\n" + strings.Join(texts, "\n\n")
	return json.Marshal(out)
}

// Settle reads which of dir's notices a hook took (message id → the merge
// count it took) and removes every notice file: what was not taken stays
// in the queue for the next turn someone starts. It holds the events
// file's flock (as Take does), so no hook takes a notice between the read
// and the removal; when a hook holds it past lockWait, Settle goes on
// without (such a hook may give a notice that comes again with the next
// turn).
func Settle(dir, events string) map[string]int {
	if len(List(dir)) == 0 {
		return nil
	}
	if release, err := lock(events); err == nil {
		defer release()
	}
	ns := List(dir)
	if len(ns) == 0 {
		return nil
	}
	from := ns[0].From
	for _, n := range ns {
		from = min(from, n.From)
	}
	taken := Taken(events, from)
	out := map[string]int{}
	for _, n := range ns {
		if taken[n.Name()] {
			out[n.Message] = n.Merged
		}
		_ = os.Remove(filepath.Join(dir, n.Name()))
	}
	return out
}
