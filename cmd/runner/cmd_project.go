package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/runner-cli/runner/runner"
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
	cmd := &cobra.Command{
		Use:   "add NAME DIR",
		Short: "Register DIR as project NAME",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			s, err := a.openStore()
			if err != nil {
				return err
			}
			p, err := runner.AddProject(cmd.Context(), s, argv[0], argv[1])
			if err != nil {
				return err
			}
			if asJSON {
				return a.printJSON(p)
			}
			fmt.Fprintf(a.out, "added project %s: %s\n", p.Name, p.Dir)
			return nil
		},
	}
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
				fmt.Fprintf(w, "%s\t%s\n", p.Name, p.Dir)
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
