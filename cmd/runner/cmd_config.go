package main

import (
	"context"
	"fmt"

	"github.com/runner-cli/runner/runner/config"

	"github.com/runner-cli/runner/runner/fault"

	"github.com/spf13/cobra"
)

// loadConfig reads the config file (RUNNER_CONFIG, XDG_CONFIG_HOME or
// ~/.config/runner/config.json); a bad file is an error that exits 2.
func (a *app) loadConfig() (*config.Config, string, error) {
	return config.Load(a.getenv)
}

func (a *app) newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the config file's path and the effective configuration",
		Long: `runner reads one JSON file: $RUNNER_CONFIG if set, else
$XDG_CONFIG_HOME/runner/config.json, else ~/.config/runner/config.json.
Every key is optional; a missing file means the built-in defaults. Unknown
keys and bad values are errors that name the file and the key (exit 2).`,
		Example: `  runner config path
  runner config show`,
	}
	cmd.AddCommand(a.newConfigPathCmd(), a.newConfigShowCmd())
	return cmd
}

func (a *app) newConfigPathCmd() *cobra.Command {
	var opts configPathOptions
	cmd := &cobra.Command{
		Use:   "path",
		Short: "Print the config file's path (--json: also whether it exists and why this path)",
		Example: `  runner config path
  runner config path --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runConfigPath(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// configPathOptions are the arguments and flags of `runner config path`.
type configPathOptions struct {
	asJSON bool
}

func (a *app) runConfigPath(ctx context.Context, opts configPathOptions) error {
	info, err := config.Locate(a.getenv)
	switch {
	case info.Path == "":
		return fault.Usagef("config path: none of RUNNER_CONFIG, XDG_CONFIG_HOME, HOME is set (set RUNNER_CONFIG to a file)")
	case !opts.asJSON:
		fmt.Fprintln(a.out, info.Path)
		return nil
	case err != nil:
		return err
	}
	return a.printJSON(info)
}

func (a *app) newConfigShowCmd() *cobra.Command {
	var opts configShowOptions
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration (built-in defaults overlaid with the file) as JSON",
		Long: `Print the effective configuration: the built-in defaults overlaid with the
config file, with the merged model aliases. Without --json a first line says
which file was read.`,
		Example: `  runner config show
  runner config show --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runConfigShow(cmd.Context(), opts)
		},
	}
	a.jsonFlag(cmd, &opts.asJSON)
	return cmd
}

// configShowOptions are the arguments and flags of `runner config show`.
type configShowOptions struct {
	asJSON bool
}

func (a *app) runConfigShow(ctx context.Context, opts configShowOptions) error {
	cfg, path, err := a.loadConfig()
	if err != nil {
		return err
	}
	if !opts.asJSON {
		fmt.Fprintln(a.out, config.ShowHeader(path))
	}
	return a.printJSON(cfg)
}
