package hostcmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/hosts"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/state"
)

// cmds are the commands of `runner host` over the factory they run on,
// and what they ask of the hosts themselves over ssh: list's probes (the
// runner environment's pool) and check's questions (hosts.Check); a test
// gives fakes.
type cmds struct {
	f      *cmdkit.Factory
	probes func(env *runner.Env) hosts.Prober
	check  func(ctx context.Context, s *state.Store, h *state.Host, agents []string) (hosts.Report, error)
}

// NewCmd builds `runner host` and its commands (add, list, rm, check,
// drain, undrain) over f.
func NewCmd(f *cmdkit.Factory) *cobra.Command {
	return newCmd(&cmds{f: f, probes: func(env *runner.Env) hosts.Prober { return env.Hosts }, check: hosts.Check})
}

func newCmd(hc *cmds) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Register the machines runner reaches over ssh",
		Long: `A host is a machine runner reaches with your own ssh (your ~/.ssh/config,
agent, keys and known hosts apply): nothing of runner's runs there but tmux, git
and the agent CLIs (and, optionally, a runner binary for the sim agent and
turn-end hooks). One connection per host is shared by all of runner's commands
(OpenSSH ControlMaster, its socket under the state directory).

Hosts make a pool: each takes at most --max-agents agents (default ` + "8" + `), and
'runner dispatch --host any' (or --host label:L, or the config's pool) places a task
on the host with the most free slots, then the lowest load per core, then the
most free memory (read in one round trip, cached for a few seconds). When every
host is full the task waits queued, its reason saying so, and starts when a slot
frees. 'runner host drain NAME' stops placing there.

Names use a-z, 0-9, '.', '_' and '-' (at most 64, starting with a letter or digit).`,
		Example: `  runner host add build me@build.example.com
  runner host check build
  runner dispatch /srv/api --host build "fix the flaky test"
  runner dispatch /srv/api --host any --detach "fix the flaky test"`,
		Args: cmdkit.Args(cobra.NoArgs),
	}
	cmd.AddCommand(hc.newAddCmd(), hc.newListCmd(), hc.newRmCmd(), hc.newCheckCmd(),
		hc.newDrainCmd(true), hc.newDrainCmd(false))
	return cmd
}

// hostAddOptions are the arguments and flags of `runner host add`.
type hostAddOptions struct {
	name, destination string
	sshArgs           []string
	runner            string
	socket, dir       string
	maxAgents         int
	labels            []string
	asJSON            bool
}

func (hc *cmds) newAddCmd() *cobra.Command {
	var opts hostAddOptions
	cmd := &cobra.Command{
		Use:   "add NAME DESTINATION [--ssh-arg ARG]... [--runner PATH] [--socket S] [--dir D] [--max-agents N] [--label L]...",
		Short: "Register a host: DESTINATION is what ssh takes (user@machine, an alias of ~/.ssh/config)",
		Long: `Register a host. DESTINATION is what ssh takes: user@machine, machine, or an alias
of your ~/.ssh/config. --ssh-arg passes one argument to ssh before it (repeat it:
--ssh-arg -p --ssh-arg 2222). --runner names the absolute path of a runner
binary on the host (the sim agent runs as 'PATH agent-sim' there). --socket names
the tmux server there (a -L name or a -S path; default runner's private server,
tmux -L runner); --dir the absolute directory where runner keeps its tasks' pane
transcripts there (default ~/` + state.RemoteDirDefault + `). --max-agents is how many
agents a pool places there at once (default ` + "8" + `: what sshd's default MaxSessions
carries); --label puts the host in a pool (dispatch --host label:L; repeat it).
Nothing is contacted: 'runner host check NAME' does that.`,
		Example: `  runner host add build me@build.example.com
  runner host add gpu gpu-box --ssh-arg -p --ssh-arg 2222 --runner /usr/local/bin/runner
  runner host add b1 me@build1 --max-agents 4 --label build`,
		Args: cmdkit.Args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.name, opts.destination = argv[0], argv[1]
			return hc.runHostAdd(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.sshArgs, "ssh-arg", nil, "an argument for ssh, before the destination (repeatable)")
	cmd.Flags().StringVar(&opts.runner, "runner", "", "absolute path of a runner binary on the host")
	cmd.Flags().StringVar(&opts.socket, "socket", "", "the tmux server on the host: a -L name or a -S path (default: runner's private server)")
	cmd.Flags().StringVar(&opts.dir, "dir", "", "absolute directory on the host for runner's task files (default ~/"+state.RemoteDirDefault+")")
	cmd.Flags().IntVar(&opts.maxAgents, "max-agents", 0, "how many agents a pool places there at once (default 8)")
	cmd.Flags().StringArrayVar(&opts.labels, "label", nil, "a label of the host, for dispatch --host label:L (repeatable)")
	hc.f.JSONFlag(cmd, &opts.asJSON, "print the host as JSON")
	return cmd
}

func (hc *cmds) runHostAdd(ctx context.Context, opts hostAddOptions) error {
	s, err := hc.f.Store()
	if err != nil {
		return err
	}
	h, err := hosts.Add(ctx, s, state.Host{Name: opts.name, Destination: opts.destination, SSHArgs: opts.sshArgs,
		Runner: opts.runner, Socket: opts.socket, Dir: opts.dir, MaxAgents: opts.maxAgents, Labels: opts.labels})
	if err != nil {
		return err
	}
	if opts.asJSON {
		return hc.f.PrintJSON(h)
	}
	fmt.Fprintf(hc.f.Out, "added host %s: %s (check it with 'runner host check %s')\n", h.Name, hosts.SSHLine(&h), h.Name)
	return nil
}

func (hc *cmds) newListCmd() *cobra.Command {
	var opts hostListOptions
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the registered hosts",
		Example: `  runner host list
  runner host list --json`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return hc.runHostList(cmd.Context(), opts)
		},
	}
	hc.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// hostListOptions are the arguments and flags of `runner host list`.
type hostListOptions struct {
	asJSON bool
}

func (hc *cmds) runHostList(ctx context.Context, opts hostListOptions) error {
	env, _, err := hc.f.Env(false)
	if err != nil {
		return err
	}
	rows, err := hosts.Table(ctx, env.Store, hc.probes(env))
	if err != nil {
		return err
	}
	if opts.asJSON {
		return hc.f.PrintJSON(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(hc.f.Out, "no hosts (add one with 'runner host add NAME user@machine')")
		return nil
	}
	return hosts.WriteTable(hc.f.Out, rows)
}

func (hc *cmds) newDrainCmd(drain bool) *cobra.Command {
	use, short, example := "drain NAME", "Stop placing tasks on a host (its running tasks go on)", "  runner host drain b1"
	if !drain {
		use, short, example = "undrain NAME", "Place tasks on a drained host again", "  runner host undrain b1"
	}
	return &cobra.Command{
		Use: use, Short: short, Example: example,
		Long: short + `: a drained host takes no task from a pool (dispatch --host any or
label:L); its tasks go on, and --host NAME still runs there.`,
		Args: cmdkit.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := hc.f.Store()
			if err != nil {
				return err
			}
			h, err := hosts.SetDrained(cmd.Context(), s, argv[0], drain)
			if err != nil {
				return err
			}
			if drain {
				fmt.Fprintf(hc.f.Out, "host %s drained: no new task is placed there ('runner host undrain %s' places again)\n", h.Name, h.Name)
			} else {
				fmt.Fprintf(hc.f.Out, "host %s takes tasks again\n", h.Name)
			}
			return nil
		},
	}
}

func (hc *cmds) newRmCmd() *cobra.Command {
	var opts hostRmOptions
	cmd := &cobra.Command{
		Use:     "rm NAME",
		Short:   "Unregister a host (nothing on it is touched)",
		Example: `  runner host rm build`,
		Args:    cmdkit.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return hc.runHostRm(cmd.Context(), opts)
		},
	}
	return cmd
}

// hostRmOptions are the arguments and flags of `runner host rm`.
type hostRmOptions struct {
	args []string
}

func (hc *cmds) runHostRm(ctx context.Context, opts hostRmOptions) error {
	s, err := hc.f.Store()
	if err != nil {
		return err
	}
	h, err := hosts.Remove(ctx, s, opts.args[0])
	if err != nil {
		return err
	}
	fmt.Fprintf(hc.f.Out, "removed host %s (%s)\n", h.Name, h.Destination)
	return nil
}

func (hc *cmds) newCheckCmd() *cobra.Command {
	var opts hostCheckOptions
	cmd := &cobra.Command{
		Use:   "check NAME [--json]",
		Short: "Contact a host: ssh, tmux, git, the agent CLIs and runner there, with fixes",
		Long: `check reaches the host with ssh (never prompting: keys come from your agent or
config) and reports the connection's times, the tmux and git versions there,
which agent CLIs of your profiles are installed, and the runner binary named with
--runner, with a fix for each problem.

Exit status: 0 when the host can run tasks (ssh, tmux and git work), 1 when it
cannot (unreachable, or tmux or git missing), 2 for an unknown host.`,
		Example: `  runner host check build
  runner host check build --json`,
		Args: cmdkit.Args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return hc.runHostCheck(cmd.Context(), opts)
		},
	}
	hc.f.JSONFlag(cmd, &opts.asJSON)
	return cmd
}

// hostCheckOptions are the arguments and flags of `runner host check`.
type hostCheckOptions struct {
	args   []string
	asJSON bool
}

func (hc *cmds) runHostCheck(ctx context.Context, opts hostCheckOptions) error {
	env, _, err := hc.f.Env(false)
	if err != nil {
		return err
	}
	h, err := hosts.Get(ctx, env.Store, opts.args[0])
	if err != nil {
		return err
	}
	commands := make([][]string, 0, len(env.Profiles))
	for _, p := range env.Profiles {
		commands = append(commands, p.Command)
	}
	agents := hosts.AgentCommands(commands)
	rep, cerr := hc.check(ctx, env.Store, h, agents)
	if cerr != nil && !errors.Is(cerr, hosts.ErrUnreachable) {
		return cerr
	}
	if opts.asJSON {
		if err := hc.f.PrintJSON(rep); err != nil {
			return err
		}
	} else {
		hosts.WriteReport(hc.f.Out, &rep)
	}
	switch {
	case cerr != nil:
		return cerr
	case rep.Tmux == "" || rep.Git == "":
		return fmt.Errorf("host %s cannot run tasks: tmux or git is missing there (see the problems above)", h.Name)
	}
	return nil
}
