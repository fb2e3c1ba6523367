//go:build !linux && !darwin

package procinfo

func get(int) (Proc, bool)             { return Proc{}, false }
func all() ([]Proc, error)             { return nil, ErrUnsupported }
func environ(int) ([]string, error)    { return nil, ErrUnsupported }
func executable(int) (string, error)   { return "", ErrUnsupported }
func bootID() string                   { return "" }
func readable() bool                   { return false }
func loadAverage() (float64, bool)     { return 0, false }
func zombieExit(int) (int, bool, bool) { return 0, false, false }
func threads() []int                   { return nil }
