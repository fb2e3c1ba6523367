//go:build gendocs

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newGenDocsCmd is the hidden `runner gen-docs DIR`: a markdown page per
// command (docs/cli in the repository, kept current by
// scripts/gen-docs.sh and checked by TestCLIDocsCurrent).
func (a *app) newGenDocsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "gen-docs DIR",
		Short: "Write a markdown page per command into DIR (docs/cli)",
		Long: `gen-docs writes runner.md and a page for each command (runner_dispatch.md, …;
hidden commands get none) into DIR, from the commands themselves: their usage,
description, examples and flags. The repository keeps them in docs/cli
(scripts/gen-docs.sh); a test fails when they are stale.`,
		Hidden: true,
		Args:   args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return genDocs(cmd.Root(), argv[0])
		},
	}
}

// genDocs writes the markdown pages of root's tree into dir, without the
// generator's dated footer (the pages depend on the code alone).
func genDocs(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("gen-docs: %w", err)
	}
	root.DisableAutoGenTag = true
	describeRoot(root)
	// What cobra adds as a command runs, added here too, so the pages are
	// the same from a test as from the binary.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	link := func(name string) string { return strings.ToLower(filepath.Base(name)) }
	if err := doc.GenMarkdownTreeCustom(root, dir, func(string) string { return "" }, link); err != nil {
		return fmt.Errorf("gen-docs: write the pages into %s: %w", dir, err)
	}
	return nil
}
