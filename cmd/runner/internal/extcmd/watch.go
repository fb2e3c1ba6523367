package extcmd

import (
	"context"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/open"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/runner/tasks"
	"github.com/runner-cli/runner/runner/watch"
	"github.com/runner-cli/runner/state"
)

type watchOptions struct {
	project string
	all     bool
	recent  time.Duration
	popup   bool
	host    string
}

// NewWatchCmd is runner watch over f.
func (c *Cmds) NewWatchCmd() *cobra.Command {
	var opts watchOptions
	cmd := &cobra.Command{
		Use:   "watch [--project P] [--host H] [--all] [--popup]",
		Short: "A live full-screen view of every task, one key to act on it",
		Long: `watch shows every task live, grouped by project (children under their
parent), active ones first and finished ones of the last --recent greyed, with
the selected task's pane (or its diff, or its log) beside or under the list.
It wakes only when the state changes or the selected pane writes: nothing
polls tmux per task.

Keys: ↑/↓ or j/k select, enter attaches (inside runner's tmux server: switch
to the pane; otherwise tmux attach here, back to watch when you detach), s
send a follow-up, m message, c cancel, K kill, d diff, l logs, p pane, e a group's
candidates (dispatch --agents: one row until expanded), n new
dispatch, / filter, r reconcile now, ? help, q quit. Each action runs the same
runner command you would type; its error shows on the bottom line.

A task that starts asking a question rings the terminal bell once and is
marked ! until you select it. NO_COLOR is honoured (glyphs carry the status).

--popup opens the view in a tmux display-popup over the client you are in
and returns when the popup closes.

Exit status: 0 on q; 2 without a terminal or for an unknown project.`,
		Example: `  runner watch
  runner watch --project api --all
  runner watch --popup    # inside tmux: over the current window`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return c.runWatch(cmd.Context(), opts) },
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.project, "project", "", "only tasks of this project: a registered name or a directory (./a, /x/b)")
	fl.StringVar(&opts.host, "host", "", "only tasks on this host (local: this machine's); tasks of every host are listed by default")
	fl.BoolVar(&opts.all, "all", false, "list every retained finished task, not only those of the last --recent")
	fl.DurationVar(&opts.recent, "recent", watch.DefaultRecent, "how long finished tasks stay listed")
	fl.BoolVar(&opts.popup, "popup", false, "open the view in a tmux display-popup over the current tmux client")
	return cmd
}

func (c *Cmds) runWatch(ctx context.Context, opts watchOptions) error {
	if opts.popup {
		if c.f.Getenv("TMUX") == "" {
			return fault.Usagef("watch --popup: not inside tmux ($TMUX is not set); run 'runner watch' instead")
		}
		args := watch.PopupArgs(opts.project, opts.all, opts.host, opts.recent)
		return watch.Popup(ctx, c.f.Getenv, os.Environ(), self(), args)
	}
	env, _, err := c.f.Env(false)
	if err != nil {
		return err
	}
	f := watch.Filter{All: opts.all, Recent: opts.recent, Host: opts.host}
	if opts.project != "" {
		st, err := env.Store.Read(ctx)
		if err != nil {
			return err
		}
		if f.Project, err = projects.Select(st, opts.project); err != nil {
			return err
		}
	}
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return fault.Usagef("watch needs a terminal; for scripts use 'runner ps --json', 'runner wait' or 'runner status-line'")
	}
	return watch.Run(ctx, watch.Options{
		Deps: watchDeps(env), Exe: self(), Filter: f, Getenv: c.f.Getenv, Bell: os.Stdout,
		NoColor: c.f.Getenv("NO_COLOR") != "",
	})
}

// watchDeps is what package watch takes.
func watchDeps(env *runner.Env) watch.Deps {
	return watch.Deps{Store: env.Store, TC: env.TC, Reconcile: open.Core{Env: env}.Reconcile, Panes: watchPanes{env}}
}

// watchPanes are the panes of env's tasks, here or on their hosts, as the
// live view previews and attaches them.
type watchPanes struct{ env *runner.Env }

func (p watchPanes) Screen(ctx context.Context, t *state.Task) (watch.Screen, error) {
	return p.env.PaneClient(ctx, t)
}

func (p watchPanes) AttachArgv(ctx context.Context, ref string) ([]string, error) {
	env := p.env
	d := tasks.Deps{Store: env.Store, TC: env.TC, Reconcile: open.Core{Env: env}.Reconcile, HostConn: tasks.Hosts(env.Hosts.Conn), Say: env.Say, ExitOf: env.ExitOf}
	return tasks.AttachArgv(ctx, d, ref, false)
}
