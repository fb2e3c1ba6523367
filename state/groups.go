package state

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/atomicfile"
	"github.com/runner-cli/runner/internal/textutil"
)

// GroupsFile is the file, in the state directory, of the task groups
// (`runner dispatch --agents`/`--tries`): one task run by several agents,
// each candidate a task of its own. Like HostsFile it is its own small
// file, written under the state lock, atomically and durably.
const GroupsFile = "groups.json"

// groupsVersion is the format of GroupsFile.
const groupsVersion = 1

// ErrGroupNotFound is wrapped when no group matches a reference.
var ErrGroupNotFound = errors.New("group not found")

// Group is one task run by several candidates, each a task in a worktree
// of its own from one snapshot.
type Group struct {
	ID      string    `json:"id"` // g_ and 8 lowercase letters or digits
	Project string    `json:"project,omitempty"`
	Dir     string    `json:"dir"`
	Text    string    `json:"text"` // the task's first line
	Created time.Time `json:"created"`
	// Tasks are the candidates, in the order given (--agents), each a
	// task id.
	Tasks []string `json:"tasks"`
	// Check is the command run in each candidate's worktree when its turn
	// ends done ("" for none), bounded by CheckTimeout; a failed check is
	// sent back to its agent up to CheckRetry times.
	Check        string        `json:"check,omitempty"`
	CheckTimeout time.Duration `json:"check_timeout_ns,omitempty"`
	CheckRetry   int           `json:"check_retry,omitempty"`
	// Vote asks, once every candidate ended, each candidate's agent which
	// other candidate is best (VoteResult).
	Vote bool `json:"vote,omitempty"`
	// BudgetTokens and BudgetUSD bound what all the candidates use
	// together (0: no bound); past one, the candidates still at work are
	// cancelled and Stopped says why.
	BudgetTokens int64       `json:"budget_tokens,omitempty"`
	BudgetUSD    float64     `json:"budget_usd,omitempty"`
	Stopped      string      `json:"stopped,omitempty"`
	Ballot       *VoteResult `json:"ballot,omitempty"`
	// Ended is when every candidate had ended and its check (and the vote)
	// had run: the group's own end.
	Ended time.Time `json:"ended,omitzero"`
	// Picked is the candidate merged (`runner pick`), By how it was chosen.
	Picked   string    `json:"picked,omitempty"`
	PickedBy string    `json:"picked_by,omitempty"`
	PickedAt time.Time `json:"picked_at,omitzero"`
	// Carried are the hosts the group's snapshot was carried to (its ref,
	// refs/runner/snapshots/ID, made in the repository at Dir there when
	// the group started); RefsDropped is when gc removed the refs the group
	// left on them and here (the snapshot's there, each pick's tip here),
	// once every candidate had gone.
	Carried     []string  `json:"carried,omitempty"`
	RefsDropped time.Time `json:"refs_dropped,omitzero"`
	// SupervisorPID is the process that runs the group's checks and vote
	// (the foreground dispatch, or `runner group supervise`).
	SupervisorPID int `json:"supervisor_pid,omitempty"`
	// SupervisorStart is that process's identity (its start, as
	// proctree.Identity reads it), so that a pid reused by another process
	// is not taken for the supervisor.
	SupervisorStart string `json:"supervisor_start,omitempty"`
}

// VoteResult is a group's vote: each candidate's ballot, the count per
// candidate, the winner ("" on a tie or when nobody voted) and what to say
// of it.
type VoteResult struct {
	Ballots []Ballot       `json:"ballots"`
	Tally   map[string]int `json:"tally"`
	Winner  string         `json:"winner,omitempty"`
	Tie     []string       `json:"tie,omitempty"`
	Note    string         `json:"note,omitempty"`
	Time    time.Time      `json:"time"`
}

// Ballot is one candidate's vote: For is the task it named best ("" when
// it could not vote: Error says why), with its reason.
type Ballot struct {
	Voter  string `json:"voter"`
	Agent  string `json:"agent"`
	For    string `json:"for,omitempty"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
}

// CheckResult is a check run in a task's folder when its turn ended
// (Group.Check): its exit code (-1 when it did not exit by itself),
// duration and the tail of its output.
type CheckResult struct {
	Command  string        `json:"command"`
	Exit     int           `json:"exit"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Tail     string        `json:"tail,omitempty"`
	Ran      time.Time     `json:"ran"`
	// Runs counts the checks run on the task (the first, then one after
	// each retry turn).
	Runs int `json:"runs"`
}

// Passed reports whether the check exited 0.
func (c *CheckResult) Passed() bool { return c != nil && c.Exit == 0 && !c.TimedOut }

// ValidGroupID reports whether id is a group id (g_ and 8 lowercase
// letters or digits).
func ValidGroupID(id string) bool {
	rest, ok := strings.CutPrefix(id, "g_")
	return ok && len(rest) == 8 && textutil.IsName(rest, 8, false, "")
}

// NewGroupID returns a fresh random group id.
func NewGroupID() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return "g_" + string(b)
}

type groupsFile struct {
	Version int               `json:"version"`
	Groups  map[string]*Group `json:"groups"`
}

// Groups returns the groups by id (none: an empty map). A corrupt file is
// an error wrapping ErrCorrupt, a newer one wrapping ErrNewerVersion;
// neither is ever overwritten.
func (s *Store) Groups(ctx context.Context) (map[string]*Group, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.readGroups()
}

// FindGroup returns the group ref names: its id or a unique prefix of it.
func (s *Store) FindGroup(ctx context.Context, ref string) (*Group, error) {
	gs, err := s.Groups(ctx)
	if err != nil {
		return nil, err
	}
	if g := gs[ref]; g != nil {
		return g, nil
	}
	var ids []string
	for id := range gs {
		if len(ref) >= 3 && len(id) >= len(ref) && id[:len(ref)] == ref {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	switch len(ids) {
	case 1:
		return gs[ids[0]], nil
	case 0:
		return nil, fmt.Errorf("%q: %w (see 'runner ps --all', whose GROUP column names them)", ref, ErrGroupNotFound)
	}
	return nil, fmt.Errorf("%q names %d groups (%v): %w", ref, len(ids), ids, ErrAmbiguousTask)
}

func (s *Store) readGroups() (map[string]*Group, error) {
	path := s.path(GroupsFile)
	b, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]*Group{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var f groupsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w: %v (move it aside: the groups' tasks are kept in the state)", path, ErrCorrupt, err)
	}
	if f.Version > groupsVersion {
		return nil, fmt.Errorf("%s: version %d: %w (this runner reads version %d; upgrade runner)", path, f.Version, ErrNewerVersion, groupsVersion)
	}
	if f.Groups == nil {
		f.Groups = map[string]*Group{}
	}
	return f.Groups, nil
}

// UpdateGroups changes the groups under the state lock: fn gets them by id
// and may add, change or delete; if it returns an error nothing is
// written. The file is replaced atomically and durably.
func (s *Store) UpdateGroups(ctx context.Context, fn func(map[string]*Group) error) error {
	if err := s.ensureDir(); err != nil {
		return err
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	groups, err := s.readGroups()
	if err != nil {
		return err
	}
	if err := fn(groups); err != nil {
		return err
	}
	b, err := json.MarshalIndent(groupsFile{Version: groupsVersion, Groups: groups}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode groups: %w", err)
	}
	path := s.path(GroupsFile)
	if err := atomicfile.Write(path, append(b, '\n'), 0o600, true); err != nil {
		return fmt.Errorf("write %s: %w (the groups are unchanged)", path, err)
	}
	return nil
}

// UpdateGroup changes group id under the state lock (ErrGroupNotFound when
// there is none).
func (s *Store) UpdateGroup(ctx context.Context, id string, fn func(*Group) error) error {
	return s.UpdateGroups(ctx, func(gs map[string]*Group) error {
		g := gs[id]
		if g == nil {
			return fmt.Errorf("%s: %w", id, ErrGroupNotFound)
		}
		return fn(g)
	})
}
