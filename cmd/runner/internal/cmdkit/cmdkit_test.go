package cmdkit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/spf13/cobra"
)

func TestPrintJSON(t *testing.T) {
	f, b := Fake("", nil)
	if err := f.PrintJSON(map[string]any{"text": "<a & b>", "n": 1}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"n\": 1,\n  \"text\": \"<a & b>\"\n}\n"
	if got := b.Out.String(); got != want {
		t.Errorf("PrintJSON: %q, want %q (indented, HTML kept, a newline)", got, want)
	}
}

// TestJSONFlag: --json is added with its help, recorded before the
// command runs, and a PreRunE the command had still runs.
func TestJSONFlag(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		usage []string
		json  bool
		help  string
	}{
		{[]string{"--json"}, nil, true, "print the result as JSON"},
		{nil, []string{"print it whole"}, false, "print it whole"},
	} {
		f, b := Fake("", nil)
		var v, prev, ran bool
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { ran = true; return nil }}
		cmd.PreRunE = func(*cobra.Command, []string) error { prev = true; return nil }
		f.JSONFlag(cmd, &v, tc.usage...)
		cmd.SetArgs(tc.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if v != tc.json || b.JSON != tc.json || !prev || !ran {
			t.Errorf("%v: flag %v, recorded %v, previous PreRunE ran %v, command ran %v", tc.args, v, b.JSON, prev, ran)
		}
		if got := cmd.Flags().Lookup("json").Usage; got != tc.help {
			t.Errorf("--json's help %q, want %q", got, tc.help)
		}
	}
}

func TestReadText(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "task.md")
	if err := os.WriteFile(file, []byte("from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stdin string
		argv        []string
		file        string
		want        string
		usage       bool
	}{
		{"argument", "", []string{"hello"}, "", "hello", false},
		{"stdin", "from stdin", nil, "-", "from stdin", false},
		{"file", "", nil, file, "from a file", false},
		{"both", "", []string{"x"}, file, "", true},
		{"none", "", nil, "", "", true},
		{"missing file", "", nil, filepath.Join(dir, "nope"), "", true},
	} {
		f, b := Fake(tc.stdin, nil)
		got, err := f.ReadText(tc.argv, tc.file)
		if got != tc.want || errors.Is(err, fault.ErrUsage) != tc.usage || (err != nil) != tc.usage {
			t.Errorf("%s: %q, %v; want %q (usage error: %v)", tc.name, got, err, tc.want, tc.usage)
		}
		if b.ErrOut.Len() != 0 {
			t.Errorf("%s: warned %q", tc.name, b.ErrOut.String())
		}
	}
}

// TestReadTextWarns: control characters a delivery removes are warned
// about on ErrOut; ReadTextRaw says nothing.
func TestReadTextWarns(t *testing.T) {
	f, b := Fake("", nil)
	text := "a\x1b[31mb\rc"
	if got, err := f.ReadText([]string{text}, ""); err != nil || got != text {
		t.Fatalf("ReadText: %q %v (the text is given back whole)", got, err)
	}
	if !strings.Contains(b.ErrOut.String(), "warning: the text holds") {
		t.Errorf("no warning: %q", b.ErrOut.String())
	}
	b.ErrOut.Reset()
	if _, err := f.ReadTextRaw([]string{text}, ""); err != nil || b.ErrOut.Len() != 0 {
		t.Errorf("ReadTextRaw: %v, warned %q", err, b.ErrOut.String())
	}
}

// TestReadTextConfined: through a sandboxed task's door, --file reads only
// inside the task's folder, and not at all without one.
func TestReadTextConfined(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "task.md"), []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := Fake("", map[string]string{door.EnvConfined: "t_1", door.EnvConfinedDir: dir})
	if got, err := f.ReadTextRaw(nil, filepath.Join(dir, "task.md")); err != nil || got != "inside" {
		t.Errorf("a file in the task's folder: %q %v", got, err)
	}
	if got, err := f.ReadTextRaw(nil, outside); err == nil {
		t.Errorf("a file outside the task's folder was read: %q", got)
	}
	f, _ = Fake("", map[string]string{door.EnvConfined: "t_1"})
	if _, err := f.ReadTextRaw(nil, filepath.Join(dir, "task.md")); !errors.Is(err, fault.ErrUsage) {
		t.Errorf("no task folder: %v, want a usage error", err)
	}
}

func TestWithTimeout(t *testing.T) {
	ctx, cancel := WithTimeout(t.Context(), 0)
	if _, ok := ctx.Deadline(); ok {
		t.Error("0 set a deadline")
	}
	cancel()
	if ctx.Err() == nil {
		t.Error("cancel did not end the context")
	}
	ctx, cancel = WithTimeout(t.Context(), time.Hour)
	defer cancel()
	if _, ok := ctx.Deadline(); !ok {
		t.Error("1h set no deadline")
	}
}

func TestErrors(t *testing.T) {
	cmd := &cobra.Command{Use: "x", Args: Args(cobra.NoArgs), RunE: func(*cobra.Command, []string) error { return nil }}
	cmd.SetArgs([]string{"extra"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	var fe *FlagError
	if err := cmd.Execute(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "unknown command") && !strings.Contains(err.Error(), "accepts 0 arg") {
		t.Errorf("Args: %v, want a FlagError with cobra's words", err)
	}
	if errors.Unwrap(fe) == nil {
		t.Error("FlagError unwraps to nothing")
	}
	se := &SilentError{Kind: fault.ErrUsage}
	if !errors.Is(se, fault.ErrUsage) || se.Error() != fault.ErrUsage.Error() {
		t.Errorf("SilentError: %v", se)
	}
	var pe *ProgramExit
	if err := error(&ProgramExit{Status: 3}); !errors.As(err, &pe) || err.Error() != "exit status 3" {
		t.Errorf("ProgramExit: %v", err)
	}
}

func TestIsTerminalAndFake(t *testing.T) {
	if IsTerminal(strings.NewReader("")) {
		t.Error("a string reader is a terminal")
	}
	f, b := Fake("in", map[string]string{"K": "v"})
	if f.Getenv("K") != "v" || f.Getenv("X") != "" || f.IsTerminal(f.In) {
		t.Error("Fake's environment or terminal")
	}
	f.JSONErrors(true)
	if !b.JSON {
		t.Error("Fake did not record --json")
	}
}

// TestBuffersRun: a family's test runs its command through the fake's
// buffers, emptied first, with its arguments, and gets its error.
func TestBuffersRun(t *testing.T) {
	f, b := Fake("", nil)
	b.Out.WriteString("left from before")
	var got []string
	cmd := &cobra.Command{Use: "x", RunE: func(c *cobra.Command, args []string) error {
		got = args
		f.Out.Write([]byte("said"))
		return errors.New("it failed")
	}}
	if err := b.Run(t.Context(), cmd, "a", "b"); err == nil || err.Error() != "it failed" {
		t.Errorf("Run: %v, want the command's error", err)
	}
	if strings.Join(got, " ") != "a b" || b.Out.String() != "said" {
		t.Errorf("args %q, out %q", got, b.Out.String())
	}
}
