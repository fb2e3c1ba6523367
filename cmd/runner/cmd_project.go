package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/runner-cli/runner/runner/hosts"
	"github.com/runner-cli/runner/runner/projects"

	"github.com/spf13/cobra"
)

func (a *app) newProjectCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Register the directories agents work in",
		Long: `A project is a name for a directory. Tasks are dispatched to a project by name.
Names use a-z, 0-9, '.', '_' and '-' (at most 64, starting with a letter or digit).`,
		Example: `  runner project add web ~/src/web
  runner project list
  runner project rm web`,
		Args: args(cobra.NoArgs),
	}
	cmd.AddCommand(a.newProjectAddCmd(), a.newProjectListCmd(), a.newProjectRmCmd())
	return cmd
}

func (a *app) newProjectAddCmd() *cobra.Command {
	var opts projectAddOptions

	cmd := &cobra.Command{
		Use:   "add NAME DIR | add NAME host:HOST:/DIR | add NAME --host HOST /DIR",
		Short: "Register DIR as project NAME (a directory here, or on a host)",
		Long: `Register DIR as project NAME. DIR is a directory of this machine, or one on a
registered host (see 'runner host'): host:HOST:/abs/dir, or --host HOST /abs/dir.
A directory on a host is checked there over ssh; tasks dispatched to the project
then run there.`,
		Example: `  runner project add web ~/src/web`,
		Args:    args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runProjectAdd(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.host, "host", "", "the registered host the directory is on")
	a.jsonFlag(cmd, &opts.asJSON, "print the project as JSON")
	return cmd
}

// projectAddOptions are the arguments and flags of `runner project add`.
type projectAddOptions struct {
	args   []string
	asJSON bool
	host   string
}

func (a *app) runProjectAdd(ctx context.Context, opts projectAddOptions) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	dir, err := projects.OnHost(opts.args[1], opts.host)
	if err != nil {
		return err
	}
	p, err := projects.Add(ctx, s, opts.args[0], dir)
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(p)
	}
	fmt.Fprintf(a.out, "added project %s: %s\n", p.Name, hosts.Location(p))
	return nil
}

func (a *app) newProjectListCmd() *cobra.Command {
	var opts projectListOptions
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the registered projects",
		Example: `  runner project list
  runner project list --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runProjectList(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// projectListOptions are the arguments and flags of `runner project list`.
type projectListOptions struct {
	asJSON bool
}

func (a *app) runProjectList(ctx context.Context, opts projectListOptions) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	ps, err := projects.List(ctx, s)
	if err != nil {
		return err
	}
	if opts.asJSON {
		return a.printJSON(ps)
	}
	if len(ps) == 0 {
		fmt.Fprintln(a.out, "no projects (add one with 'runner project add NAME DIR')")
		return nil
	}
	w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
	for _, p := range ps {
		fmt.Fprintf(w, "%s\t%s\n", p.Name, hosts.Location(p))
	}
	return w.Flush()
}

func (a *app) newProjectRmCmd() *cobra.Command {
	var opts projectRmOptions
	cmd := &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Unregister a project (its directory is not touched)",
		Example: `  runner project rm web`,
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.args = argv
			return a.runProjectRm(cmd.Context(), opts)
		},
	}
	return cmd
}

// projectRmOptions are the arguments and flags of `runner project rm`.
type projectRmOptions struct {
	args []string
}

func (a *app) runProjectRm(ctx context.Context, opts projectRmOptions) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	if err := projects.Remove(ctx, s, opts.args[0]); err != nil {
		return err
	}
	fmt.Fprintf(a.out, "removed project %s\n", opts.args[0])
	return nil
}
