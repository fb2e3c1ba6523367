package profile

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestExplain: the rule that decided, its file and line, the lines it
// matched, and what the other rules saw, on small screens.
func TestExplain(t *testing.T) {
	sim, _ := BuiltinProfile("sim")
	claude, _ := BuiltinProfile("claude")
	codex, _ := BuiltinProfile("codex")
	for _, tc := range []struct {
		name    string
		p       *Profile
		screen  string
		state   State
		rule    string   // the deciding rule; "" for none
		matched []string // rules that matched a line (decided or not)
		notTry  []string // rules DetectPane never tried
	}{
		{"sim busy over an old prompt", sim, "> old\n│ > \n✻ Working… (esc to interrupt)\n", StateBusy, "busy[0]",
			[]string{"busy[0]", "ready[1]", "error_reset[0]"}, []string{"ready[0]", "ready[1]", "error_reset[0]"}},
		{"sim ready (a trailing space is trimmed)", sim, "> hi\nhello\n╭─\n│ > \n╰─\n", StateReady, "ready[1]",
			[]string{"ready[1]", "error_reset[0]"}, nil},
		{"sim question", sim, "ask\n❯ 1. Yes\n  2. No\n", StateNeedsInput, "needs_input[0]",
			[]string{"needs_input[0]", "needs_input[1]"}, []string{"needs_input[1]", "busy[0]"}},
		{"sim blank", sim, "\n\n", StateStarting, "", nil, []string{"error_reset[0]"}},
		{"claude trust dialog", claude, "Do you trust?\n❯ 1. Yes, I trust this folder\n  2. No, exit\n", StateNeedsInput, "trust[0].pattern",
			[]string{"trust[0].pattern", "needs_input[4]", "error_reset[0]"}, []string{"needs_input[0]"}},
		{"codex open turn", codex, "› fix the bug\n• thinking\n› Ask Codex\n  ? for shortcuts   model\n", StateBusy, "turn_open[0]",
			[]string{"ready[0]", "ready[1]", "turn_open[0]", "error_reset[0]"}, []string{"ready[1]", "error[0]"}},
		{"codex closed turn", codex, "› fix the bug\n─ Worked for 3s ─\n› Ask Codex\n  ? for shortcuts   model\n", StateReady, "ready[0]",
			[]string{"ready[0]", "ready[1]", "turn_closed[0]", "error_reset[0]"}, []string{"ready[1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := tc.p.Explain(tc.screen)
			if d := Detect(tc.p, tc.screen); !sameDetection(ex.Detection, d) {
				t.Fatalf("explanation's detection %+v, Detect's %+v", ex.Detection, d)
			}
			if ex.State != tc.state || ex.Rule != tc.rule {
				t.Fatalf("state %s rule %q, want %s %q", ex.State, ex.Rule, tc.state, tc.rule)
			}
			if tc.rule == "" {
				if ex.Decided != nil {
					t.Errorf("decided by %+v, want no rule", ex.Decided)
				}
			} else if ex.Decided == nil || ex.Decided.Rule != tc.rule || !ex.Decided.Decided || !ex.Decided.Tried ||
				ex.Decided.Origin.Line == 0 || ex.Decided.Origin.File != "agents/"+tc.p.Name+".toml" {
				t.Errorf("decided %+v", ex.Decided)
			}
			byRule := map[string]RuleMatch{}
			var matched []string
			for _, r := range ex.Rules {
				byRule[r.Rule] = r
				if len(r.Lines) > 0 {
					matched = append(matched, r.Rule)
				}
			}
			if !slices.Equal(matched, tc.matched) {
				t.Errorf("matched %q, want %q", matched, tc.matched)
			}
			for _, w := range tc.notTry {
				if r, ok := byRule[w]; !ok || r.Tried {
					t.Errorf("%s: %+v, want it listed and not tried", w, r)
				}
			}
		})
	}
}

func sameDetection(a, b Detection) bool {
	return a.State == b.State && a.Field == b.Field && a.Rule == b.Rule && a.Pattern == b.Pattern && a.Line == b.Line &&
		a.LineNo == b.LineNo && a.Question == b.Question && a.TrustChoose == b.TrustChoose && strings.Join(a.TrustKeys, " ") == strings.Join(b.TrustKeys, " ")
}

// TestExplainRealScreens: on every recorded screen, with its pane
// metadata, the explanation holds DetectPane's answer; a state decided by
// a pattern names that rule, its built-in line (which holds the pattern)
// and the screen line; and no rule that DetectPane tried before the one
// that decided matched (the explanation's "tried" is the detector's
// order).
func TestExplainRealScreens(t *testing.T) {
	profiles := Builtins()
	fixtures := loadReal(t)
	if _, err := os.Stat(sharedScreens); err == nil {
		fixtures = append(fixtures, loadShared(t)...)
	}
	n := 0
	for _, f := range fixtures {
		name := toolProfile[f.tool]
		if name == "" {
			name = f.tool
		}
		p, err := FindProfile(profiles, name)
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		n++
		ex := p.ExplainPane(string(raw), f.info)
		d := DetectPane(p, string(raw), f.info)
		where := filepath.Base(f.file)
		if !sameDetection(ex.Detection, d) {
			t.Errorf("%s: explanation %+v, detection %+v", where, ex.Detection, d)
			continue
		}
		if (d.Rule != "") != (ex.Decided != nil) {
			t.Errorf("%s: rule %q, decided %+v", where, d.Rule, ex.Decided)
			continue
		}
		decided := 0
		for _, r := range ex.Rules {
			if r.Decided {
				decided++
			}
			// limit_busy refines a busy match (as error does ready).
			refined := d.Field == "limit_busy" && r.Field == "busy"
			if r.Tried && !r.Decided && len(r.Lines) > 0 && stageOf(r.Field) <= stageOf("busy") && !refined {
				t.Errorf("%s (%s by %s): %s was tried before and matched %+v", where, d.State, d.Rule, r.Rule, r.Lines)
			}
		}
		if ex.Decided == nil {
			continue
		}
		if decided != 1 {
			t.Errorf("%s: %d rules decided", where, decided)
		}
		hasLine := false
		for _, l := range ex.Decided.Lines {
			hasLine = hasLine || l.N == d.LineNo
		}
		if !hasLine {
			t.Errorf("%s: decided by %s on line %d, but its lines are %+v", where, d.Rule, d.LineNo, ex.Decided.Lines)
		}
		data, _ := BuiltinFile(p.Name)
		fileLines := bytes.Split(data, []byte("\n"))
		if o := ex.Decided.Origin; o.Line < 1 || !bytes.Contains(fileLines[o.Line-1], []byte(d.Pattern)) {
			t.Errorf("%s: origin %+v of %s does not hold %q", where, o, d.Rule, d.Pattern)
		}
	}
	if n < 50 {
		t.Errorf("only %d screens explained", n)
	}
}
