// The caller's side of the door: what runner inside a sandbox sends
// through it (Forward), and what runner outside lets a confined request
// give (ConfinedFlags, ReadConfinedFile).

package door

import (
	"context"
	"io"
	"path/filepath"
	"slices"

	"github.com/runner-cli/runner/internal/untrusted"
	"github.com/runner-cli/runner/runner/fault"
)

// Forward sends args (and standard input in, when an argument reads it:
// ReadsStdin) to runner outside the sandbox through the door at path,
// from the caller's folder cwd, and gives back the answer. Standard input
// over half of MaxMessage, or one that cannot be read, is a usage error
// (fault.ErrUsage) and nothing is sent.
func Forward(ctx context.Context, path string, args []string, in io.Reader, cwd string) (Response, error) {
	req := Request{Args: args, Cwd: cwd}
	if ReadsStdin(args) {
		b, err := io.ReadAll(io.LimitReader(in, MaxMessage/2+1))
		if err != nil {
			return Response{}, fault.Usagef("read standard input: %v", err)
		}
		if len(b) > MaxMessage/2 {
			return Response{}, fault.Usagef("standard input over %d bytes: too much for runner's door", MaxMessage/2)
		}
		req.Stdin = b
	}
	return Call(ctx, path, req)
}

// ReadsStdin reports whether an argument reads standard input: "-", or
// -f/--file -.
func ReadsStdin(args []string) bool {
	for i, a := range args {
		if a == "--" {
			return slices.Contains(args[i+1:], "-")
		}
		if a == "-" || a == "--file=-" || a == "-f=-" || a == "-f-" {
			return true
		}
	}
	return false
}

// ConfinedFlags gives the flags each command the door carries takes from
// a confined caller (a request that came through a sandboxed task's door,
// EnvConfined), by their long names (ok false: cmd is not listed): runner
// refuses any other flag that was given, after its command line was
// parsed with the command's real flag set (so --socket=x, -fX and the like
// are seen as what they are). Nothing here selects runner's own
// resources: no --socket (the tmux server), no --host, no --notify (a
// command runner would run), no --source (who asked), no group (--agents,
// --tries, --check …). A flag added to a command later stays closed to a
// sandboxed task until it is listed here.
func ConfinedFlags(cmd string) (flags []string, ok bool) {
	for _, c := range confined {
		if c.cmd == cmd {
			return c.flags, true
		}
	}
	return nil, false
}

// ConfinedCommands are the commands ConfinedFlags lists.
func ConfinedCommands() []string {
	names := make([]string, len(confined))
	for i, c := range confined {
		names[i] = c.cmd
	}
	return names
}

// confined is ConfinedFlags' table: an array of literals the compiler lays
// out in the binary's data (a map would be built in the package's init, in
// every runner process).
var confined = [...]struct {
	cmd   string
	flags []string
}{
	{"msg", []string{"file", "json", "type"}},
	{"inbox", []string{"json"}},
	{"status", []string{"json"}},
	{"ps", []string{"all", "json", "project"}},
	{"tree", []string{"json"}},
	{"wait", []string{"all", "any", "input", "json", "print-answer", "project", "timeout"}},
	{"ask", []string{"file", "json", "parallel", "timeout"}},
	{"version", []string{"json"}},
	{"dispatch", []string{"after", "agent", "agent-arg", "approve-rule", "awareness", "budget-tokens", "budget-usd",
		"commit", "commit-all", "commit-branch", "detach", "exclusive", "file", "from", "idle", "json",
		"limit-wait", "max-turns", "model", "no-hook", "on-limit", "overlap-messages", "permissions",
		"print-answer", "ready-timeout", "require-snapshot", "sandbox", "sandbox-home", "size", "timeout",
		"wait-input", "wait-lock", "worktree", "yes-trust"}},
}

// ConfinedFlag reports whether a confined caller may give flag name to
// the door command cmd ("help" always: it only prints).
func ConfinedFlag(cmd, name string) bool {
	flags, _ := ConfinedFlags(cmd)
	return name == "help" || slices.Contains(flags, name)
}

// MaxConfinedFile bounds a --file a confined caller names: the door's own
// bound on standard input.
const MaxConfinedFile = MaxMessage / 2

// ReadConfinedFile reads a --file given through a sandboxed task's door:
// runner reads it outside the sandbox, so only a file inside the task's
// own folder dir (the request's EnvConfinedDir) is read, by the untrusted
// rules (a regular file, no link anywhere on its path, never blocking,
// bounded by MaxConfinedFile): runner's state, config and every file the
// sandbox hides stay hidden. A relative file is taken from cwd, the
// caller's folder. Every refusal is a usage error (fault.ErrUsage).
func ReadConfinedFile(dir, cwd, file string) (string, error) {
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fault.Usagef("--file %s: a sandboxed task gives its text as an argument or with --file - (standard input)", file)
	}
	name := file
	if !filepath.IsAbs(name) && cwd != "" {
		name = filepath.Join(cwd, name)
	}
	b, err := untrusted.ReadBeneath(dir, name, MaxConfinedFile)
	if err != nil {
		return "", fault.Usagef("--file: a sandboxed task's file must be a regular file inside its folder %s (or --file - for standard input): %v", dir, err)
	}
	return string(b), nil
}
