// Package state is the only code that touches runner's state files: the
// shared state.json protected by an flock on state.lock, the append-only
// journal, and watching the state directory for changes.
package state
