//go:build gendocs

package main

import "github.com/spf13/cobra"

// docCommands are the hidden generators of the manual (gen-man, gen-docs),
// built only with -tags gendocs (scripts/release.sh, scripts/gen-docs.sh):
// their markdown and roff libraries stay out of the runner users run, so
// no command, the turn-end hook least of all, pays for their start-up.
func (a *app) docCommands() []*cobra.Command {
	return []*cobra.Command{a.newGenManCmd(), a.newGenDocsCmd()}
}
