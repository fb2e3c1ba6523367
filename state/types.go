package state

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/textutil"
)

// Version is the schema version this package reads and writes. A state file
// with a higher version is refused (ErrNewerVersion).
//
// Version 2 added the messages between tasks (State.Messages and the
// Task.Handling fields). Version 3 split the file: state.json became the
// index of hot fields, each task's whole record went to its own file, and
// finished tasks and messages to archive segments. A version 1 or 2 file is
// read as it is and converted by the first write, which keeps the old file
// as state.json.v<N>-backup.
//
// Version 4 is version 3 with projects and tasks on other machines
// (Project.Host, TmuxTarget.Host). A state that names no host is still
// written as version 3, so a runner that predates hosts keeps reading it;
// one that names a host is written as version 4, which such a runner
// refuses instead of mistaking remote tasks for local ones.
const Version = 4

// MaxTurns bounds a task's turn log: AddTurn keeps only the most recent
// MaxTurns summaries.
const MaxTurns = 20

// State is the shared state as one process sees it: the project registry,
// the tasks of the index (active ones, finished ones whose window is open,
// and the latest finished ones) whole, and the messages. Finished tasks
// beyond those are archived: Task, FindTask and AllTasks reach them.
type State struct {
	// Version is the schema version of the file (see Version).
	Version int `json:"version"`
	// Generation is incremented by every write of the file.
	Generation uint64 `json:"generation"`
	// Updated is when the file was last written.
	Updated time.Time `json:"updated,omitzero"`
	// Projects maps a project name to its record.
	Projects map[string]*Project `json:"projects"`
	// Tasks maps a task id to its record.
	Tasks map[string]*Task `json:"tasks"`
	// Messages maps a message id to the message (see Message): the open
	// ones and the latest finished ones; older finished messages are in
	// the archive (AllMessages, MessageHistory).
	Messages map[string]*Message `json:"messages,omitempty"`
	// EventSeq is the cursor of the last line of the event stream
	// (EventsFile).
	EventSeq uint64 `json:"event_seq,omitempty"`

	msgBase map[string]MessageStatus // each message's status as loaded
	// quietEvents: the next write streams no events (a repair's rebuild).
	quietEvents bool
	dir         string            // the state directory, for the archive and records
	arch        archiveIndex      // the archive segments
	base        map[string]baseOf // each index task's record as it is on disk
	promoted    map[string]string // tasks taken back out of an archive segment
	retired     []string          // files the last write superseded
	applied     []string          // handed-over changes the last write applied (indexFile.Applied)
	legacy      int               // the version of the file read, if older
	writable    bool              // inside an Update: Task promotes from the archive
	// lazy holds the tasks whose record is not read (an index-only
	// load): their hot fields only, and the entry's title, which the
	// index keeps. lazyErr is why a record asked for could not be read;
	// the write fails with it.
	lazy    map[string]string
	lazyErr error
	// sandboxed is the index's list of sandboxed tasks as loaded, when
	// it held (indexFile.SandboxedAt): what a write says of the tasks
	// whose record it did not read.
	sandboxed map[string]bool
	// Prune's request, carried to the write.
	pruneNow    bool
	pruneCutoff time.Time
	onPruned    func([]string)
	// emitted are events of no change of the index (a push: StreamPush),
	// streamed by the next write.
	emitted []StreamEvent
}

// baseOf is a task's record as last written: the decoded file (shared by
// the cache: never changed) and its generation.
type baseOf struct {
	rec *Task
	gen uint64
}

// Project is a registered project: a name for a working directory.
type Project struct {
	Name string `json:"name"`
	Dir  string `json:"dir"` // absolute, on Host
	// Host is the registered host (runner host add) the project lives on;
	// empty for this machine.
	Host  string    `json:"host,omitempty"`
	Added time.Time `json:"added"`
}

// Status is a task's place in its lifecycle:
//
//	queued → starting → ready → running ⇄ needs_input → done | failed | timeout | cancelled | exited | orphaned
//	running → limited → ready → running (a usage limit waited out: dispatch --on-limit wait)
//
// A task whose pane or supervisor vanished is orphaned; it can be resumed or
// closed, so orphaned is not terminal.
type Status string

// The task statuses, in lifecycle order.
const (
	StatusQueued     Status = "queued"
	StatusStarting   Status = "starting"
	StatusReady      Status = "ready"
	StatusRunning    Status = "running"
	StatusNeedsInput Status = "needs_input"
	StatusDone       Status = "done"
	StatusFailed     Status = "failed"
	StatusTimeout    Status = "timeout"
	StatusCancelled  Status = "cancelled"
	StatusExited     Status = "exited"
	StatusOrphaned   Status = "orphaned"
	// StatusLimited: the agent's turn ended on its provider's usage or
	// rate limit (Task.LimitReset says until when, when the CLI said);
	// the supervisor waits it out (--on-limit wait) or ends the task
	// failed "limited: …" (--on-limit fail).
	StatusLimited Status = "limited"
)

// Statuses lists every valid status in lifecycle order.
var Statuses = []Status{
	StatusQueued, StatusStarting, StatusReady, StatusRunning, StatusNeedsInput,
	StatusDone, StatusFailed, StatusTimeout, StatusCancelled, StatusExited, StatusOrphaned, StatusLimited,
}

// Valid reports whether s is one of the statuses above.
func (s Status) Valid() bool {
	for _, v := range Statuses {
		if s == v {
			return true
		}
	}
	return false
}

// IsTerminal reports whether a task in status s has finished for good:
// done, failed, timeout, cancelled or exited.
func (s Status) IsTerminal() bool {
	switch s {
	case StatusDone, StatusFailed, StatusTimeout, StatusCancelled, StatusExited:
		return true
	}
	return false
}

// IsActive reports whether a task in status s is still being worked on: not
// terminal and not orphaned.
func (s Status) IsActive() bool {
	return s.Valid() && !s.IsTerminal() && s != StatusOrphaned
}

// StatusChange is one entry in a task's status history.
type StatusChange struct {
	Status Status    `json:"status"`
	Time   time.Time `json:"time"`
	Reason string    `json:"reason,omitempty"`
}

// Turn is a one-line summary of what the agent did in one turn, and the
// agent's final message of that turn when it is known.
type Turn struct {
	Time    time.Time `json:"time"`
	Summary string    `json:"summary"`
	// Answer is the agent's final message of the turn: from its turn-end
	// hook's payload when the profile has a hook, else the last answer
	// block of the screen without the CLI's chrome. At most MaxTurnAnswer
	// bytes here (Task.Answer holds the latest whole).
	Answer string `json:"answer,omitempty"`
	// Spend is what the turn used, as the agent CLI recorded it (Unknown
	// 1 when it recorded nothing; zero in records from before spend was
	// kept).
	Spend Spend `json:"spend,omitzero"`
	// SpendPending: the turn's end was recorded before its CLI wrote
	// what it used (Claude Code writes it after its hook); SetTurnSpend
	// fills Spend in.
	SpendPending bool `json:"spend_pending,omitempty"`
}

// MaxTurnAnswer bounds the answer kept per turn in Task.Turns (the state
// file is rewritten on every update); the latest answer is whole in
// Task.Answer.
const MaxTurnAnswer = 16 << 10

// TmuxTarget says where a task's agent runs.
type TmuxTarget struct {
	Socket  string `json:"socket,omitempty"`  // the tmux server: a -L name or a -S path
	Session string `json:"session,omitempty"` // session name
	Window  string `json:"window,omitempty"`  // window name or id
	Pane    string `json:"pane,omitempty"`    // pane id, %N
	// Host is the registered host whose tmux runs the pane (over ssh);
	// empty for this machine.
	Host string `json:"host,omitempty"`
	// Pool is the pool of hosts the task was dispatched to (dispatch
	// --host any or label:L): it waits queued with Host empty until a
	// host of the pool has a free slot, then Host names it.
	Pool string `json:"pool,omitempty"`
}

// Source values other than a task id.
const (
	SourceUser = "user"
	SourceCron = "cron"
)

// Task is the record of one dispatched task.
type Task struct {
	ID      string `json:"id"`
	Project string `json:"project,omitempty"`
	Dir     string `json:"dir"`
	Agent   string `json:"agent"`
	// Text is the task text: the whole of it up to InlineTextMax bytes;
	// for a longer one its beginning (ClipText), the whole being in
	// TextFile. Read the whole with Store.TaskText.
	Text string `json:"text"`
	// TextFile is the file that holds the whole text of a task longer than
	// InlineTextMax (written once, durable before the record points at it).
	TextFile string `json:"text_file,omitempty"`

	Status  Status         `json:"status"`
	History []StatusChange `json:"history"`

	// Sandbox lists what the agent may write when it runs in a sandbox
	// (dispatch --sandbox: bwrap, the rest read-only); empty when it does
	// not.
	Sandbox []string `json:"sandbox,omitempty"`
	// HomeCopies maps the CLI directories a sandboxed agent sees to the
	// task's copies of them (sandbox_home "task"): where runner reads the
	// files the agent's hook names.
	HomeCopies map[string]string `json:"home_copies,omitempty"`

	Tmux TmuxTarget `json:"tmux,omitzero"`
	// Ports is the range of TCP ports the task's pane is given
	// (RUNNER_PORT, RUNNER_PORT_COUNT; AllocatePorts): no other live task
	// of its machine holds one that overlaps it; free again once the task
	// has ended.
	Ports         PortRange `json:"ports,omitzero"`
	SupervisorPID int       `json:"supervisor_pid,omitempty"`
	// SupervisorStart tells the supervisor's process apart from any other
	// that has its pid later (after a reboot, or once it is gone): the
	// boot's id and the process's start time (proctree.Identity). Empty in
	// records of runners before it: the pid alone is checked then.
	SupervisorStart string `json:"supervisor_start,omitempty"`

	// Parent is the id of the task whose agent dispatched this one; Level is
	// 0 for a task dispatched from outside any task, parent's level + 1
	// otherwise.
	Parent string `json:"parent,omitempty"`
	Level  int    `json:"level"`
	// Source says who asked for the task: SourceUser, SourceCron or a task id.
	Source string `json:"source,omitempty"`
	// After lists the tasks that must be done before this one starts
	// (dispatch --after); the task stays queued until then.
	After []string `json:"after,omitempty"`

	Created time.Time `json:"created"`
	Started time.Time `json:"started,omitzero"`
	Ended   time.Time `json:"ended,omitzero"`

	ExitCode    *int   `json:"exit_code,omitempty"`
	ResultTail  string `json:"result_tail,omitempty"`  // the last lines of the agent's answer
	SnapshotRef string `json:"snapshot_ref,omitempty"` // e.g. refs/runner/snapshots/<id>
	Commit      string `json:"commit,omitempty"`       // the post-task commit, if any
	Delivery    string `json:"delivery,omitempty"`     // how delivering the text went
	// Answer is the agent's final message of its latest turn, whole (see
	// Turn.Answer); empty until a turn ends with one.
	Answer string `json:"answer,omitempty"`
	// AgentSession is the agent CLI's own session id (Claude Code's
	// session_id, Codex's thread-id, …) as its turn-end hook reported it
	// or its screen showed it: the id its resume command takes, to go on
	// with the conversation in a new window.
	AgentSession string `json:"agent_session,omitempty"`

	// TurnCount counts the prompts delivered to the agent (the task, each
	// follow-up, each batch of messages): its turns, for --max-turns.
	TurnCount int `json:"turn_count,omitempty"`
	// TurnPrompt tells the latest delivered turn apart, for a supervisor
	// that did not deliver it (runner send --detach, resume): which hook
	// events are its, and where what it used so far is read. Nil before
	// the first delivery (and in records of older runners).
	TurnPrompt *TurnPrompt `json:"turn_prompt,omitempty"`
	// LimitReset is when the usage limit the agent's last turn ended on
	// resets, as the CLI said (zero: it did not, or no limit).
	LimitReset time.Time `json:"limit_reset,omitzero"`
	// Spend sums what the task's turns used (Turn.Spend), also of turns
	// the turn log no longer holds.
	Spend Spend `json:"spend,omitzero"`
	// Live is what the turn now running used so far, as the agent CLI's
	// record shows it while the turn goes on (read while the task's tree
	// has a token or dollar budget: LiveSpend); its turn's end replaces it
	// with the turn's whole spend, in Spend. Its Turns is 0.
	Live Spend `json:"live_spend,omitzero"`

	// Turns is the turn log: at most MaxTurns one-line summaries, oldest first.
	Turns []Turn `json:"turns,omitempty"`

	// Transcript is the file the pane's output is piped to.
	Transcript string `json:"transcript,omitempty"`
	// Question is the agent's open question while needs_input.
	Question string `json:"question,omitempty"`
	// Handling lists the messages delivered in the agent's current turn,
	// and HandlingHops the most hops among them: a message the agent sends
	// during that turn carries HandlingHops+1. Both are cleared when a
	// prompt from the user (dispatch, send) starts a turn.
	Handling     []string `json:"handling,omitempty"`
	HandlingHops int      `json:"handling_hops,omitempty"`

	// Reclaimed is when gc (or cancel --kill) closed the task's window and
	// ended its processes; a later send starts the agent again on
	// AgentSession.
	Reclaimed time.Time `json:"reclaimed,omitzero"`

	// Settings holds the dispatch options the supervisor needs (timeouts,
	// approval rules, commit and notify settings), as the runner package
	// serialises them.
	Settings json.RawMessage `json:"settings,omitempty"`

	// Branch is the git branch of a task that works in its own worktree
	// (dispatch --worktree): runner/<id>. Its Dir is then the worktree,
	// and Origin the project directory the worktree was made from.
	Branch string `json:"branch,omitempty"`
	Origin string `json:"origin,omitempty"`

	// Changes is what the task has changed in its repository since its
	// snapshot, kept current while it works (nil outside a git
	// repository, or before its first look); Overlaps are the other tasks
	// of the repository that changed some of the same files.
	Changes  *Changes  `json:"changes,omitempty"`
	Overlaps []Overlap `json:"overlaps,omitempty"`

	// Group is the group the task is a candidate of (dispatch --agents,
	// --tries; see Group), and Check its check's last result.
	Group string       `json:"group,omitempty"`
	Check *CheckResult `json:"check,omitempty"`

	// Answers are the receipts of the answers given to the task's
	// dialogs (runner answer), oldest first, at most MaxAnswers: an
	// operation id found here is never pressed again.
	Answers []AnswerReceipt `json:"answers,omitempty"`

	// Archived is set on a task listed from the archive without its
	// record (State.AllTasks): it has the hot fields, and the first line
	// of its text as Text. State.Task reads the whole record.
	Archived bool `json:"archived,omitempty"`
}

// SetStatus moves the task to status s at time at, recording reason in the
// history. Entering running sets Started if unset; entering a terminal status
// sets Ended. An unknown status is an error and changes nothing. A task
// failed always says why: with no reason given, NoReason is recorded.
func (t *Task) SetStatus(s Status, at time.Time, reason string) error {
	if !s.Valid() {
		return fmt.Errorf("task %s: unknown status %q (want one of %s)", t.ID, s, statusList())
	}
	if s == StatusFailed && strings.TrimSpace(reason) == "" {
		reason = NoReason
	}
	t.Status = s
	t.History = append(t.History, StatusChange{Status: s, Time: at, Reason: reason})
	if s == StatusRunning && t.Started.IsZero() {
		t.Started = at
	}
	if s.IsTerminal() {
		t.Ended = at
	}
	return nil
}

// AddTurn appends a one-line summary to the turn log, keeping the last
// MaxTurns. Only the first line of summary is kept.
func (t *Task) AddTurn(at time.Time, summary string) {
	t.AddTurnAnswer(at, summary, "")
}

// AddTurnAnswer is AddTurn with the turn's answer, clipped to
// MaxTurnAnswer bytes (on a rune boundary, marked with " …").
func (t *Task) AddTurnAnswer(at time.Time, summary, answer string) {
	t.AddTurnSpent(at, summary, answer, Spend{})
}

// AddTurnPending is AddTurnAnswer for a turn whose spend is not read yet:
// the running turn's live spend stays until SetTurnSpend counts the turn.
func (t *Task) AddTurnPending(at time.Time, summary, answer string) {
	live := t.Live
	t.AddTurnSpent(at, summary, answer, Spend{})
	t.Live = live
	t.Turns[len(t.Turns)-1].SpendPending = true
}

// SetTurnSpend counts what the latest turn used once its CLI wrote it
// (see AddTurnPending): in the turn, and in the task's Spend. Without a
// pending turn (its end recorded no turn), it is counted in the task's
// Spend alone.
func (t *Task) SetTurnSpend(spent Spend) {
	spent = t.EndLive(spent)
	if n := len(t.Turns); n > 0 && t.Turns[n-1].SpendPending {
		t.Turns[n-1].Spend, t.Turns[n-1].SpendPending = spent, false
	}
}

// AddTurnSpent is AddTurnAnswer with what the turn used, which it adds to
// the task's Spend.
func (t *Task) AddTurnSpent(at time.Time, summary, answer string, spent Spend) {
	spent = t.EndLive(spent)
	if len(answer) > MaxTurnAnswer {
		cut := MaxTurnAnswer
		for cut > 0 && !utf8.RuneStart(answer[cut]) {
			cut--
		}
		answer = answer[:cut] + " …"
	}
	t.Turns = append(t.Turns, Turn{Time: at, Summary: textutil.FirstLine(summary), Answer: answer, Spend: spent})
	if n := len(t.Turns) - MaxTurns; n > 0 {
		t.Turns = append(t.Turns[:0:0], t.Turns[n:]...)
	}
}

// EndLive adds the spend of the turn that just ended to the task's in
// place of what was read of it while it ran (Live), and returns what it
// added. A turn whose end came with no record of its spend (one
// interrupted before its CLI's hook ran) counts what was read while it
// ran, if anything: the least it used.
func (t *Task) EndLive(spent Spend) Spend {
	if !spent.Known() && spent.Unknown > 0 && t.Live.Tokens() > 0 {
		spent = t.Live
		spent.Turns, spent.Unknown = 1, 0
		if spent.CostUSD > 0 {
			spent.Costed = 1
		}
	}
	t.Spend, t.Live = t.Spend.Add(spent), Spend{}
	return spent
}

// LastTurn returns the latest turn summary, or "" if there is none.
func (t *Task) LastTurn() string {
	if len(t.Turns) == 0 {
		return ""
	}
	return t.Turns[len(t.Turns)-1].Summary
}

func statusList() string {
	s := make([]string, len(Statuses))
	for i, v := range Statuses {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// New returns an empty state at the current Version.
func New() *State {
	return &State{Version: Version, Projects: map[string]*Project{}, Tasks: map[string]*Task{}, base: map[string]baseOf{}}
}

// ProjectList returns the projects sorted by name.
func (s *State) ProjectList() []Project {
	out := make([]Project, 0, len(s.Projects))
	for _, p := range s.Projects {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// TaskList returns the tasks of the index sorted by creation time, oldest
// first (ties by id). AllTasks adds the archived ones.
func (s *State) TaskList() []*Task {
	out := make([]*Task, 0, len(s.Tasks))
	for _, t := range s.Tasks {
		out = append(out, t)
	}
	sortTasks(out)
	return out
}

// normalize fills nil maps so callers can always index them.
func (s *State) normalize() {
	if s.Projects == nil {
		s.Projects = map[string]*Project{}
	}
	if s.Tasks == nil {
		s.Tasks = map[string]*Task{}
	}
	if s.base == nil {
		s.base = map[string]baseOf{}
	}
}

// clone returns a deep copy of s, to roll back to (see applyBatch).
func (s *State) clone() *State {
	c := *s
	c.Projects = make(map[string]*Project, len(s.Projects))
	for k, p := range s.Projects {
		v := *p
		c.Projects[k] = &v
	}
	c.Tasks = make(map[string]*Task, len(s.Tasks))
	for k, t := range s.Tasks {
		c.Tasks[k] = t.clone()
	}
	if s.Messages != nil {
		c.Messages = make(map[string]*Message, len(s.Messages))
		for k, m := range s.Messages {
			v := *m
			c.Messages[k] = &v
		}
	}
	c.base = maps.Clone(s.base)
	c.lazy = maps.Clone(s.lazy)
	c.sandboxed = maps.Clone(s.sandboxed)
	c.promoted = maps.Clone(s.promoted)
	c.arch = s.arch.clone()
	c.retired = slices.Clone(s.retired)
	c.applied = slices.Clone(s.applied)
	return &c
}

// NoReason is the reason recorded for a task failed with none given: a
// fault of runner's (every failure is to say why), kept visible rather than
// an empty reason.
const NoReason = "failed with no reason given (a fault of runner's: please report it, with 'runner status ID' and the supervisor's log)"

// LastReason is the reason of t's last status change ("" when none).
func (t *Task) LastReason() string {
	if len(t.History) == 0 {
		return ""
	}
	return t.History[len(t.History)-1].Reason
}

// MaxChangedFiles bounds Changes.Files (Changes.Count has the whole
// count).
const MaxChangedFiles = 500

// Changes is what a task has changed in its repository since its snapshot.
type Changes struct {
	// Repo names the repository: its git common directory, on Host
	// (empty: this machine). Tasks of one repository have the same.
	Repo string `json:"repo"`
	Host string `json:"host,omitempty"`
	// Files are the changed paths, relative to the repository's top,
	// sorted: at most MaxChangedFiles of them.
	Files []string `json:"files"`
	// Count is how many paths changed (Files may hold fewer).
	Count int `json:"count"`
	// Shared is set for a task that works in a tree others may change too
	// (the project's own, not a worktree of its own): Files are then the
	// tree's changes since the task's snapshot, whoever made them.
	Shared bool `json:"shared,omitempty"`
	// Time is when the files were last looked at.
	Time time.Time `json:"time"`
	// Merged is when `runner merge` merged the task's branch: its changes
	// are the repository's now, and meet no other task's.
	Merged time.Time `json:"merged,omitzero"`
}

// Overlap is another task of the same repository that changed some of the
// files this one changed.
type Overlap struct {
	Task  string   `json:"task"`
	Files []string `json:"files"`
	// Told lists the files the task's agent was told about, so that a new
	// file tells it again and nothing else does.
	Told  []string  `json:"told,omitempty"`
	Since time.Time `json:"since"`
}

// OverlapWith returns t's overlap with task id, or nil.
func (t *Task) OverlapWith(id string) *Overlap {
	for i := range t.Overlaps {
		if t.Overlaps[i].Task == id {
			return &t.Overlaps[i]
		}
	}
	return nil
}

// TurnPrompt is what tells a delivered turn apart: a piece of its
// prompt's first line (what the agent's hook names its prompt by) and the
// size of the task's events file when the delivery began (its turn's
// events come after it).
type TurnPrompt struct {
	Signature  string `json:"signature,omitempty"`
	EventsFrom int64  `json:"events_from"`
}
