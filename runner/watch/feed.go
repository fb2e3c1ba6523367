package watch

import (
	"context"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/fsnotify/fsnotify"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

// What wakes the view. Nothing here polls: the state directory and the
// selected pane's transcript are watched with fsnotify; the only timers
// are the one-second clock for the ages on screen and the reconciliation
// every ReconcileEvery (which reads /proc, and asks tmux only about tasks
// whose supervisor is gone).

// ReconcileEvery is how often the view reconciles the state with the
// live supervisors and panes (as `runner ps` does on every call), so a
// task whose supervisor died shows orphaned or failed without a command.
const ReconcileEvery = 30 * time.Second

// previewEvery is the least time between two captures of the selected
// pane: a busy pane's transcript grows many times a second, and one
// capture per 50 ms is smoother than the eye needs.
const previewEvery = 50 * time.Millisecond

type (
	// loadedMsg carries a fresh read of the state.
	loadedMsg struct {
		st  *state.State
		err error
	}
	// changedMsg says the state directory changed.
	changedMsg struct{}
	// paneMsg says the selected pane's transcript grew.
	paneMsg struct{}
	// previewMsg carries the selected pane's screen (or the diff/log
	// text of the other tabs).
	previewMsg struct {
		id, pane string
		tab      tab
		text     string
		err      error
	}
	// captureDueMsg fires when a capture held back by previewEvery may
	// run.
	captureDueMsg struct{}
	// clockMsg is the one-second clock.
	clockMsg time.Time
)

// feed owns the watches.
type feed struct {
	deps    Deps
	changes <-chan struct{}
	files   *fsnotify.Watcher // nil without inotify: the preview is polled
	watched string            // the transcript file watched now
}

func newFeed(ctx context.Context, d Deps) (*feed, error) {
	ch, err := d.Store.Watch(ctx)
	if err != nil {
		return nil, err
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		// No inotify left to this user (every supervisor holds one):
		// the preview is refreshed every panePoll instead.
		return &feed{deps: d, changes: ch}, nil
	}
	go func() { <-ctx.Done(); w.Close() }()
	return &feed{deps: d, changes: ch, files: w}, nil
}

// load reads the state; with reconcile, it first reconciles it.
func (f *feed) load(ctx context.Context, reconcile bool) tea.Cmd {
	return func() tea.Msg {
		if reconcile {
			st, err := f.deps.Reconcile(ctx)
			return loadedMsg{st: st, err: err}
		}
		st, err := f.deps.Store.Read(ctx)
		return loadedMsg{st: st, err: err}
	}
}

// nextChange waits for the next change of the state directory.
func (f *feed) nextChange() tea.Cmd {
	return func() tea.Msg {
		if _, ok := <-f.changes; !ok {
			return nil
		}
		return changedMsg{}
	}
}

// follow makes file (a transcript) the one watched; "" stops watching.
func (f *feed) follow(file string) {
	if file == f.watched {
		return
	}
	if f.files == nil {
		f.watched = file
		return
	}
	if f.watched != "" {
		_ = f.files.Remove(f.watched)
	}
	f.watched = ""
	if file != "" && f.files.Add(file) == nil {
		f.watched = file
	}
}

// panePoll is how often the preview is refreshed without inotify.
const panePoll = 500 * time.Millisecond

// nextPaneEvent waits for the watched transcript to be written.
func (f *feed) nextPaneEvent() tea.Cmd {
	if f.files == nil {
		return tea.Tick(panePoll, func(time.Time) tea.Msg { return paneMsg{} })
	}
	return func() tea.Msg {
		for {
			select {
			case ev, ok := <-f.files.Events:
				if !ok {
					return nil
				}
				if ev.Has(fsnotify.Write) || ev.Has(fsnotify.Create) {
					return paneMsg{}
				}
			case _, ok := <-f.files.Errors:
				if !ok {
					return nil
				}
			}
		}
	}
}

// capture reads the screen of t's pane (here or on its host), colours
// kept.
func (f *feed) capture(ctx context.Context, t *state.Task) tea.Cmd {
	id, pane := t.ID, t.Tmux.Pane
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		tc, err := f.deps.Panes.Screen(ctx, t)
		if err != nil {
			return previewMsg{id: id, pane: pane, tab: tabPane, err: err}
		}
		s, err := tc.Capture(ctx, pane, tmuxctl.CaptureOptions{Escapes: true})
		return previewMsg{id: id, pane: pane, tab: tabPane, text: s, err: err}
	}
}

// nextTick wakes the view when the next age on screen changes, at most
// every 10 s (a "4m" may show up to 10 s late: without the floor, 50
// rows whose minutes turn at 50 different instants would wake the view
// 50 times a minute) and at least every ReconcileEvery.
func nextTick(now time.Time, rows []Row) tea.Cmd {
	next := ReconcileEvery
	for _, r := range rows {
		if r.Task != nil {
			next = min(next, untilAgeChanges(now.Sub(r.Since)))
		}
	}
	return tea.Tick(max(next, 10*time.Second), func(t time.Time) tea.Msg { return clockMsg(t) })
}

// untilAgeChanges is how long until the age shown for d (see age)
// changes.
func untilAgeChanges(d time.Duration) time.Duration {
	unit := time.Minute
	switch {
	case d >= 48*time.Hour:
		unit = 24 * time.Hour
	case d >= time.Hour:
		unit = time.Hour
	}
	if d < 0 {
		return time.Second
	}
	return unit - d%unit + time.Millisecond
}
