package watch

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// refreshPreview follows the selected task's transcript and refreshes
// the preview's tab.
func (m *Model) refreshPreview() tea.Cmd {
	t := m.selected()
	if t == nil {
		m.feed.follow("")
		m.preview, m.previewID = "", ""
		return nil
	}
	if m.previewID != t.ID {
		m.preview, m.previewID, m.previewPane = "", t.ID, ""
	}
	if m.tab != tabPane {
		m.feed.follow("")
		return nil
	}
	m.feed.follow(t.Transcript)
	return m.requestCapture()
}

// requestCapture captures the selected pane now, or once previewEvery
// has passed since the last one.
func (m *Model) requestCapture() tea.Cmd {
	t := m.selected()
	if t == nil || m.tab != tabPane || t.Tmux.Pane == "" {
		return nil
	}
	if m.capturing {
		m.captureDue = true // once this capture is back
		return nil
	}
	if m.captureDue {
		return nil // a tick is on its way
	}
	if wait := previewEvery - m.clock().Sub(m.lastCapture); wait > 0 {
		m.captureDue = true
		return tea.Tick(wait, func(time.Time) tea.Msg { return captureDueMsg{} })
	}
	m.capturing, m.lastCapture = true, m.clock()
	return m.feed.capture(m.ctx, t)
}

func (m *Model) previewed(msg previewMsg) tea.Cmd {
	if msg.tab == tabPane {
		m.capturing = false
	}
	if msg.id == m.previewID && msg.tab == m.tab {
		if msg.err != nil {
			m.preview = "(" + msg.err.Error() + ")"
		} else {
			m.preview, m.previewPane = msg.text, msg.pane
		}
	}
	if m.captureDue && msg.tab == tabPane {
		m.captureDue = false
		return m.requestCapture()
	}
	return nil
}
