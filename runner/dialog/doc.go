// Package dialog reads an agent's dialog off its screen with the agent's
// profile: the line that asks, the numbered options of its menu, and a
// digest that names what was on the screen, so that an answer given later
// (runner answer, the HTTP API, MCP) can be bound to the very dialog it
// answers. It is pure: a screen in, a Dialog out; pressing keys is the
// caller's (runner/answer).
//
// The digest is the first 16 hex digits of a SHA-256 over the dialog's
// text (the screen from the dialog's top down, as profile.Detect gives it,
// with its menu lines, the profile's volatile lines and runs of blanks
// left out) and its options (key and label, cursor marker stripped): it
// stays the same when the menu's cursor moves or the screen is drawn
// again the same, and changes when the question, what it is about (a
// command, a file) or the options change.
package dialog
