package main

import "syscall"

// ioctlGetTermios reads a terminal's attributes; it fails on anything else.
const ioctlGetTermios = syscall.TCGETS
