// Package watch is `runner watch` (Run): a live, full-screen view of every
// task, grouped by project, with the selected task's pane, diff or log
// beside it, and one key per action.
//
//   - rows.go: the list as data (pure: a state in, rows out), table-tested.
//   - model.go, keys.go: the bubbletea model: state, keys, inputs,
//     selection, bell; preview.go: the selected pane, captured on demand.
//   - view.go: rendering with lipgloss at any size (stacked below ~150
//     columns, side by side above), NO_COLOR-safe (glyphs carry status).
//   - feed.go: what wakes the view: the state directory through fsnotify
//     (Store.Watch) and the selected pane's transcript file; nothing polls
//     tmux per task.
//   - actions.go: every action runs the runner binary itself (the same code
//     path, errors and exit codes as the CLI), attach through tmuxctl.
//
// It takes a Deps in its Options (the store, the tmux server, the panes
// of tasks here and on hosts through Panes, an interface it declares, and
// runner's Reconcile as a function), built by cmd/runner from its Env; it
// imports nothing of package runner.
package watch
