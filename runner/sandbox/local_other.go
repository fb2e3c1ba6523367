//go:build !linux && !darwin

package sandbox

import (
	"context"
	"fmt"
	"runtime"
)

// LocalProgram: this system has no sandbox runner knows.
const LocalProgram = ""

// LocalInstallHint says what to do instead.
const LocalInstallHint = "runner sandboxes agents on Linux (bubblewrap) and macOS (Seatbelt) only: dispatch without --sandbox, or to a Linux host (--host)"

// CheckLocal fails: no sandbox here.
func CheckLocal(context.Context) (string, error) {
	return "", fmt.Errorf("%w: no sandbox on %s (%s)", ErrUnavailable, runtime.GOOS, LocalInstallHint)
}

// WrapLocal fails: no sandbox here.
func WrapLocal(string, Spec, string, []string) ([]string, error) {
	return nil, fmt.Errorf("%w: no sandbox on %s (%s)", ErrUnavailable, runtime.GOOS, LocalInstallHint)
}
