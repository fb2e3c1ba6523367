package watch

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/runner-cli/runner/state"
)

// key handles a key press in the current mode.
func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if k.String() == "ctrl+c" {
		return m, tea.Quit
	}
	switch m.mode {
	case modeHelp:
		m.mode = modeList
		return m, nil
	case modeConfirm:
		m.mode = modeList
		if k.String() == "y" || k.String() == "Y" {
			return m, m.confirm()
		}
		m.setStatus(false, "not done")
		return m, nil
	case modeInput:
		return m, m.inputKey(k)
	}
	return m, m.listKey(k)
}

// listKey is a key of the list.
func (m *Model) listKey(k tea.KeyPressMsg) tea.Cmd {
	t := m.selected()
	switch k.String() {
	case "q":
		return tea.Quit
	case "up", "k":
		return m.move(-1)
	case "down", "j":
		return m.move(1)
	case "pgup":
		return m.move(-max(m.listHeight()-1, 1))
	case "pgdown", "space":
		return m.move(max(m.listHeight()-1, 1))
	case "home", "g":
		return m.move(-len(m.rows))
	case "end", "G":
		return m.move(len(m.rows))
	case "?":
		m.mode = modeHelp
		return nil
	case "/":
		cmd := m.ask([]string{"filter: "}, []string{m.opts.Filter.Text}, func(a []string) tea.Cmd {
			m.setFilter(a[0])
			return m.refreshPreview()
		})
		m.filtering = true // live as the user types; empty is an answer
		return cmd
	case "esc":
		if m.opts.Filter.Text != "" {
			m.setFilter("")
			return m.refreshPreview()
		}
		m.status = ""
		return nil
	case "r":
		m.setStatus(false, "reloaded")
		return m.feed.load(m.ctx, true)
	case "n":
		return m.newDispatch(t)
	case "tab", "p":
		m.tab = (m.tab + 1) % 3
		if k.String() == "p" {
			m.tab = tabPane
		}
		return m.showTab(t)
	}
	if t == nil {
		return nil
	}
	return m.taskKey(k, t)
}

// taskKey is a key that acts on the selected task t.
func (m *Model) taskKey(k tea.KeyPressMsg, t *state.Task) tea.Cmd {
	switch k.String() {
	case "e":
		if t.Group == "" {
			m.setStatus(true, "%s is not a candidate of a group", t.ID)
			return nil
		}
		if m.opts.Filter.Expanded == nil {
			m.opts.Filter.Expanded = map[string]bool{}
		}
		m.opts.Filter.Expanded[t.Group] = !m.opts.Filter.Expanded[t.Group]
		m.rebuild()
		return nil
	case "enter":
		if t.Tmux.Pane == "" {
			m.setStatus(true, "attach %s: it has no pane (%s)", t.ID, t.Status)
			return nil
		}
		return attach(m.ctx, m.opts.Deps, m.opts.Getenv, t)
	case "d":
		m.tab = toggle(m.tab, tabDiff)
		return m.showTab(t)
	case "l":
		m.tab = toggle(m.tab, tabLogs)
		return m.showTab(t)
	case "s":
		id := t.ID
		return m.ask([]string{"send to " + id + ": "}, nil, func(a []string) tea.Cmd {
			return m.act("send "+id, "send", "--detach", "--", id, a[0])
		})
	case "m":
		id := t.ID
		return m.ask([]string{"message to " + id + ": "}, nil, func(a []string) tea.Cmd {
			return m.act("msg "+id, "msg", "--", id, a[0])
		})
	case "c":
		id := t.ID
		return m.ask2("cancel "+id+"? (y/n)", func() tea.Cmd { return m.act("cancel "+id, "cancel", id) })
	case "K":
		id := t.ID
		return m.ask2("kill "+id+" (close its window, end its processes)? (y/n)", func() tea.Cmd {
			return m.act("kill "+id, "cancel", "--kill", id)
		})
	}
	return nil
}

func toggle(cur, t tab) tab {
	if cur == t {
		return tabPane
	}
	return t
}

// showTab fills the preview's tab for t.
func (m *Model) showTab(t *state.Task) tea.Cmd {
	if t == nil {
		return nil
	}
	m.preview, m.previewID = "", t.ID
	switch m.tab {
	case tabDiff:
		m.preview = "(running runner diff " + t.ID + ")"
		return run(m.ctx, m.opts.Exe, "diff "+t.ID, tabDiff, t.ID, "diff", t.ID)
	case tabLogs:
		m.preview = "(running runner logs " + t.ID + ")"
		return run(m.ctx, m.opts.Exe, "logs "+t.ID, tabLogs, t.ID, "logs", t.ID)
	}
	return m.refreshPreview()
}

// act runs `runner ARGS…` as an action reported in the status line.
func (m *Model) act(what string, args ...string) tea.Cmd {
	m.setStatus(false, "%s…", what)
	return run(m.ctx, m.opts.Exe, what, tabPane, "", args...)
}

// newDispatch asks for the project, the agent and the task, the first
// two filled in from the selected task, and dispatches detached.
func (m *Model) newDispatch(t *state.Task) tea.Cmd {
	var project, agent string
	if t != nil {
		project, agent = t.Project, t.Agent
		if project == "" {
			project = t.Dir
		}
	}
	return m.ask([]string{"project: ", "agent: ", "task: "}, []string{project, agent, ""}, func(a []string) tea.Cmd {
		args := []string{"dispatch", "--detach"}
		if a[1] != "" {
			args = append(args, "--agent", a[1])
		}
		args = append(args, "--", a[0], a[2])
		return m.act("dispatch "+a[0], args...)
	})
}

// ask starts an input of len(prompts) steps; done gets the answers.
func (m *Model) ask(prompts, defaults []string, done func([]string) tea.Cmd) tea.Cmd {
	m.mode, m.asking, m.answers, m.onInput, m.filtering = modeInput, prompts, nil, done, false
	m.input.Reset()
	if len(defaults) > 0 {
		m.input.SetValue(defaults[0])
		m.input.CursorEnd()
	}
	m.defaults = defaults
	return m.input.Focus()
}

// ask2 asks a yes/no question; yes runs do.
func (m *Model) ask2(question string, do func() tea.Cmd) tea.Cmd {
	m.mode, m.confirm = modeConfirm, do
	m.setStatus(false, "%s", question)
	return nil
}

// inputKey is a key while typing.
func (m *Model) inputKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "esc":
		m.mode = modeList
		m.input.Blur()
		m.setStatus(false, "not done")
		return nil
	case "enter":
		v := m.input.Value()
		step := len(m.answers)
		if strings.TrimSpace(v) == "" && !m.filtering {
			m.setStatus(true, "%sempty: not done", m.asking[step])
			m.mode = modeList
			return nil
		}
		m.answers = append(m.answers, v)
		if len(m.answers) < len(m.asking) {
			m.input.Reset()
			if len(m.defaults) > len(m.answers) {
				m.input.SetValue(m.defaults[len(m.answers)])
				m.input.CursorEnd()
			}
			return nil
		}
		m.mode = modeList
		m.input.Blur()
		return m.onInput(m.answers)
	}
	m.input.Update(k)
	if m.filtering {
		m.setFilter(m.input.Value()) // live, as the user types
	}
	return nil
}

func (m *Model) setFilter(s string) {
	m.opts.Filter.Text = s
	m.rebuild()
}
