// Package explain says why an agent profile reads a screen as it does:
// for `runner agents detect` and `runner agents explain`. It captures a
// live pane with what tmux says about it besides the text (Capture),
// finds the task a pane belongs to and the task's last hook event
// (Locate, TaskOfPane, LastHookEvent), and writes a detection or an
// explanation for people (WriteDetection, WriteExplanation).
//
// What it asks of tmux and the state comes through the small interfaces
// it declares (Panes, Tasks); cmd/runner passes the real ones.
package explain
