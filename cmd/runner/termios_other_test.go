//go:build !linux

package main

import "golang.org/x/sys/unix"

// ioctlReadTermios reads a terminal's settings (BSD, macOS).
const ioctlReadTermios = unix.TIOCGETA
