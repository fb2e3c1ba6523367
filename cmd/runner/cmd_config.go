package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/runner-cli/runner/runner/exit"

	"github.com/runner-cli/runner/runner"
	"github.com/spf13/cobra"
)

// loadConfig reads the config file (RUNNER_CONFIG, XDG_CONFIG_HOME or
// ~/.config/runner/config.json); a bad file is an error that exits 2.
func (a *app) loadConfig() (*runner.Config, string, error) {
	return runner.LoadConfig(a.getenv)
}

func (a *app) newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the config file's path and the effective configuration",
		Long: `runner reads one JSON file: $RUNNER_CONFIG if set, else
$XDG_CONFIG_HOME/runner/config.json, else ~/.config/runner/config.json.
Every key is optional; a missing file means the built-in defaults. Unknown
keys and bad values are errors that name the file and the key (exit 2).`,
	}
	cmd.AddCommand(a.newConfigPathCmd(), a.newConfigShowCmd())
	return cmd
}

type configPathOutput struct {
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	// Source is the variable the path comes from: RUNNER_CONFIG,
	// XDG_CONFIG_HOME or HOME.
	Source string `json:"source"`
}

func (a *app) newConfigPathCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "path",
		Short: "Print the config file's path (--json: also whether it exists and why this path)",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, source := runner.ConfigPath(a.getenv)
			if path == "" {
				return exit.Usagef("config path: none of RUNNER_CONFIG, XDG_CONFIG_HOME, HOME is set (set RUNNER_CONFIG to a file)")
			}
			if !asJSON {
				fmt.Fprintln(a.out, path)
				return nil
			}
			_, err := os.Stat(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("config path: %w", err)
			}
			return a.printJSON(configPathOutput{Path: path, Exists: err == nil, Source: source})
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}

func (a *app) newConfigShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Print the effective configuration (built-in defaults overlaid with the file) as JSON",
		Long: `Print the effective configuration: the built-in defaults overlaid with the
config file, with the merged model aliases. Without --json a first line says
which file was read.`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, path, err := a.loadConfig()
			if err != nil {
				return err
			}
			if !asJSON {
				switch _, statErr := os.Stat(path); {
				case path == "":
					fmt.Fprintln(a.out, "# no config file (none of RUNNER_CONFIG, XDG_CONFIG_HOME, HOME is set): built-in defaults")
				case statErr != nil:
					fmt.Fprintf(a.out, "# %s does not exist: built-in defaults\n", path)
				default:
					fmt.Fprintf(a.out, "# %s over the built-in defaults\n", path)
				}
			}
			return a.printJSON(cfg)
		},
	}
	a.jsonFlag(cmd, &asJSON)
	return cmd
}
