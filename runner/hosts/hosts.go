// Package hosts is runner's side of other machines: the registered hosts
// (add, remove, list, check), and the connections to them — one ssh
// transport (OpenSSH, a shared ControlMaster connection, a session shell)
// and one tmux client per host — held in a Pool that the caller makes and
// passes in. Nothing of runner's runs on a host but tmux, git, the agent
// CLIs and, optionally, a runner binary.
package hosts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/internal/transport"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/sandbox"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// ErrUnreachable is wrapped when ssh cannot reach a host (exit 1).
var ErrUnreachable = errors.New("host unreachable")

// ValidateName returns a usage error unless name is a valid host
// name: the same rules as a project's.
func ValidateName(name string) error {
	if !state.ValidName(name) {
		return fault.Usagef("invalid host name %q: use 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter or digit (e.g. %q)",
			name, state.SuggestName(name))
	}
	return nil
}

// Add registers a host. The destination is what ssh takes (user@host,
// host, an alias of ~/.ssh/config); it may not start with '-' (ssh would
// read it as an option). Nothing is contacted: `runner host check` does.
func Add(ctx context.Context, s *state.Store, h state.Host) (state.Host, error) {
	if err := ValidateName(h.Name); err != nil {
		return h, err
	}
	if h.Name == PoolAny {
		return h, fault.Usagef("host name %q is taken by the pool of every host (--host any): choose another name", h.Name)
	}
	if h.MaxAgents < 0 {
		return h, fault.Usagef("host %q: --max-agents %d: give a positive number (default %d)", h.Name, h.MaxAgents, state.DefaultMaxAgents)
	}
	for _, l := range h.Labels {
		if err := ValidateLabel(l); err != nil {
			return h, err
		}
	}
	switch {
	case h.Destination == "":
		return h, fault.Usagef("host %q: no destination given (use 'runner host add %s user@machine', or an alias of your ~/.ssh/config)", h.Name, h.Name)
	case strings.HasPrefix(h.Destination, "-"):
		return h, fault.Usagef("host %q: destination %q starts with '-' (give ssh options with --ssh-arg)", h.Name, h.Destination)
	case strings.ContainsAny(h.Destination, " \t\n\x00"):
		return h, fault.Usagef("host %q: destination %q has white space or control characters", h.Name, h.Destination)
	}
	if h.Runner != "" && !strings.HasPrefix(h.Runner, "/") {
		return h, fault.Usagef("host %q: --runner %q: give the absolute path of the runner binary on the host", h.Name, h.Runner)
	}
	if h.Dir != "" && !strings.HasPrefix(h.Dir, "/") {
		return h, fault.Usagef("host %q: --dir %q: give an absolute path on the host (the default is ~/%s)", h.Name, h.Dir, state.RemoteDirDefault)
	}
	if strings.ContainsAny(h.Socket+h.Dir+h.Runner, "\n\x00") {
		return h, fault.Usagef("host %q: --socket, --dir and --runner may not hold a newline", h.Name)
	}
	h.Added = clock.Now().UTC()
	err := s.UpdateHosts(ctx, func(hosts map[string]*state.Host) error {
		if old, ok := hosts[h.Name]; ok {
			return fault.Usagef("host %q already exists (%s); remove it first with 'runner host rm %s'", h.Name, old.Destination, h.Name)
		}
		hosts[h.Name] = &h
		return nil
	})
	return h, err
}

// Remove unregisters a host and ends its shared connection; an
// unknown one, or one that projects or active tasks are on, is a usage
// error.
func Remove(ctx context.Context, s *state.Store, name string) (state.Host, error) {
	var gone state.Host
	st, err := s.Read(ctx)
	if err != nil {
		return gone, err
	}
	var users []string
	for _, p := range st.ProjectList() {
		if p.Host == name {
			users = append(users, "project "+p.Name)
		}
	}
	for _, t := range st.TaskList() {
		if t.Tmux.Host == name && t.Status.IsActive() {
			users = append(users, "task "+t.ID)
		}
	}
	if len(users) > 0 {
		return gone, fault.Usagef("host %q is in use by %s: remove the projects ('runner project rm NAME') and end the tasks first", name, strings.Join(users, ", "))
	}
	err = s.UpdateHosts(ctx, func(hosts map[string]*state.Host) error {
		h, ok := hosts[name]
		if !ok {
			return unknownHost(name, hosts)
		}
		gone = *h
		delete(hosts, name)
		return nil
	})
	if err == nil {
		// Its shared connection goes with it (else it lingers for
		// ControlPersist).
		_ = Transport(s, &gone).Exit()
	}
	return gone, err
}

// Get returns a registered host; an unknown one is a usage error.
func Get(ctx context.Context, s *state.Store, name string) (*state.Host, error) {
	hosts, err := s.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	h, ok := hosts[name]
	if !ok {
		return nil, unknownHost(name, hosts)
	}
	return h, nil
}

// List returns the hosts sorted by name.
func List(ctx context.Context, s *state.Store) ([]*state.Host, error) {
	hosts, err := s.Hosts(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*state.Host, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func unknownHost(name string, hosts map[string]*state.Host) error {
	names := make([]string, 0, len(hosts))
	for n := range hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	known := "none yet"
	if len(names) > 0 {
		known = strings.Join(names, ", ")
	}
	return fault.Usagef("unknown host %q (known: %s; add it with 'runner host add %s DESTINATION')", name, known, name)
}

// Transport is the ssh transport of h, sharing one connection per
// host through a control socket under the state directory.
func Transport(s *state.Store, h *state.Host) *transport.SSH {
	return &transport.SSH{Destination: h.Destination, Args: h.SSHArgs, ControlDir: filepath.Join(s.Dir(), "ssh")}
}

// Report is what `runner host check` found on a host.
type Report struct {
	Host        string `json:"host"`
	Destination string `json:"destination"`
	Reachable   bool   `json:"reachable"`
	// Error is ssh's own error when the host is unreachable.
	Error string `json:"error,omitempty"`
	// Connect is the first command's time (the handshake, or the shared
	// connection's round trip when one was open), RoundTrip a command's
	// in a session of its own over the shared connection (the login
	// shell starts each time), and Session a command's in the session
	// shell runner keeps (0 when the host cannot keep one).
	Connect   time.Duration `json:"connect_ns"`
	RoundTrip time.Duration `json:"round_trip_ns"`
	Session   time.Duration `json:"session_round_trip_ns"`
	Tmux      string        `json:"tmux,omitempty"` // `tmux -V`, "" when missing
	Git       string        `json:"git,omitempty"`  // `git --version`
	// Sandbox is bwrap's path there when it makes a sandbox (dispatch
	// --sandbox), "" when it does not.
	Sandbox string `json:"sandbox,omitempty"`
	// Agents maps each profile's command to its path there ("" when not
	// installed).
	Agents map[string]string `json:"agents"`
	// Runner is the host's runner binary's version ("" for none).
	Runner string `json:"runner,omitempty"`
	// ControlPath is the socket of the shared connection (ssh -O check|exit
	// -o ControlPath=… reaches it).
	ControlPath string `json:"control_path"`
	// Problems say what does not work and how to fix it.
	Problems []string `json:"problems,omitempty"`
}

// hostCheckTimeout bounds each command of a check.
const hostCheckTimeout = 30 * time.Second

// Check contacts h and reports ssh reachability, the versions of
// tmux and git there, which agent CLIs of the profiles (their commands)
// are installed, and the runner binary, with a fix for each problem. An
// unreachable host is a report with Reachable false and an error wrapping
// ErrUnreachable.
func Check(ctx context.Context, s *state.Store, h *state.Host, agents []string) (Report, error) {
	rep := Report{Host: h.Name, Destination: h.Destination, Agents: map[string]string{}}
	tr := Transport(s, h)
	rep.ControlPath = tr.ControlPath()
	if err := tr.Prepare(); err != nil {
		return rep, fmt.Errorf("host %s: control socket directory: %w", h.Name, err)
	}
	return check(ctx, sshChecker{tr}, h, agents, rep)
}

// Checker is what Check asks a host through: Output runs a command in a
// session of its own (a new login shell each time), Run in the session
// shell runner keeps, which Close ends. sshChecker is the real one.
type Checker interface {
	Output(ctx context.Context, argv ...string) (string, error)
	Shell
	Close()
}

// sshChecker is a Checker over the ssh transport.
type sshChecker struct{ *transport.SSH }

// Output runs argv in a session of its own and returns its stdout.
func (c sshChecker) Output(ctx context.Context, argv ...string) (string, error) {
	return output(c.Command(ctx, argv...))
}

// check is Check's questions to the host through c, told in rep.
func check(ctx context.Context, c Checker, h *state.Host, agents []string, rep Report) (Report, error) {
	run := func(argv ...string) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, hostCheckTimeout)
		defer cancel()
		return c.Output(ctx, argv...)
	}
	start := clock.Now()
	if _, err := run("true"); err != nil {
		rep.Error = err.Error()
		rep.Problems = append(rep.Problems, fmt.Sprintf("ssh %s fails: check that 'ssh %s true' works from your shell without a prompt (a key in your ssh agent or config: ssh-copy-id %s)",
			h.Destination, strings.Join(append(slices.Clone(h.SSHArgs), h.Destination), " "), h.Destination))
		return rep, fmt.Errorf("host %s (%s): %w: %v", h.Name, h.Destination, ErrUnreachable, err)
	}
	rep.Reachable, rep.Connect = true, clock.Since(start)
	start = clock.Now()
	if _, err := run("true"); err == nil {
		rep.RoundTrip = clock.Since(start)
	}
	if _, err := run("sh", "-c", "base64 -w0 </dev/null && printf ok | base64 -d >/dev/null"); err != nil {
		rep.Problems = append(rep.Problems, "no GNU base64 there (coreutils): runner cannot keep a shell there, and each command opens a session of its own, with a login shell")
	} else {
		sctx, cancel := context.WithTimeout(ctx, hostCheckTimeout)
		_, _, _, _ = c.Run(sctx, nil, "true") // starts the session shell
		start = clock.Now()
		if _, _, code, err := c.Run(sctx, nil, "true"); err == nil && code == 0 {
			rep.Session = clock.Since(start)
		}
		cancel()
		c.Close()
	}
	if out, err := run(tmuxctl.VersionArgv()...); err == nil {
		rep.Tmux = strings.TrimSpace(out)
	} else {
		rep.Problems = append(rep.Problems, "tmux is not installed there (or not in the PATH of a non-interactive ssh session): install it (apt-get install tmux)")
	}
	if out, err := run(gitsnap.VersionArgv()...); err == nil {
		rep.Git = strings.TrimSpace(out)
	} else {
		rep.Problems = append(rep.Problems, "git is not installed there: install it (apt-get install git); snapshots and worktrees need it")
	}
	if out, err := run("sh", "-c", sandboxCheckScript); err == nil && strings.HasPrefix(out, "/") {
		rep.Sandbox = out
	} else {
		rep.Problems = append(rep.Problems, "bwrap does not make a sandbox there: dispatch --sandbox to this host is refused ("+sandbox.InstallHint+")")
	}
	// One round trip for every agent: the names go as arguments (data),
	// the script is fixed.
	if len(agents) > 0 {
		out, _ := run(append([]string{"sh", "-c", `for c do p=$(command -v "$c") && printf '%s %s\n' "$c" "$p"; done; exit 0`, "sh"}, agents...)...)
		rep.Agents = agentPaths(out, agents)
	}
	if h.Runner == "" {
		rep.Problems = append(rep.Problems, fmt.Sprintf("no runner binary named for the host: remote tasks would end their turns by screen detection alone and the sim agent is not available (copy runner there and 'runner host rm %s' then 'runner host add %s %s --runner /path/to/runner')", h.Name, h.Name, h.Destination))
	} else if out, err := run(h.Runner, "version"); err == nil {
		rep.Runner = strings.TrimSpace(out)
	} else {
		rep.Problems = append(rep.Problems, fmt.Sprintf("runner %s does not run there (%v): copy a runner binary for that machine to it", h.Runner, err))
	}
	return rep, nil
}

// agentPaths reads the host's answer to where each of agents is installed
// (lines "NAME PATH"): each agent asked for maps to its absolute path
// there, or "" when it is not installed. A line for a name not asked for,
// or a path that is not absolute (an alias, a function), is ignored.
func agentPaths(out string, agents []string) map[string]string {
	paths := make(map[string]string, len(agents))
	for _, a := range agents {
		paths[a] = ""
	}
	for _, line := range strings.Split(out, "\n") {
		name, p, ok := strings.Cut(line, " ")
		if _, asked := paths[name]; ok && asked && strings.HasPrefix(p, "/") && !strings.ContainsAny(p, "\x00\r") {
			paths[name] = p
		}
	}
	return paths
}

// output runs cmd and returns its stdout; a failure carries the last
// lines of its stderr.
func output(cmd *exec.Cmd) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(textutil.LastLines(strings.TrimSpace(stderr.String()), 3)); msg != "" {
			return stdout.String(), fmt.Errorf("%w: %s", err, msg)
		}
		return stdout.String(), err
	}
	return stdout.String(), nil
}
