// Package snapshots is what `runner snapshot` says of gitsnap's snapshots:
// an age read from --older-than (ParseAge), what to do about an error a
// user can fix (Hint), and each subcommand's text (WriteTaken, WriteList,
// WriteShow, WriteDiff, WriteRestored, WritePruned). It runs nothing:
// cmd/runner calls gitsnap and hands the answers here.
package snapshots
