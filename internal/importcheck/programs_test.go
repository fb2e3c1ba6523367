package importcheck

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProgramOwnerCatches: each way of running tmux outside its owner is
// found, and what only names it is not.
func TestProgramOwnerCatches(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"owner", "lib"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	owner := `package owner

func AttachArgv(target string) []string { return []string{"tmux", "attach", "-t", target} }
`
	// Each line marked "error" is one error; the others none.
	uses := `package lib

const prog = "tmux"

const script = ` + "`" + `while :; do
	p=$(tmux display -p '#{pid}') || sleep 1
done` + "`" + `

func f(ctx context.Context, tr Transport, target string) {
	exec.Command("tmux", "ls")                      // error
	exec.CommandContext(ctx, "/usr/bin/tmux")       // error
	exec.Command(prog, "ls")                        // error
	bin := prog
	syscall.Exec(bin, nil, nil)                     // error
	argv := owner.AttachArgv(target)
	exec.Command(argv[0], argv[1:]...)              // error
	tr.Run(ctx, nil, "tmux", "-V")                  // error
	tr.Command(ctx, "sh", "-c", script)             // error
	cmd := []string{"ssh", "-t", "host", "tmux"}    // error
	argv[0] = "tmux"                                // error
	exec.Command("sh", "-c", "tmux ls; exit 0")     // error
	subproc.Command(ctx, "tmux", "ls")               // error
	subproc.Group(ctx, prog)                        // error
	subproc.Interactive(argv[0], argv[1:]...)       // error
	exec.Command("sh", "-c", "echo tmux is gone")
	tr.Run(ctx, nil, owner.AttachArgv(target)...)
	exec.LookPath("tmux")
	fmt.Println("tmux is not installed: install tmux")
	_ = strings.HasPrefix(target, "tmux")
	_ = cmd
}
`
	for p, text := range map[string]string{"owner/a.go": owner, "lib/a.go": uses, "lib/a_test.go": uses} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeT{TB: t}
	ProgramOwner(f, dir, "tmux", "owner")
	if f.errors != 13 {
		t.Errorf("%d errors, want 13 (the lines marked in lib/a.go)", f.errors)
	}
}

// TestDocNames: each doc comment that starts with a name starts with its
// own (issue 55: 19 named identifiers gone or renamed).
func TestDocNames(t *testing.T) {
	if n := DocNames(t, "../.."); n < 100 {
		t.Fatalf("only %d files checked: not the module's root?", n)
	}
}

func TestDocNamesCatches(t *testing.T) {
	dir := t.TempDir()
	src := `package a

// ListProjects returns them (renamed: error).
func List() {}

// gcTasks is gone (error).
func gcHostTasks() {}

// Show shows it; a word, not code: no error.
func Display() {}

// The thing (no error).
type T struct {
	// screenFlag is set (error).
	noScreen bool
	// Port is the port (no error).
	Port int
}

// maxRuns bounds it (no error).
const maxRuns = 8
`
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &fakeT{TB: t}
	DocNames(f, dir)
	if f.errors != 3 {
		t.Errorf("%d errors, want 3", f.errors)
	}
}
