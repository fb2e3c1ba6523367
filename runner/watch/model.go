package watch

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/state"
)

// Options configure the view.
type Options struct {
	// Deps reaches the state and the tmux servers.
	Deps Deps
	// Exe is the runner binary the actions run.
	Exe string
	// Filter selects the tasks listed (the `/` key edits its Text).
	Filter Filter
	// Getenv reads the environment ($TMUX for attach); nil means none.
	Getenv func(string) string
	// Bell receives the terminal bell (BEL) when a task turns
	// needs_input; nil for none.
	Bell io.Writer
	// NoColor drops the colours of the pane preview (the view's own
	// styles follow NO_COLOR through lipgloss).
	NoColor bool
	// Now returns the time; nil means time.Now (tests freeze it).
	Now func() time.Time
}

// tab is what the preview shows.
type tab int

const (
	tabPane tab = iota // the selected task's pane, live
	tabDiff            // `runner diff ID`
	tabLogs            // `runner logs ID`, its end
)

func (t tab) String() string { return [...]string{"pane", "diff", "logs"}[t] }

// mode is what the keys do.
type mode int

const (
	modeList    mode = iota // move, act
	modeInput               // typing into the input line
	modeConfirm             // y/n for cancel and kill
	modeHelp                // the help screen
)

// Model is the bubbletea model of `runner watch`.
type Model struct {
	ctx  context.Context
	opts Options
	feed *feed

	st     *state.State
	rows   []Row
	counts Counts
	sel    string // the selected task's id
	top    int    // the first list row shown
	w, h   int
	now    time.Time
	loaded bool
	err    error // the last load's error, shown until the next good one

	tab         tab
	preview     string // the text of the tab shown, for previewID
	previewID   string
	previewPane string
	capturing   bool
	captureDue  bool
	lastCapture time.Time

	status    string
	statusErr bool

	mode    mode
	input   lineInput
	asking  []string // the prompts of an input in several steps (n)
	answers []string
	onInput func(answers []string) tea.Cmd
	// filtering: the input is the / filter, applied as it is typed
	filtering bool
	defaults  []string
	confirm   func() tea.Cmd

	asked  map[string]bool // tasks seen needs_input (the bell rang)
	marked map[string]bool // needs_input not looked at yet

	lastReconcile time.Time
}

// New makes the model; Run starts it.
func New(ctx context.Context, opts Options) (*Model, error) {
	f, err := newFeed(ctx, opts.Deps)
	if err != nil {
		return nil, err
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	m := &Model{ctx: ctx, opts: opts, feed: f, asked: map[string]bool{}, marked: map[string]bool{}, w: 80, h: 24}
	m.now = m.clock()
	return m, nil
}

func (m *Model) clock() time.Time {
	if m.opts.Now != nil {
		return m.opts.Now()
	}
	return clock.Now()
}

// Init starts the watches, the first (reconciling) load and the clock.
func (m *Model) Init() tea.Cmd {
	m.lastReconcile = m.clock()
	return tea.Batch(m.feed.load(m.ctx, true), m.feed.nextChange(), m.feed.nextPaneEvent(), tea.Tick(time.Second, func(t time.Time) tea.Msg { return clockMsg(t) }))
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
		m.scrollToSelection()
		return m, nil
	case loadedMsg:
		return m, m.takeState(msg)
	case changedMsg:
		return m, tea.Batch(m.feed.load(m.ctx, false), m.feed.nextChange())
	case clockMsg:
		m.now = m.clock()
		var cmds []tea.Cmd
		if m.now.Sub(m.lastReconcile) >= ReconcileEvery {
			m.lastReconcile = m.now
			cmds = append(cmds, m.feed.load(m.ctx, true))
		}
		return m, tea.Batch(append(cmds, nextTick(m.now, m.rows))...)
	case paneMsg:
		return m, tea.Batch(m.requestCapture(), m.feed.nextPaneEvent())
	case captureDueMsg:
		m.captureDue = false
		return m, m.requestCapture()
	case previewMsg:
		return m, m.previewed(msg)
	case doneMsg:
		return m, m.actionDone(msg)
	case attachedMsg:
		switch {
		case msg.err != nil:
			m.setStatus(true, "attach: %v", msg.err)
		case msg.pane != "":
			// The view stays in its window; redraw it whole for when the
			// user comes back to it.
			m.setStatus(false, "your tmux client shows %s now; come back to this window with your tmux keys", msg.pane)
			return m, tea.Batch(m.refreshPreview(), tea.ClearScreen)
		default:
			m.setStatus(false, "back from the pane")
		}
		return m, m.refreshPreview()
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// takeState takes a fresh state: rebuilds the list, rings the bell for a
// task newly needs_input, keeps the selection.
func (m *Model) takeState(msg loadedMsg) tea.Cmd {
	if msg.err != nil {
		m.err = msg.err
		return nil
	}
	m.err = nil
	m.st = msg.st
	m.now = m.clock()
	first := !m.loaded
	m.loaded = true
	ring := false
	for id, t := range m.st.Tasks {
		if t.Status != state.StatusNeedsInput {
			delete(m.asked, id)
			delete(m.marked, id)
			continue
		}
		if !m.asked[id] {
			m.asked[id] = true
			if id != m.sel || first {
				m.marked[id] = true
			}
			ring = ring || !first
		}
	}
	if ring && m.opts.Bell != nil {
		_, _ = m.opts.Bell.Write([]byte{'\a'})
	}
	m.rebuild()
	if t := m.selected(); t != nil && m.tab == tabPane && t.ID == m.previewID && t.Tmux.Pane == m.previewPane {
		// Same pane: its transcript's writes bring new captures; a state
		// change alone does not change the screen.
		m.feed.follow(t.Transcript)
		return nil
	}
	return m.refreshPreview()
}

// rebuild recomputes the rows and keeps the selection on its task (or
// the nearest task row).
func (m *Model) rebuild() {
	if m.st == nil {
		return
	}
	m.rows, m.counts = Build(m.st, m.now, m.opts.Filter)
	if m.index(m.sel) < 0 {
		m.sel = ""
		for _, r := range m.rows {
			if r.Task != nil {
				m.sel = r.Task.ID
				break
			}
		}
	}
	delete(m.marked, m.sel)
	m.scrollToSelection()
}

// index returns the row of task id, or -1.
func (m *Model) index(id string) int {
	for i, r := range m.rows {
		if r.Task != nil && r.Task.ID == id {
			return i
		}
	}
	return -1
}

// selected returns the selected task, or nil.
func (m *Model) selected() *state.Task {
	if i := m.index(m.sel); i >= 0 {
		return m.rows[i].Task
	}
	return nil
}

// move moves the selection by d task rows.
func (m *Model) move(d int) tea.Cmd {
	i := m.index(m.sel)
	if i < 0 {
		return nil
	}
	for j := i + sign(d); j >= 0 && j < len(m.rows); j += sign(d) {
		if m.rows[j].Task == nil {
			continue
		}
		i = j
		if d -= sign(d); d == 0 {
			break
		}
	}
	return m.selectRow(i)
}

func (m *Model) selectRow(i int) tea.Cmd {
	if i < 0 || i >= len(m.rows) || m.rows[i].Task == nil || m.rows[i].Task.ID == m.sel {
		return nil
	}
	m.sel = m.rows[i].Task.ID
	delete(m.marked, m.sel)
	m.scrollToSelection()
	m.tab = tabPane
	return m.refreshPreview()
}

func sign(d int) int {
	if d < 0 {
		return -1
	}
	return 1
}

// scrollToSelection keeps the selected row (and its project header when
// it fits) inside the list's window.
func (m *Model) scrollToSelection() {
	h := m.listHeight()
	i := m.index(m.sel)
	if i < 0 || h <= 0 {
		m.top = 0
		return
	}
	if i < m.top {
		m.top = i
		if i > 0 && m.rows[i-1].Task == nil {
			m.top = i - 1
		}
	}
	if i >= m.top+h {
		m.top = i - h + 1
	}
	if last := len(m.rows) - h; m.top > last {
		m.top = max(last, 0)
	}
	if m.top < 0 {
		m.top = 0
	}
}

func (m *Model) actionDone(msg doneMsg) tea.Cmd {
	if msg.tab != tabPane {
		// diff and logs fill their tab.
		if msg.id == m.sel && msg.tab == m.tab {
			m.previewID = msg.id
			m.preview = msg.out
			if msg.err != nil {
				m.preview = msg.err.Error()
			}
		}
		return nil
	}
	if msg.err != nil {
		m.setStatus(true, "%s: %v", msg.what, msg.err)
		return nil
	}
	out := strings.TrimSpace(msg.out)
	if i := strings.IndexByte(out, '\n'); i >= 0 {
		out = out[:i]
	}
	if out == "" {
		out = "ok"
	}
	m.setStatus(false, "%s: %s", msg.what, out)
	return nil
}

func (m *Model) setStatus(isErr bool, format string, args ...any) {
	m.status, m.statusErr = fmt.Sprintf(format, args...), isErr
}
