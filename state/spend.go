package state

import (
	"fmt"
	"strconv"
	"strings"
)

// Spend is what an agent's turns used, as the agent CLI itself recorded it
// (Claude Code's transcript, Codex's session file, Gemini CLI's and Qwen
// Code's chat files, OpenCode's and pi's messages, the sim's hook): never
// estimated from text. A turn whose CLI recorded nothing counts in Unknown,
// not as 0.
type Spend struct {
	// Input counts the input tokens not read from the provider's prompt
	// cache; Cached those read from it (and written to it, where the
	// provider bills writes apart: Anthropic's cache_creation); Output the
	// output tokens, reasoning included.
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Cached int64 `json:"cached"`
	// CostUSD is the cost the CLI reported, in US dollars, summed over
	// the Costed turns.
	CostUSD float64 `json:"cost_usd,omitempty"`
	// Turns counts the turns whose tokens are known; Costed those whose
	// cost is; Unknown the turns the CLI recorded no spend for.
	Turns   int `json:"turns"`
	Costed  int `json:"costed,omitempty"`
	Unknown int `json:"unknown,omitempty"`
}

// Tokens is the total of the known tokens: input, cached and output.
func (s Spend) Tokens() int64 { return s.Input + s.Cached + s.Output }

// Known reports whether any turn's tokens are known.
func (s Spend) Known() bool { return s.Turns > 0 }

// IsZero reports whether s counts no turn at all (known or not).
func (s Spend) IsZero() bool { return s == Spend{} }

// Add returns s plus o.
func (s Spend) Add(o Spend) Spend {
	s.Input += o.Input
	s.Output += o.Output
	s.Cached += o.Cached
	s.CostUSD += o.CostUSD
	s.Turns += o.Turns
	s.Costed += o.Costed
	s.Unknown += o.Unknown
	return s
}

// UnknownTurn is the spend of one turn whose CLI recorded none.
var UnknownTurn = Spend{Unknown: 1}

// String is s for people: "12.3k in · 456 out · 78.9k cached · $0.0123",
// "unknown" when no turn's spend is known, and "(+N turn(s) unknown)" when
// some are not. The cost is left out when no turn reported one, and marked
// "≥" when only some did.
func (s Spend) String() string {
	if !s.Known() {
		if s.Unknown > 0 {
			return "unknown"
		}
		return "none"
	}
	parts := []string{HumanCount(s.Input) + " in", HumanCount(s.Output) + " out"}
	if s.Cached > 0 {
		parts = append(parts, HumanCount(s.Cached)+" cached")
	}
	if s.Costed > 0 {
		c := "$" + strconv.FormatFloat(s.CostUSD, 'f', 4, 64)
		if s.Costed < s.Turns+s.Unknown {
			c = "≥" + c
		}
		parts = append(parts, c)
	}
	out := strings.Join(parts, " · ")
	if s.Unknown > 0 {
		out += fmt.Sprintf(" (+%d turn(s) unknown)", s.Unknown)
	}
	return out
}

// Short is s in a table cell: "12.3k", "?" when unknown, "-" for none; a
// "+" marks a total with unknown turns in it.
func (s Spend) Short() string {
	switch {
	case !s.Known() && s.Unknown > 0:
		return "?"
	case !s.Known():
		return "-"
	case s.Unknown > 0:
		return HumanCount(s.Tokens()) + "+"
	}
	return HumanCount(s.Tokens())
}

// HumanCount writes n as 950, 12.3k, 4.56M.
func HumanCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return trimZero(strconv.FormatFloat(float64(n)/1e3, 'f', 1, 64)) + "k"
	default:
		return trimZero(strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64)) + "M"
	}
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// SpendSoFar is what the task used so far: its turns' Spend with what its
// running turn used until now (Live, counted as a turn), as ps's TOKENS
// and watch's Σ show it.
func (t *Task) SpendSoFar() Spend {
	if t.Live.IsZero() {
		return t.Spend
	}
	live := t.Live
	live.Turns = 1
	if live.CostUSD != 0 {
		live.Costed = 1
	}
	return t.Spend.Add(live)
}

// TreeSpend sums the spend of task root and every task under it (its
// children, theirs, …) among tasks, with what their running turns used so
// far (Task.Live), and counts those tasks.
func TreeSpend(tasks []*Task, root string) (sum Spend, n int) {
	for _, t := range InTree(tasks, root) {
		sum, n = sum.Add(t.Spend).Add(t.Live), n+1
	}
	return sum, n
}

// InTree lists the tasks of tasks that are root or under it, by their
// parents among tasks (a loop of parents ends a walk). It reads only the
// index's fields (ID, Parent): on a state an index-only update loaded, the
// caller reads whole (State.Task) the tasks it needs more of.
func InTree(tasks []*Task, root string) []*Task {
	parent := make(map[string]string, len(tasks))
	for _, t := range tasks {
		parent[t.ID] = t.Parent
	}
	var out []*Task
	for _, t := range tasks {
		for x, hops := t.ID, 0; x != "" && hops <= len(tasks); x, hops = parent[x], hops+1 {
			if x == root {
				out = append(out, t)
				break
			}
		}
	}
	return out
}
