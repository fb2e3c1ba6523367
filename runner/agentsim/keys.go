// The simulated agent's keys: at its prompt, in a menu, during a turn.

package agentsim

import (
	"context"
	"time"

	"github.com/runner-cli/runner/internal/clock"
)

// key handles one input event.
func (s *sim) key(k key) *exitNow {
	switch s.mode {
	case modeTrust:
		switch yes, ok := s.menuKey(k); {
		case !ok:
		case yes && s.held != "":
			p := s.held
			s.held = ""
			s.startTurn(p, nil)
		case yes:
			s.mode = modeReady
			s.draw()
		default:
			s.sc.update([]string{"Not trusted."}, nil)
			return &exitNow{1}
		}
	case modeAsk:
		if k.kind == keyCtrlC {
			s.interrupt()
			return nil
		}
		answer := s.menuKey
		if s.keyed {
			answer = confirmKey
		}
		if yes, ok := answer(k); ok {
			s.askReply <- yes // buffered
			s.askReply = nil
			s.mode = modeBusy
			s.sc.update([]string{displayText(s.question)}, s.liveLines())
		}
	case modeBusy:
		if k.kind == keyEscape || k.kind == keyCtrlC {
			s.interrupt()
		}
	case modeReady:
		return s.readyKey(k)
	case modeBrowse:
		if k.kind == keyEscape {
			s.mode = modeReady
			s.draw()
		}
	}
	return nil
}

// confirmLine is a confirm's choices: no numbers, no cursor.
const confirmLine = "  [y] Yes   [n] No"

// confirmKey applies k to a confirm: y or n answers (either case),
// Escape is no; every other key, Enter and digits too, is dropped.
func confirmKey(k key) (yes, ok bool) {
	switch {
	case k.kind == keyText && (k.data[0] == 'y' || k.data[0] == 'Y'):
		return true, true
	case k.kind == keyText && (k.data[0] == 'n' || k.data[0] == 'N'), k.kind == keyEscape:
		return false, true
	}
	return false, false
}

// menuKey applies k to a Yes/No menu: ok reports an answer.
func (s *sim) menuKey(k key) (yes, ok bool) {
	switch k.kind {
	case keyText:
		switch k.data[0] {
		case '1':
			return true, true
		case '2':
			return false, true
		}
	case keyEnter:
		return s.sel == 0, true
	case keyEscape, keyCtrlC:
		return false, true
	case keyUp:
		s.sel = 0
		s.draw()
	case keyDown:
		s.sel = 1
		s.draw()
	}
	return false, false
}

func (s *sim) readyKey(k key) *exitNow {
	switch k.kind {
	case keyText, keyPaste:
		s.input = append(s.input, k.data...)
	case keyNewline:
		s.input = append(s.input, '\n')
	case keyBackspace:
		s.input = backspace(s.input)
	case keyCtrlU:
		s.input = s.input[:0]
	case keyCtrlD:
		if len(s.input) == 0 {
			return s.goodbye()
		}
	case keyCtrlC:
		if len(s.input) > 0 {
			s.input = s.input[:0]
			break
		}
		if now := clock.Now(); now.Sub(s.lastCtrlC) < ctrlCWindow {
			return s.goodbye()
		} else {
			s.lastCtrlC = now
			s.sc.print("Press Ctrl-C again to exit")
		}
	case keyEscape:
		if len(s.input) > 0 {
			return nil
		}
		// Twice at an empty prompt: the transcript browsing view, as
		// Codex has it (typing there is no turn).
		if now := clock.Now(); now.Sub(s.lastEscape) < ctrlCWindow {
			s.mode, s.lastEscape = modeBrowse, time.Time{}
		} else {
			s.lastEscape = now
			return nil
		}
	case keyEnter:
		if len(s.input) == 0 {
			break
		}
		s.submit(string(s.input))
		s.input = nil
		return nil
	default:
		return nil
	}
	s.draw()
	return nil
}

// goodbye leaves at the prompt: the resume hint, then exit 0.
func (s *sim) goodbye() *exitNow {
	s.sc.update([]string{ResumeHint(s.opts.SessionID)}, nil)
	return &exitNow{0}
}

// submit records prompt and starts its turn.
func (s *sim) submit(prompt string) {
	hist := []string{echoLine(prompt)}
	if err := appendRecord(s.opts.Record, prompt); err != nil {
		hist = append(hist, "⚠ "+displayText(err.Error()))
	}
	if err := s.exec.remember(prompt); err != nil {
		hist = append(hist, "⚠ "+displayText(err.Error()))
	}
	if s.trustLate {
		s.trustLate, s.held = false, prompt
		s.mode, s.sel = modeTrust, 0
		s.sc.update(hist, s.liveLines())
		return
	}
	s.startTurn(prompt, hist)
}

// startTurn starts the turn of prompt, printing hist above it.
func (s *sim) startTurn(prompt string, hist []string) {
	s.turnID++
	s.prompt = prompt
	if err := s.opts.transcriptPrompt(prompt); err != nil {
		s.sc.print("⚠ " + displayText(err.Error()))
	}
	s.mode, s.spin, s.silent = modeBusy, 0, false
	s.sc.update(hist, s.liveLines())
	s.ticker.Reset(spinnerEvery)
	ctx, cancel := context.WithCancel(s.ctx)
	s.turnCancel = cancel
	ui := &tuiTurn{id: s.turnID, ctx: ctx, msgs: s.msgs}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				ui.send(turnMsg{kind: msgPanic, panicked: p})
			}
		}()
		end, err := s.exec.runTurn(ctx, prompt, ui)
		ui.send(turnMsg{kind: msgDone, end: end, err: err})
	}()
}

// interrupt cancels the running turn and returns to the prompt box.
func (s *sim) interrupt() {
	s.turnCancel()
	s.turnCancel = nil
	s.ticker.Stop()
	s.turnID++ // messages of the old turn are ignored from now on
	s.askReply = nil
	s.mode, s.silent = modeReady, false
	s.sc.update([]string{"Interrupted."}, s.liveLines())
}
