package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/runner-cli/runner/internal/atomicfile"
)

// HostProbesDir is the folder, in the state directory, of what the last
// probe of each host found (its load, memory and whether it answered): a
// cache shared by every runner process, so a pool's placement asks a host
// once in a few seconds, not once per task. A file of its own per host,
// outside the index: a probe never takes the state lock, and a watcher of
// the state directory is not woken by one.
const HostProbesDir = "hosts-probe"

// HostProbe is what one round trip to a host found.
type HostProbe struct {
	Host string    `json:"host"`
	At   time.Time `json:"at"`
	// OK says the host answered; Error is ssh's (or the probe's) words
	// when it did not.
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// DownSince is when the host was first found not answering, in a run
	// of failed probes (zero while it answers).
	DownSince time.Time `json:"down_since,omitempty"`
	// Load1 is the 1-minute load average, Cores the processors online,
	// MemAvailKB and MemTotalKB the memory (kB) there.
	Load1      float64 `json:"load1"`
	Cores      int     `json:"cores"`
	MemAvailKB int64   `json:"mem_avail_kb"`
	MemTotalKB int64   `json:"mem_total_kb"`
}

// LoadPerCore is the host's 1-minute load per processor (0 when unknown).
func (p *HostProbe) LoadPerCore() float64 {
	if p == nil || p.Cores <= 0 {
		return 0
	}
	return p.Load1 / float64(p.Cores)
}

// HostProbe returns the last probe of host name, nil when there is none
// (or it cannot be read: it is a cache).
func (s *Store) HostProbe(name string) *HostProbe {
	if !ValidName(name) {
		return nil
	}
	b, err := readFile(filepath.Join(s.dir, HostProbesDir, name+".json"))
	if err != nil {
		return nil
	}
	var p HostProbe
	if json.Unmarshal(b, &p) != nil || p.Host != name {
		return nil
	}
	return &p
}

// SaveHostProbe records p as its host's last probe (atomically; not
// durably: it is a cache).
func (s *Store) SaveHostProbe(p HostProbe) error {
	if !ValidName(p.Host) {
		return fmt.Errorf("host probe: invalid host name %q", p.Host)
	}
	dir := filepath.Join(s.dir, HostProbesDir)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("host probe: %w", err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, p.Host+".json"), b, 0o600, false)
}
