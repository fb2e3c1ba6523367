//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
)

// SelfMounts is Linux's (a bwrap sandbox checks its binds from inside):
// elsewhere there is no mount table to read.
func SelfMounts() ([]byte, error) {
	return nil, fmt.Errorf("sandbox: no mount table to check on %s", runtime.GOOS)
}

var kernelMounts = []string{"/dev"}
