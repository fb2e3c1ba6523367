// Command runner drives CLI coding agents inside tmux panes.
//
// All the work happens in Main so tests (and testscript) can call it
// without building the binary.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
