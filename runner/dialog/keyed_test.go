package dialog

import (
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// TestReadKeyed reads dialogs without a numbered menu through a profile's
// key_options: the sim's confirm, and Cline 3.0.65's tool approval as
// captured ("[y] Approve   [n] Deny") with a profile that reads it. The
// digest changes with what is asked; a profile without key_options gives
// such a dialog no options.
func TestReadKeyed(t *testing.T) {
	sim := prof(t, "sim")
	screen := "> confirm Deploy now?\nDeploy now?\n  [y] Yes   [n] No\n"
	d, ok := Read(sim, screen)
	if !ok || !d.Keyed || len(d.Options) != 2 || d.Options[0] != (Option{"y", "Yes"}) || d.Options[1] != (Option{"n", "No"}) {
		t.Fatalf("the sim's confirm: %+v, %v", d, ok)
	}
	if d.Question != "Deploy now?" {
		t.Errorf("question %q", d.Question)
	}
	other, _ := Read(sim, "> confirm Delete it all?\nDelete it all?\n  [y] Yes   [n] No\n")
	if other.Digest == d.Digest {
		t.Errorf("two confirms asking different things share the digest %s", d.Digest)
	}
	if ask, _ := Read(sim, simAsk(0)); ask.Keyed {
		t.Errorf("a numbered menu read as keyed: %+v", ask)
	}

	p := &profile.Profile{Name: "clinelike", Command: []string{"cline"}, BottomLines: 14,
		NeedsInput: []string{`^ Approve tool call\?`, `\[y\] Approve\s+\[n\] Deny`}}
	if err := p.Compile(); err != nil {
		t.Fatal(err)
	}
	cline := load(t, realScreens, "cline-3.0.65__needs_input__approve-shell.txt")
	if d, ok := Read(p, cline); !ok || len(d.Options) != 0 || d.Keyed {
		t.Fatalf("without key_options: %+v, %v; want a dialog with no options", d, ok)
	}
	p.KeyOptions = `\[(?P<key>[yn])\] (?P<label>\w+)`
	if err := p.Compile(); err != nil {
		t.Fatal(err)
	}
	d, ok = Read(p, cline)
	if !ok || !d.Keyed || len(d.Options) != 2 || d.Options[0] != (Option{"y", "Approve"}) || d.Options[1] != (Option{"n", "Deny"}) {
		t.Fatalf("Cline's approval: %+v, %v", d, ok)
	}

	// A pattern without a key group is refused; one whose key is more
	// than one letter or digit reads no option.
	bad := &profile.Profile{Name: "bad", Command: []string{"x"}, KeyOptions: `\[(\w)\]`}
	if err := bad.Compile(); err == nil {
		t.Error("key_options without (?P<key>…) compiled")
	}
	long := &profile.Profile{Name: "long", Command: []string{"x"}, KeyOptions: `<(?P<key>[^>]+)>`}
	if err := long.Compile(); err != nil {
		t.Fatal(err)
	}
	if got := profile.KeyOptions(long, []string{"press <Enter> or <y>"}); len(got) != 1 || got[0].Key != "y" {
		t.Errorf("keys read: %+v, want y alone", got)
	}
}
