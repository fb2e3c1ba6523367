package agentsim

import "syscall"

const ioctlGetTermios = syscall.TCGETS
