package watch

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// age is textutil.Age with everything under a minute shown as "<1m": a
// live view needs no seconds, and ticking them would redraw every young
// row once a second.
func age(now, since time.Time) string {
	if d := now.Sub(since); d >= 0 && d < time.Minute {
		return "<1m"
	}
	return textutil.Age(now, since)
}

// wideFrom is the width from which the list and the preview stand side
// by side; below it the preview goes under the list.
const wideFrom = 150

// glyphs read without colour; each is one column wide.
var glyphs = map[state.Status]string{
	state.StatusQueued:     "·",
	state.StatusStarting:   "◐",
	state.StatusReady:      "◇",
	state.StatusRunning:    "▶",
	state.StatusNeedsInput: "?",
	state.StatusDone:       "✓",
	state.StatusFailed:     "✗",
	state.StatusTimeout:    "◷",
	state.StatusCancelled:  "⊘",
	state.StatusExited:     "■",
	state.StatusOrphaned:   "◌",
	state.StatusLimited:    "‖",
}

// order of the statuses in the summary line.
var statusOrder = []state.Status{
	state.StatusNeedsInput, state.StatusLimited, state.StatusRunning, state.StatusStarting, state.StatusReady, state.StatusQueued,
	state.StatusOrphaned, state.StatusDone, state.StatusFailed, state.StatusTimeout, state.StatusCancelled, state.StatusExited,
}

var (
	colours = map[state.Status]color.Color{
		state.StatusQueued: lipgloss.Color("8"), state.StatusStarting: lipgloss.Color("6"), state.StatusReady: lipgloss.Color("6"), state.StatusRunning: lipgloss.Color("4"),
		state.StatusNeedsInput: lipgloss.Color("3"), state.StatusDone: lipgloss.Color("2"), state.StatusFailed: lipgloss.Color("1"), state.StatusTimeout: lipgloss.Color("1"),
		state.StatusCancelled: lipgloss.Color("8"), state.StatusExited: lipgloss.Color("1"), state.StatusOrphaned: lipgloss.Color("5"),
		state.StatusLimited: lipgloss.Color("3"),
	}
	styleHeader = lipgloss.NewStyle().Bold(true)
	styleFaint  = lipgloss.NewStyle().Faint(true)
	styleSel    = lipgloss.NewStyle().Reverse(true)
	styleMark   = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("3"))
	styleErr    = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	styleTitle  = lipgloss.NewStyle().Bold(true)
)

func statusStyle(s state.Status) lipgloss.Style {
	st := lipgloss.NewStyle().Foreground(colours[s])
	if s == state.StatusNeedsInput {
		st = st.Bold(true)
	}
	return st
}

// View draws the screen, on the alternate screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	return v
}

// render draws the screen's text.
func (m *Model) render() string {
	if m.w <= 0 || m.h <= 0 {
		return ""
	}
	lines := []string{m.summaryLine()}
	body := m.h - 2
	switch {
	case m.mode == modeHelp:
		lines = append(lines, fit(helpLines(), m.w, body)...)
	case m.w >= wideFrom:
		lw := m.w * 45 / 100
		left := fit(m.listLines(lw), lw, body)
		right := m.previewLines(m.w-lw-1, body)
		for i := range body {
			lines = append(lines, left[i]+"│"+right[i])
		}
	default:
		lh := m.listHeight()
		lines = append(lines, fit(m.listLines(m.w), m.w, lh)...)
		lines = append(lines, m.previewLines(m.w, body-lh)...)
	}
	lines = append(lines, m.bottomLine())
	return strings.Join(lines, "\n")
}

// listHeight is the number of list rows on screen.
func (m *Model) listHeight() int {
	body := m.h - 2
	if m.w >= wideFrom {
		return body
	}
	return max(body*9/20, min(body, 3))
}

// summaryLine: counts per status, the filter, the help key.
func (m *Model) summaryLine() string {
	var parts []string
	total := 0
	for _, s := range statusOrder {
		if n := m.counts[s]; n > 0 {
			total += n
			parts = append(parts, statusStyle(s).Render(fmt.Sprintf("%s %d %s", glyphs[s], n, s)))
		}
	}
	left := styleTitle.Render("runner watch") + "  "
	switch {
	case m.err != nil:
		left += styleErr.Render("state: " + m.err.Error())
	case !m.loaded:
		left += "loading…"
	case total == 0:
		left += "no tasks"
	default:
		left += strings.Join(parts, "  ")
	}
	right := "? help"
	if f := m.opts.Filter.Text; f != "" {
		right = "filter /" + f + "  " + right
	}
	return spread(left, right, m.w)
}

// listLines renders every row at width w, scrolled so the selection shows.
func (m *Model) listLines(w int) []string {
	h := m.listHeight()
	var out []string
	if len(m.rows) == 0 && m.loaded {
		msg := "no tasks: start one with n, or 'runner dispatch PROJECT TASK'"
		if m.opts.Filter.Text != "" {
			msg = "no task matches /" + m.opts.Filter.Text + " (esc clears the filter)"
		}
		return []string{styleFaint.Render(ansi.Truncate(msg, w, "…"))}
	}
	for i := m.top; i < len(m.rows) && len(out) < h; i++ {
		out = append(out, m.rowLines(m.rows[i], w)...)
	}
	return out
}

// rowLines renders one row: a project header or a task (with its
// question on a second line when needs_input and there is room).
func (m *Model) rowLines(r Row, w int) []string {
	if r.Group != "" {
		return []string{m.groupLine(r, w)}
	}
	if r.Task == nil {
		if r.Project == r.Dir { // a bare directory: its path is its name
			return []string{ansi.Truncate(styleHeader.Render(shortDir(r.Dir)), w, "…")}
		}
		return []string{ansi.Truncate(styleHeader.Render(r.Project)+"  "+styleFaint.Render(shortDir(r.Dir)), w, "…")}
	}
	t := r.Task
	cursor := " "
	switch {
	case t.ID == m.sel:
		cursor = "›"
	case m.marked[t.ID]:
		cursor = styleMark.Render("!")
	}
	indent := ""
	if r.Depth > 0 {
		indent = strings.Repeat("  ", r.Depth-1) + "└ "
	}
	agentW := 8
	head := fmt.Sprintf("%s %s%s %-9s %-11s %4s %-*s ", cursor, indent, glyphs[t.Status], t.ID, t.Status,
		age(m.now, r.Since), agentW, textutil.ClipRunes(t.Agent, agentW))
	// Task texts, questions and summaries come from agents: no control
	// sequence of theirs reaches the terminal (textutil.VisibleLine).
	rest := textutil.VisibleLine(textutil.FirstLine(t.Text))
	switch {
	case t.Status == state.StatusNeedsInput && t.Question != "":
		rest += " · asks: " + textutil.VisibleLine(textutil.FirstLine(t.Question))
	case r.Summary != "":
		rest += " · " + textutil.VisibleLine(r.Summary)
	}
	if t.Branch != "" {
		rest += " [" + textutil.VisibleLine(t.Branch) + "]"
	}
	if sp := t.SpendSoFar(); sp.Known() {
		// What its turns used, the running one's so far too, in tokens
		// ("+": some turns unknown).
		rest = "Σ" + sp.Short() + " " + rest
	}
	if r.Queue > 0 {
		rest = fmt.Sprintf("✉%d ", r.Queue) + rest
	}
	if len(t.Overlaps) > 0 {
		// Another task changed some of this one's files.
		rest = overlapMark(t) + " " + rest
	}
	line := ansi.Truncate(head+rest, w, "…")
	switch {
	case t.ID == m.sel:
		line = styleSel.Render(pad(line, w))
	case t.Status.IsTerminal():
		line = styleFaint.Render(line)
	default:
		// colour the glyph and status only
		line = strings.Replace(line, glyphs[t.Status]+" "+t.ID, statusStyle(t.Status).Render(glyphs[t.Status])+" "+t.ID, 1)
	}
	return []string{line}
}

// groupLine renders a group's row: collapsed (selectable, its first
// candidate standing for it) or the header of its expanded candidates.
func (m *Model) groupLine(r Row, w int) string {
	n := map[state.Status]int{}
	for _, t := range r.Members {
		n[t.Status]++
	}
	var counts []string
	for _, st := range []state.Status{state.StatusDone, state.StatusRunning, state.StatusStarting, state.StatusNeedsInput, state.StatusFailed, state.StatusExited, state.StatusTimeout, state.StatusCancelled} {
		if n[st] > 0 {
			counts = append(counts, fmt.Sprintf("%s%d", glyphs[st], n[st]))
		}
	}
	text := textutil.VisibleLine(textutil.FirstLine(r.Members[0].Text))
	body := fmt.Sprintf("%s %d candidates %s · %s", r.Group, len(r.Members), strings.Join(counts, " "), text)
	if r.Task == nil {
		return ansi.Truncate(styleHeader.Render("  ▾ "+body), w, "…")
	}
	cursor := " "
	if r.Task.ID == m.sel {
		cursor = "›"
	}
	line := ansi.Truncate(cursor+" ▸ "+body+"  (e: each candidate)", w, "…")
	if r.Task.ID == m.sel {
		return styleSel.Render(pad(line, w))
	}
	return line
}

// overlapMark marks a task whose files another task changed too: "⚠" and
// the other task, or the count of them.
func overlapMark(t *state.Task) string {
	if len(t.Overlaps) == 1 {
		return "⚠" + t.Overlaps[0].Task
	}
	return fmt.Sprintf("⚠%d tasks", len(t.Overlaps))
}

// previewLines renders the preview: a title with the tabs, then the
// selected pane's screen (its bottom), the diff (its top) or the log
// (its end), h lines of width w in all.
func (m *Model) previewLines(w, h int) []string {
	if h <= 0 {
		return nil
	}
	t := m.selected()
	title := "─ no task selected "
	if t != nil {
		where := ""
		if m.tab == tabPane && t.Tmux.Pane != "" {
			where = " " + t.Tmux.Pane
		}
		title = fmt.Sprintf("─ %s · %s%s ", t.ID, m.tab, where)
	}
	tabs := " p pane · d diff · l logs ─"
	title = styleTitle.Render(title) + strings.Repeat("─", max(w-ansi.StringWidth(title)-ansi.StringWidth(tabs), 0)) + tabs
	out := []string{ansi.Truncate(title, w, "")}
	body := m.previewBody(t)
	if t != nil && (m.tab != tabPane || m.previewID != t.ID || m.preview == "") {
		// Only tmux's rendering of a pane (colours) keeps its escapes; a
		// diff, a log or a record is text from the agent.
		body = textutil.Visible(body)
	}
	lines := strings.Split(body, "\n")
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1] // a screen's empty bottom, escapes or not
	}
	switch m.tab {
	case tabDiff:
		if len(lines) > h-1 {
			lines = lines[:h-1]
		}
	default:
		if len(lines) > h-1 {
			lines = lines[len(lines)-(h-1):]
		}
	}
	for _, l := range lines {
		if m.opts.NoColor {
			l = ansi.Strip(l)
		}
		l = ansi.Truncate(strings.TrimRight(l, " "), w, "")
		if strings.Contains(l, "\x1b") {
			l += "\x1b[0m"
		}
		out = append(out, l)
	}
	return fit(out, w, h)
}

// previewBody is the text the preview shows for t.
func (m *Model) previewBody(t *state.Task) string {
	if t == nil {
		return ""
	}
	if m.previewID == t.ID && m.preview != "" {
		return m.preview
	}
	if m.tab == tabPane && t.Tmux.Pane != "" {
		return "(capturing " + t.Tmux.Pane + "…)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", t.ID, t.Status)
	if n := len(t.History); n > 0 && t.History[n-1].Reason != "" {
		fmt.Fprintf(&b, ": %s", t.History[n-1].Reason)
	}
	b.WriteString("\n(no pane)\n")
	if t.Answer != "" {
		b.WriteString("\n" + t.Answer)
	} else if t.ResultTail != "" {
		b.WriteString("\n" + t.ResultTail)
	}
	return b.String()
}

// bottomLine: the input being typed, a question, the last action's
// outcome, or the keys.
func (m *Model) bottomLine() string {
	switch {
	case m.mode == modeInput:
		return ansi.Truncate(m.asking[len(m.answers)]+m.input.View(), m.w, "")
	case m.status != "":
		s := ansi.Truncate(textutil.VisibleLine(m.status), m.w, "…")
		if m.statusErr {
			return styleErr.Render(s)
		}
		return s
	}
	return styleFaint.Render(ansi.Truncate("↑↓ select  ⏎ attach  s send  m msg  c cancel  K kill  d diff  l logs  n new  / filter  ? help  q quit", m.w, "…"))
}

func helpLines() []string {
	return []string{
		"",
		"  ↑ ↓  j k     select a task (pgup pgdown home end too)",
		"  enter        attach to its pane (inside runner's tmux: switch to it;",
		"               otherwise tmux attach here, and back when you detach)",
		"  s            send a follow-up prompt (runner send --detach)",
		"  m            message it (runner msg)",
		"  c            cancel it (runner cancel), K kill it (runner cancel --kill)",
		"  d  l  p tab  the preview: its diff, its log, its pane; tab cycles",
		"  n            new dispatch: project, agent and task asked in turn",
		"  e            a group (dispatch --agents): one row, or each candidate",
		"  /            filter (id, project, agent, status, text); esc clears",
		"  r            reload and reconcile now",
		"  q  ctrl-c    quit",
		"",
		"  ! marks a task that asked a question you have not looked at yet;",
		"  the terminal bell rings once when a task starts asking.",
		"",
		"  any key closes this help",
	}
}

// fit makes lines exactly h lines of width at most w, padding with
// blanks to w (so columns join).
func fit(lines []string, w, h int) []string {
	out := make([]string, h)
	for i := range h {
		l := ""
		if i < len(lines) {
			l = ansi.Truncate(lines[i], w, "")
		}
		out[i] = pad(l, w)
	}
	return out
}

func pad(s string, w int) string {
	if n := w - ansi.StringWidth(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// spread puts left and right on one line of width w.
func spread(left, right string, w int) string {
	gap := w - ansi.StringWidth(left) - ansi.StringWidth(right)
	if gap < 2 {
		return ansi.Truncate(left, w, "…")
	}
	return left + strings.Repeat(" ", gap) + right
}

// shortDir writes $HOME as ~.
func shortDir(dir string) string {
	if home, err := filepath.Abs(homeDir()); err == nil && home != "/" && home != "" {
		if rel, err := filepath.Rel(home, dir); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return dir
}
