// Package hostcmd is `runner host` (add, list, rm, check, drain,
// undrain): the machines runner reaches over ssh, registered in the state
// and checked. It parses the flags, calls runner/hosts over the state
// store and the runner environment the cmdkit.Factory opens, and prints
// its words or --json; an unknown host, bad input or a host that cannot
// run tasks is an error of a kind package main maps to an exit code.
package hostcmd
