//go:build gendocs

package main

import (
	"github.com/runner-cli/runner/cmd/runner/internal/extcmd"
	"github.com/spf13/cobra"
)

// docCommands are the hidden generators of the manual (gen-man, gen-docs),
// built only with -tags gendocs (scripts/release.sh, scripts/gen-docs.sh):
// their markdown and roff libraries stay out of the runner users run, so
// no command, the turn-end hook least of all, pays for their start-up.
func (a *app) docCommands() []*cobra.Command {
	return []*cobra.Command{a.newGenManCmd(), a.newGenDocsCmd()}
}

// extReal builds the command runner-ext runs for name, itself: the manual
// documents its flags and help (runner itself hands it to runner-ext).
var extReal = func(a *app, name string) *cobra.Command {
	return extcmd.New(a.factory(), readVersion().Version).Build(name)
}
