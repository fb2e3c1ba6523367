// Package agentscmd is `runner agents` (the profiles and their CLIs),
// with detect and explain (how a profile reads a captured screen, and
// why: the rule, its file and line), show (a profile as JSON, or its
// built-in agent file) and check (agent files validated as runner would
// load them). It parses the flags, loads the config and opens what it
// reads (a file, stdin, a live pane, a task's pane) through the
// cmdkit.Factory, calls runner/profile, runner/explain, runner/doctor and
// runner/config, and prints their words or --json; bad input and a bad
// agent file are errors of a kind package main maps to exit codes.
package agentscmd
