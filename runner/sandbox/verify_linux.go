package sandbox

import "os"

// SelfMounts returns this process's mount table (/proc/self/mountinfo),
// for VerifyInside.
func SelfMounts() ([]byte, error) { return os.ReadFile("/proc/self/mountinfo") }

// kernelMounts are where a sandbox mounts the kernel's own file systems
// (its /dev and /proc): no place of the machine's.
var kernelMounts = []string{"/dev", "/proc"}
