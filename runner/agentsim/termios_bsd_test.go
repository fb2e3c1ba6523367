//go:build darwin || freebsd || netbsd || openbsd

package agentsim

import "syscall"

const ioctlGetTermios = syscall.TIOCGETA
