package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClineKiloScreens: what the real screens of Cline CLI 3.0.65 and Kilo
// CLI 7.7.7 (testdata/screens-real, issue 54) tell beside their state:
// Cline's first-start notices are left with Escape and its home screen
// is behind them; its approval dialog and Kilo's permission dialog give
// the question an --approve-rule is matched against; Cline's refused tool
// ("Error: This tool call was rejected") is no failed turn, its API error
// is; the session ids of their exit screens.
func TestClineKiloScreens(t *testing.T) {
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(realScreens, name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	profiles := Builtins()
	cline, err := FindProfile(profiles, "cline")
	if err != nil {
		t.Fatal(err)
	}
	kilo, err := FindProfile(profiles, "kilo")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cline-3.0.65__unknown__clinepass", "cline-3.0.65__unknown__desktop-promo"} {
		if d := Detect(cline, read(name)); d.Field != "leave" || strings.Join(d.LeaveKeys, " ") != "Escape" {
			t.Errorf("%s: got %s (field %s, keys %q), want a view left with Escape", name, d.State, d.Field, d.LeaveKeys)
		}
	}
	for _, c := range []struct {
		p         *Profile
		name, has string
	}{
		{cline, "cline-3.0.65__needs_input__approve-editor", "hello.txt"},
		{cline, "cline-3.0.65__needs_input__approve-shell", "echo hi"},
		{kilo, "kilo-7.7.7__needs_input__permission", "Edit hello.txt"},
	} {
		d := Detect(c.p, read(c.name))
		if d.State != StateNeedsInput || !strings.Contains(d.Question, c.has) {
			t.Errorf("%s: got %s, question %q; want needs_input naming %q", c.name, d.State, d.Question, c.has)
		}
	}
	// Cline's turn is open from its echo until an answer: the screen after
	// a turn with its answer line taken out (as it is between the echo and
	// the first spinner, and between a tool's result and the answer) is
	// busy; with the answer, ready.
	after := read("cline-3.0.65__ready__after-approve")
	for _, c := range []struct{ drop, want string }{
		{" * I wrote hello.txt for you. Done.", "busy"},
		{"", "ready"},
	} {
		screen := after
		if c.drop != "" {
			screen = strings.Replace(screen, c.drop, "", 1)
		}
		if d := Detect(cline, screen); string(d.State) != c.want {
			t.Errorf("without %q: got %s (field %s, line %q), want %s", c.drop, d.State, d.Field, d.Line, c.want)
		}
	}
	echoOnly := strings.Replace(read("cline-3.0.65__ready__after-turn"),
		" * I am answering slowly one word at a time so that the busy screen can be seen for a while MOCK-SLOW-DONE", "", 1)
	if d := Detect(cline, echoOnly); d.State != StateBusy || d.Field != "turn_open" {
		t.Errorf("the echoed prompt alone: got %s (field %s, line %q), want busy by turn_open", d.State, d.Field, d.Line)
	}
	if d := Detect(cline, read("cline-3.0.65__ready__denied")); d.State != StateReady {
		t.Errorf("a refused tool call reads %s (field %s, line %q), want ready", d.State, d.Field, d.Line)
	}
	if d := Detect(cline, read("cline-3.0.65__error__api-down")); d.State != StateError || !strings.Contains(d.Line, "Cannot connect to API") {
		t.Errorf("the API down reads %s (line %q), want error", d.State, d.Line)
	}
	for _, c := range []struct {
		p          *Profile
		name, want string
	}{
		{cline, "cline-3.0.65__exited__ctrl-c", "1796179610907_7yebw"},
		{kilo, "kilo-7.7.7__exited__ctrl-d", "ses_dcb4e3b79ffey3yayodCRgT66V"},
	} {
		if got := c.p.FindSession(read(c.name)); got != c.want {
			t.Errorf("%s: session id %q, want %q", c.name, got, c.want)
		}
	}
}
