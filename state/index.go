package state

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/textutil"
)

// indexVersion is the first version whose state.json is the index (older
// ones hold whole tasks inline and are converted by the first write).
const indexVersion = 3

// indexFile is state.json from Version 3 on: the small index. It holds the
// projects, the hot fields of every task still in the index (active tasks,
// finished ones whose window is open, and the latest finished ones), the
// open and recent messages, and the list of archive segments that hold the
// rest. Its size depends on how many tasks are active, not on history.
type indexFile struct {
	Version    int                 `json:"version"`
	Generation uint64              `json:"generation"`
	Updated    time.Time           `json:"updated,omitzero"`
	Projects   map[string]*Project `json:"projects"`
	Tasks      map[string]*entry   `json:"tasks"`
	Messages   map[string]*Message `json:"messages,omitempty"`
	Archive    archiveIndex        `json:"archive,omitzero"`
	// Retired lists the record and segment files the previous write
	// superseded; this write removes them once it is durable (and a
	// later one retries if a crash came in between).
	Retired []string `json:"retired,omitempty"`
	// Applied names the handed-over changes (see UpdateTask) this write
	// applied, and those a holder that died had applied: a claim left
	// behind is done if and only if the index names it. An older runner
	// drops the list when it rewrites the file; that only matters if a
	// holder died with claims at that moment (the change is then made
	// again by its owner).
	Applied []string `json:"applied,omitempty"`
	// EventSeq is the last cursor of the event stream.
	EventSeq uint64 `json:"event_seq,omitempty"`
	// Sandboxed lists the tasks of the index that run in a sandbox (a
	// Sandbox in their record), sorted, and SandboxedAt is the generation
	// of the write that made the list: the list holds only while it is
	// the file's Generation. An older runner that rewrites the file drops
	// both, so a reader never takes a list it did not keep for complete
	// (State.SandboxedTasks then reads every record).
	Sandboxed   []string `json:"sandboxed,omitempty"`
	SandboxedAt uint64   `json:"sandboxed_at,omitempty"`
}

// entry is one task in the index: the hot fields that ps, wait,
// awareness and reconciliation read, in short keys (a few hundred bytes a
// task), and the generation of the task's record file, which holds the
// whole task. Times are Unix nanoseconds; Started, Ended and Reclaimed are
// offsets from Created.
type entry struct {
	ID      string   `json:"id"`
	Project string   `json:"p,omitempty"`
	Agent   string   `json:"ag"`
	Title   string   `json:"ti,omitempty"`
	Status  Status   `json:"st"`
	Tmux    []string `json:"x,omitempty"` // socket, session, window ("=" for the id), pane[, host[, pool]]
	PID     int      `json:"pid,omitempty"`
	Parent  string   `json:"par,omitempty"`
	Level   int      `json:"lv,omitempty"`
	Source  string   `json:"src,omitempty"`
	After   []string `json:"aft,omitempty"`
	Created int64    `json:"c"`
	Started *int64   `json:"s,omitempty"`
	Ended   *int64   `json:"e,omitempty"`
	Exit    *int     `json:"rc,omitempty"`
	// Snapshot is the snapshot ref; "=" stands for the usual
	// refs/runner/snapshots/<id>.
	Snapshot  string   `json:"snap,omitempty"`
	Commit    string   `json:"cm,omitempty"`
	Handling  []string `json:"hd,omitempty"`
	Hops      int      `json:"hh,omitempty"`
	Branch    string   `json:"br,omitempty"`  // "=" for runner/<id>
	Reclaimed *int64   `json:"rcl,omitempty"` // offset from Created too
	// Spend is the task's (hot: runner usage reads it of archived tasks).
	Spend *Spend `json:"sp,omitempty"`
	// Record is the generation in the name of the task's record file,
	// tasks/<id>.<record>.json.
	Record uint64 `json:"r"`
	// SupStart is the supervisor's identity (Task.SupervisorStart).
	SupStart string `json:"ps,omitempty"`
	// Ports is the task's port range: first, count.
	Ports []int `json:"pt,omitempty"`
}

// TitleMax bounds the title an index entry keeps of a task's text: its
// first line, at most this many bytes. Archived tasks listed without their
// record show it as their Text.
const TitleMax = 60

// snapshotPrefix is the ref under which gitsnap keeps task snapshots, and
// branchPrefix the prefix of a worktree task's branch; an entry writes "="
// for the usual name to save space.
const (
	snapshotPrefix = "refs/runner/snapshots/"
	branchPrefix   = "runner/"
)

// title returns the first line of text clipped to TitleMax bytes.
func title(text string) string {
	t := textutil.FirstLine(text)
	if len(t) <= TitleMax {
		return t
	}
	n := TitleMax
	for n > 0 && !utf8.RuneStart(t[n]) {
		n--
	}
	return t[:n] + "…"
}

// toEntry returns the index entry of t, whose record file is of
// generation rec.
func toEntry(t *Task, rec uint64) *entry {
	e := &entry{
		ID: t.ID, Project: t.Project, Agent: t.Agent, Title: title(t.Text),
		Status: t.Status, PID: t.SupervisorPID, Parent: t.Parent, Level: t.Level,
		Source: t.Source, After: t.After, Created: t.Created.UnixNano(), Exit: t.ExitCode,
		Snapshot: t.SnapshotRef, Commit: t.Commit, Handling: t.Handling, Hops: t.HandlingHops,
		Branch: t.Branch, Record: rec, SupStart: t.SupervisorStart,
	}
	if e.Branch == branchPrefix+t.ID {
		e.Branch = "="
	}
	if !t.Ports.IsZero() {
		e.Ports = []int{t.Ports.First, t.Ports.Count}
	}
	if !t.Spend.IsZero() {
		sp := t.Spend
		e.Spend = &sp
	}
	if x := t.Tmux; x != (TmuxTarget{}) {
		if x.Window == t.ID {
			x.Window = "="
		}
		e.Tmux = []string{x.Socket, x.Session, x.Window, x.Pane}
		if x.Host != "" || x.Pool != "" {
			e.Tmux = append(e.Tmux, x.Host)
		}
		if x.Pool != "" {
			e.Tmux = append(e.Tmux, x.Pool)
		}
	}
	if e.Snapshot == snapshotPrefix+t.ID {
		e.Snapshot = "="
	}
	if !t.Started.IsZero() {
		d := t.Started.UnixNano() - e.Created
		e.Started = &d
	}
	if !t.Ended.IsZero() {
		d := t.Ended.UnixNano() - e.Created
		e.Ended = &d
	}
	if !t.Reclaimed.IsZero() {
		d := t.Reclaimed.UnixNano() - e.Created
		e.Reclaimed = &d
	}
	return e
}

// applyHot sets the hot fields of t from e: the index is what says where a
// task stands; its record may be older when only hot fields changed since.
func (e *entry) applyHot(t *Task) {
	t.ID, t.Project, t.Agent = e.ID, e.Project, e.Agent
	t.Status, t.SupervisorPID, t.SupervisorStart, t.Parent, t.Level = e.Status, e.PID, e.SupStart, e.Parent, e.Level
	t.Source, t.After, t.ExitCode = e.Source, e.After, e.Exit
	t.SnapshotRef, t.Commit, t.Handling, t.HandlingHops = e.Snapshot, e.Commit, e.Handling, e.Hops
	if t.SnapshotRef == "=" {
		t.SnapshotRef = snapshotPrefix + e.ID
	}
	t.Branch = e.Branch
	if t.Branch == "=" {
		t.Branch = branchPrefix + e.ID
	}
	t.Ports = PortRange{}
	if len(e.Ports) == 2 {
		t.Ports = PortRange{First: e.Ports[0], Count: e.Ports[1]}
	}
	t.Tmux = TmuxTarget{}
	if len(e.Tmux) >= 4 && len(e.Tmux) <= 6 {
		t.Tmux = TmuxTarget{Socket: e.Tmux[0], Session: e.Tmux[1], Window: e.Tmux[2], Pane: e.Tmux[3]}
		if len(e.Tmux) >= 5 {
			t.Tmux.Host = e.Tmux[4]
		}
		if len(e.Tmux) == 6 {
			t.Tmux.Pool = e.Tmux[5]
		}
		if t.Tmux.Window == "=" {
			t.Tmux.Window = e.ID
		}
	}
	t.Spend = Spend{}
	if e.Spend != nil {
		t.Spend = *e.Spend
	}
	t.Created = time.Unix(0, e.Created).UTC()
	t.Started, t.Ended, t.Reclaimed = time.Time{}, time.Time{}, time.Time{}
	if e.Started != nil {
		t.Started = time.Unix(0, e.Created+*e.Started).UTC()
	}
	if e.Ended != nil {
		t.Ended = time.Unix(0, e.Created+*e.Ended).UTC()
	}
	if e.Reclaimed != nil {
		t.Reclaimed = time.Unix(0, e.Created+*e.Reclaimed).UTC()
	}
}

// task returns the task e describes, without its record: the hot fields,
// and the title as its Text (Dir, like the rest of the bulk, is empty).
// Archived is set.
func (e *entry) task() *Task {
	t := &Task{Text: e.Title, Archived: true}
	e.applyHot(t)
	return t
}

// ended returns when the task of e ended (zero if it has not).
func (e *entry) ended() time.Time {
	if e.Ended == nil {
		return time.Time{}
	}
	return time.Unix(0, e.Created+*e.Ended).UTC()
}

// hotFields lists the Task fields an index entry carries (applyHot sets
// them); every other field is bulk, kept in the record file only.
// TestEveryFieldIsHotOrBulk holds the list to the struct.
var hotFields = []string{
	"ID", "Project", "Agent", "Status", "Tmux", "SupervisorPID", "SupervisorStart", "Parent", "Level",
	"Source", "After", "Created", "Started", "Ended", "ExitCode", "SnapshotRef", "Commit",
	"Handling", "HandlingHops", "Reclaimed", "Branch", "Spend", "Ports",
}

// bulkFields lists the Task fields kept only in the record file.
var bulkFields = []string{
	"Dir", "Text", "TextFile", "History", "ResultTail", "Delivery", "Answer", "AgentSession",
	"Turns", "Transcript", "Question", "Settings", "Origin", "Sandbox", "Changes", "Overlaps", "TurnCount",
	"LimitReset", "Live", "HomeCopies", "Group", "Check", "TurnPrompt", "Answers",
}

// sameBulk reports whether a and b agree on every bulk field (so a's record
// file still holds b).
func sameBulk(a, b *Task) bool {
	x, y := a, b
	return x.Dir == y.Dir && x.Text == y.Text && x.TextFile == y.TextFile && x.ResultTail == y.ResultTail &&
		x.Delivery == y.Delivery && x.Answer == y.Answer && x.AgentSession == y.AgentSession &&
		x.Transcript == y.Transcript && x.Question == y.Question && x.Origin == y.Origin && x.TurnCount == y.TurnCount && x.LimitReset.Equal(y.LimitReset) && x.Live == y.Live &&
		string(x.Settings) == string(y.Settings) && slices.Equal(x.Sandbox, y.Sandbox) && maps.Equal(x.HomeCopies, y.HomeCopies) &&
		sameHistory(x.History, y.History) && sameTurns(x.Turns, y.Turns) &&
		sameChanges(x.Changes, y.Changes) && slices.EqualFunc(x.Overlaps, y.Overlaps, sameOverlap) &&
		x.Group == y.Group && sameCheck(x.Check, y.Check) && sameTurnPrompt(x.TurnPrompt, y.TurnPrompt) &&
		slices.EqualFunc(x.Answers, y.Answers, sameAnswer)
}

func sameTurnPrompt(a, b *TurnPrompt) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameCheck(a, b *CheckResult) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Command == b.Command && a.Exit == b.Exit && a.TimedOut == b.TimedOut && a.Duration == b.Duration &&
		a.Tail == b.Tail && a.Ran.Equal(b.Ran) && a.Runs == b.Runs
}

func sameChanges(a, b *Changes) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Repo == b.Repo && a.Host == b.Host && a.Count == b.Count && a.Shared == b.Shared &&
		a.Time.Equal(b.Time) && a.Merged.Equal(b.Merged) && slices.Equal(a.Files, b.Files)
}

func sameOverlap(a, b Overlap) bool {
	return a.Task == b.Task && a.Since.Equal(b.Since) && slices.Equal(a.Files, b.Files) && slices.Equal(a.Told, b.Told)
}

func sameHistory(a, b []StatusChange) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Status != b[i].Status || a[i].Reason != b[i].Reason || !a[i].Time.Equal(b[i].Time) {
			return false
		}
	}
	return true
}

func sameTurns(a, b []Turn) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Summary != b[i].Summary || a[i].Answer != b[i].Answer || a[i].Spend != b[i].Spend || a[i].SpendPending != b[i].SpendPending || !a[i].Time.Equal(b[i].Time) {
			return false
		}
	}
	return true
}

// clone returns a deep copy of t: an Update function may change any of it
// in place, and a failed update must leave the cached record as it was.
func (t *Task) clone() *Task {
	c := *t
	c.History = append([]StatusChange(nil), t.History...)
	c.Turns = append([]Turn(nil), t.Turns...)
	c.After = append([]string(nil), t.After...)
	c.Handling = append([]string(nil), t.Handling...)
	c.Sandbox = slices.Clone(t.Sandbox)
	c.Answers = slices.Clone(t.Answers)
	c.HomeCopies = maps.Clone(t.HomeCopies)
	c.Settings = append(json.RawMessage(nil), t.Settings...)
	if t.TurnPrompt != nil {
		tp := *t.TurnPrompt
		c.TurnPrompt = &tp
	}
	if t.Check != nil {
		ck := *t.Check
		c.Check = &ck
	}
	if t.Changes != nil {
		ch := *t.Changes
		ch.Files = slices.Clone(t.Changes.Files)
		c.Changes = &ch
	}
	if t.Overlaps != nil {
		c.Overlaps = make([]Overlap, len(t.Overlaps))
		for i, o := range t.Overlaps {
			o.Files, o.Told = slices.Clone(o.Files), slices.Clone(o.Told)
			c.Overlaps[i] = o
		}
	}
	if t.ExitCode != nil {
		v := *t.ExitCode
		c.ExitCode = &v
	}
	if len(t.History) == 0 {
		c.History = t.History
	}
	if len(t.Turns) == 0 {
		c.Turns = t.Turns
	}
	if len(t.After) == 0 {
		c.After = t.After
	}
	if len(t.Handling) == 0 {
		c.Handling = t.Handling
	}
	if len(t.Settings) == 0 {
		c.Settings = t.Settings
	}
	return &c
}
