package notice

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// offered makes a task's hook directory and events file with one notice
// offered.
func offered(t *testing.T) (dir, events string) {
	t.Helper()
	base := t.TempDir()
	dir, events = Dir(filepath.Join(base, "hook")), filepath.Join(base, "events.jsonl")
	if err := os.WriteFile(events, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Offer(dir, Notice{Message: "m_one", Merged: 1, Text: "Message m_one from runner: shared.txt"}); err != nil {
		t.Fatal(err)
	}
	return dir, events
}

// TestTakeOnce: hooks that run at once (parallel tool calls) give a
// notice once, and Settle then reports it taken and withdraws it.
func TestTakeOnce(t *testing.T) {
	dir, events := offered(t)
	var wg sync.WaitGroup
	outs := make([][]byte, 8)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := Take(dir, events, "PostToolUse")
			if err != nil {
				t.Error(err)
			}
			outs[i] = out
		}()
	}
	wg.Wait()
	given := 0
	for _, out := range outs {
		if out == nil {
			continue
		}
		given++
		var o hookOutput
		if err := json.Unmarshal(out, &o); err != nil || !strings.Contains(o.HookSpecificOutput.AdditionalContext, "m_one") || o.HookSpecificOutput.HookEventName != "PostToolUse" {
			t.Errorf("output %s (%v): want the notice as PostToolUse's additionalContext", out, err)
		}
	}
	if given != 1 {
		t.Errorf("the notice was given %d times, want once", given)
	}
	if taken := Settle(dir, events); taken["m_one"] != 1 || len(taken) != 1 {
		t.Errorf("settled %v, want m_one taken at merge 1", taken)
	}
	if ns := List(dir); len(ns) != 0 {
		t.Errorf("offers left after Settle: %v", ns)
	}
}

// TestTakeAfterSettle: a hook that saw the offer just before the turn's
// end settled it gives nothing (the notice stays pending for the next
// turn), so it is never given twice.
func TestTakeAfterSettle(t *testing.T) {
	dir, events := offered(t)
	var taken map[string]int
	afterList = func() { taken = Settle(dir, events) }
	defer func() { afterList = func() {} }()
	out, err := Take(dir, events, "PostToolUse")
	if err != nil || out != nil {
		t.Errorf("Take after Settle: %s, %v; want nothing (the offer was withdrawn)", out, err)
	}
	if len(taken) != 0 {
		t.Errorf("settled %v; want none taken (pending for the next turn)", taken)
	}
	if got := Taken(events, 0); len(got) != 0 {
		t.Errorf("taken events %v after the offer was withdrawn", got)
	}
}
