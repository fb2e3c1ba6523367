package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/exit"
	"github.com/spf13/cobra"
)

func (a *app) newProjectCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "project",
		Short: "Register the directories agents work in",
		Long: `A project is a name for a directory. Tasks are dispatched to a project by name.
Names use a-z, 0-9, '.', '_' and '-' (at most 64, starting with a letter or digit).`,
		Args: args(cobra.NoArgs),
	}
	cmd.AddCommand(a.newProjectAddCmd(), a.newProjectListCmd(), a.newProjectRmCmd())
	return cmd
}

func (a *app) newProjectAddCmd() *cobra.Command {
	var asJSON bool
	var host string
	cmd := &cobra.Command{
		Use:   "add NAME DIR | add NAME host:HOST:/DIR | add NAME --host HOST /DIR",
		Short: "Register DIR as project NAME (a directory here, or on a host)",
		Long: `Register DIR as project NAME. DIR is a directory of this machine, or one on a
registered host (see 'runner host'): host:HOST:/abs/dir, or --host HOST /abs/dir.
A directory on a host is checked there over ssh; tasks dispatched to the project
then run there.`,
		Args: args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			dir := argv[1]
			if host != "" {
				if _, _, ok := runner.HostPath(dir); ok {
					return exit.Usagef("project add: give the host once: --host %s with a path, or host:HOST:/dir", host)
				}
				dir = "host:" + host + ":" + dir
			}
			p, err := runner.AddProject(cmd.Context(), s, argv[0], dir)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(p)
			}
			fmt.Fprintf(a.out, "added project %s: %s\n", p.Name, runner.ProjectLocation(p))
			return nil
		},
	}
	cmd.Flags().StringVar(&host, "host", "", "the registered host the directory is on")
	a.jsonFlag(cmd, &asJSON, "print the project as JSON")
	return cmd
}

func (a *app) newProjectListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the registered projects",
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			ps, err := runner.ListProjects(cmd.Context(), s)
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(ps)
			}
			if len(ps) == 0 {
				fmt.Fprintln(a.out, "no projects (add one with 'runner project add NAME DIR')")
				return nil
			}
			w := tabwriter.NewWriter(a.out, 0, 0, 2, ' ', 0)
			for _, p := range ps {
				fmt.Fprintf(w, "%s\t%s\n", p.Name, runner.ProjectLocation(p))
			}
			return w.Flush()
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newProjectRmCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Unregister a project (its directory is not touched)",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			if err := runner.RemoveProject(cmd.Context(), s, argv[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.out, "removed project %s\n", argv[0])
			return nil
		},
	}
	return cmd
}
