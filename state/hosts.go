package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/runner-cli/runner/internal/atomicfile"
)

// HostsFile is the file, in the state directory, of the hosts runner
// reaches over OpenSSH (`runner host add`). It is its own small file, not
// part of the index, so state.json's format does not change with it; it
// is written under the state lock, atomically and durably like the index.
const HostsFile = "hosts.json"

// hostsVersion is the format of HostsFile.
const hostsVersion = 1

// Host is a machine runner reaches with the system's ssh.
type Host struct {
	Name string `json:"name"`
	// Destination is what ssh takes: user@host, host, or an alias of the
	// user's ~/.ssh/config.
	Destination string `json:"destination"`
	// SSHArgs are given to ssh before the destination (-p 2222, -F FILE,
	// -i KEY, …).
	SSHArgs []string `json:"ssh_args,omitempty"`
	// Runner is the path of a runner binary on the host, for the sim
	// agent and turn-end hooks there ("" for none).
	Runner string `json:"runner,omitempty"`
	// Socket is the tmux server there that runs the agents: a -L name or
	// a -S path ("" for runner's private server, tmux -L runner).
	Socket string `json:"socket,omitempty"`
	// Dir is where runner keeps its tasks' files there (each pane's
	// transcript and the pane-died file); "" for RemoteDirDefault under
	// the home directory there.
	Dir   string    `json:"dir,omitempty"`
	Added time.Time `json:"added"`
	// MaxAgents is how many agents may run there at once (a pool's
	// capacity); 0 means DefaultMaxAgents.
	MaxAgents int `json:"max_agents,omitempty"`
	// Labels name the pools the host is in (dispatch --host label:L).
	Labels []string `json:"labels,omitempty"`
	// Drained hosts take no new task from a pool (runner host drain);
	// their running tasks go on, and --host NAME still reaches them.
	Drained bool `json:"drained,omitempty"`
}

// HostLocal is the --host filter that keeps this machine's tasks.
const HostLocal = "local"

// OnHost reports whether a task on host ("" for this machine), of pool
// ("" for none), passes a --host filter: "" passes all, HostLocal this
// machine's (not a task waiting for a pool), else that host's.
func OnHost(filter, host, pool string) bool {
	return filter == "" || filter == host || filter == HostLocal && host == "" && pool == ""
}

// DefaultMaxAgents is a host's capacity when it names none: what sshd's
// default MaxSessions (10) carries on one connection, each running task
// holding one session and each runner process one more.
const DefaultMaxAgents = 8

// Capacity is how many agents may run on h at once.
func (h *Host) Capacity() int {
	if h.MaxAgents > 0 {
		return h.MaxAgents
	}
	return DefaultMaxAgents
}

// RemoteDirDefault is where runner keeps its tasks' files on a host
// without Host.Dir, relative to the home directory there.
const RemoteDirDefault = ".local/state/runner-remote"

type hostsFile struct {
	Version int              `json:"version"`
	Hosts   map[string]*Host `json:"hosts"`
}

// Hosts returns the registered hosts by name (none: an empty map). A
// corrupt file is an error wrapping ErrCorrupt, a newer one wrapping
// ErrNewerVersion; neither is ever overwritten.
func (s *Store) Hosts(ctx context.Context) (map[string]*Host, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.readHosts()
}

func (s *Store) readHosts() (map[string]*Host, error) {
	path := s.path(HostsFile)
	b, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*Host{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var f hostsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w: %v (move it aside and add the hosts again with 'runner host add')", path, ErrCorrupt, err)
	}
	if f.Version > hostsVersion {
		return nil, fmt.Errorf("%s: version %d: %w (this runner reads version %d; upgrade runner)", path, f.Version, ErrNewerVersion, hostsVersion)
	}
	if f.Hosts == nil {
		f.Hosts = map[string]*Host{}
	}
	return f.Hosts, nil
}

// UpdateHosts changes the hosts under the state lock: fn gets them by
// name and may add, change or delete; if it returns an error nothing is
// written. The file is replaced atomically (temp file, fsync, rename,
// directory fsync).
func (s *Store) UpdateHosts(ctx context.Context, fn func(map[string]*Host) error) error {
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	hosts, err := s.readHosts()
	if err != nil {
		return err
	}
	if err := fn(hosts); err != nil {
		return err
	}
	b, err := json.MarshalIndent(hostsFile{Version: hostsVersion, Hosts: hosts}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode hosts: %w", err)
	}
	path := s.path(HostsFile)
	if err := atomicfile.Write(path, append(b, '\n'), 0o600, true); err != nil {
		return fmt.Errorf("write %s: %w (the hosts are unchanged)", path, err)
	}
	return nil
}
