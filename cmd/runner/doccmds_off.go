//go:build !gendocs

package main

import "github.com/spf13/cobra"

// docCommands: none in the runner users run (see doccmds_on.go).
func (a *app) docCommands() []*cobra.Command { return nil }
