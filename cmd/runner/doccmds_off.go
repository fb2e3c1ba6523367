//go:build !gendocs

package main

import "github.com/spf13/cobra"

// docCommands: none in the runner users run (see doccmds_on.go).
func (a *app) docCommands() []*cobra.Command { return nil }

// extReal builds the command runner-ext runs for name, itself, in a
// binary that links runner-ext's commands (the tests set it; the docs'
// build, doccmds_on.go): nil in the runner users run, which hands them to
// runner-ext (ext.go).
var extReal func(a *app, name string) *cobra.Command
