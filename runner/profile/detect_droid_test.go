package profile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDroidScreens: what the real Factory Droid screens (screens-real,
// droid__*) give beyond their state: its login screen (no Airgap Mode, no
// Factory login) is unusable, an answer comes off the screen without the
// chrome, and the folder dialog's accepting option is found by label.
func TestDroidScreens(t *testing.T) {
	p, err := BuiltinProfile("droid")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(realScreens, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, f := range []string{"droid__unknown__login.txt", "droid__unknown__login.ansi"} {
		if d, ok := p.UnusableScreen(read(f)); !ok || d.Rule != "unusable[0]" {
			t.Errorf("%s: unusable %v (%+v), want the login line", f, ok, d)
		}
	}
	for _, f := range []string{"droid__ready__first.txt", "droid__ready__1.txt", "droid__busy__1.txt"} {
		if _, ok := p.UnusableScreen(read(f)); ok {
			t.Errorf("%s reads unusable", f)
		}
	}
	answers := map[string]string{
		"droid__ready__1.txt":  "This is a slow answer streamed one word at a time so the busy screen can be captured well MOCK-SLOW-DONE",
		"droid__ready__2.txt":  "I wrote hello.txt for you. Done.",
		"droid__ready__2.ansi": "I wrote hello.txt for you. Done.",
	}
	for f, want := range answers {
		if got := ScreenAnswer(p, read(f)); got != want {
			t.Errorf("%s: answer %q, want %q", f, got, want)
		}
	}
	trust := read("droid__needs_input__trust.txt")
	d := Detect(p, trust)
	if d.Field != "trust" || d.TrustChoose == "" {
		t.Fatalf("trust dialog: %+v", d)
	}
	if moves, ok := MenuMove(p, trust, d.TrustChoose); !ok || moves != 0 {
		t.Errorf("trust dialog: %d moves (%v), want 0: the cursor is on '1. Trust this folder'", moves, ok)
	}
}

// TestAuggieScreens: Auggie's real start screens (its profile is
// unverified: no turn runs without Augment's service) say what a
// dispatch must do: without a login no prompt gets an answer; its
// onboarding pages and its indexing question are answered as trust
// dialogs (Enter; "4", skip indexing for this session).
func TestAuggieScreens(t *testing.T) {
	p, err := BuiltinProfile("auggie")
	if err != nil {
		t.Fatal(err)
	}
	if p.Unverified == "" {
		t.Errorf("auggie's profile is not marked unverified")
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(realScreens, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, f := range []string{"auggie__unknown__login.txt", "auggie__unknown__login2.txt"} {
		if _, ok := p.UnusableScreen(read(f)); !ok {
			t.Errorf("%s: not unusable", f)
		}
	}
	for f, keys := range map[string]string{"auggie__needs_input__welcome.txt": "Enter", "auggie__needs_input__tips.txt": "Enter", "auggie__needs_input__index.txt": "4"} {
		if d := Detect(p, read(f)); d.Field != "trust" || len(d.TrustKeys) != 1 || d.TrustKeys[0] != keys {
			t.Errorf("%s: %s by %s, keys %v; want a trust dialog answered with %s", f, d.State, d.Field, d.TrustKeys, keys)
		}
	}
}
