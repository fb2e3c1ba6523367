package agentsim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/runner-cli/runner/internal/ctxtime"
	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/textutil"
)

// ErrInterrupted is returned by a turn the user interrupted (Escape or C-c).
var ErrInterrupted = errors.New("interrupted")

// turnUI is what a turn needs from its front end (TUI or headless).
type turnUI interface {
	// line shows one answer line.
	line(s string)
	// silent switches the busy indicator off (true) and on again (false).
	silent(on bool)
	// ask shows question with a Yes/No menu and returns the answer.
	ask(ctx context.Context, question string) (yes bool, err error)
	// confirm shows question with "[y] Yes   [n] No" (no numbers, no
	// cursor: the y or n key answers) and returns the answer.
	confirm(ctx context.Context, question string) (yes bool, err error)
}

// turnEnd says how a turn ended when it did not simply finish.
type turnEnd struct {
	exit  bool // exit N: leave with code
	code  int
	crash bool // crash: print the panic text, leave with code 2
	// answer is the turn's answer lines, for the hook's
	// last_assistant_message.
	answer string
	// noHook: the turn's Stop hook does not run (hook none, or it ran
	// already: hook early); hookDelay delays it (hook late).
	noHook    bool
	hookDelay time.Duration
	// usage sums the turn's usage directives (nil: none).
	usage *Usage
}

// turnStartHook, when set (by tests, for fault injection), is called with
// the prompt at the start of every turn, in the turn's goroutine.
var turnStartHook func(prompt string)

// executor runs the directives of one prompt.
type executor struct {
	dir string   // cwd for write and run
	env []string // environment for run
	// hook runs the hook with an event of the given name and answer
	// (nil: no hook configured).
	hook func(ctx context.Context, prompt, event, answer string, usage *Usage) error
	// context runs the context hook after a tool and returns what it
	// adds to the turn (nil: none configured).
	context func(ctx context.Context, prompt string) string
	// session is the file of the conversation's earlier prompts (recall);
	// empty in headless mode.
	session string
}

// runTurn runs every line of prompt in order. It returns ErrInterrupted (or
// the context's error) when ctx ends first.
func (x *executor) runTurn(ctx context.Context, prompt string, ui turnUI) (turnEnd, error) {
	if turnStartHook != nil {
		turnStartHook(prompt)
	}
	rec := &answerUI{turnUI: ui}
	var st turnState
	for _, line := range strings.Split(prompt, "\n") {
		if err := ctx.Err(); err != nil {
			return turnEnd{}, err
		}
		done, err := x.directive(ctx, parseLine(line), prompt, rec, &st)
		if err != nil {
			return turnEnd{}, err
		}
		if done {
			return st.end, nil
		}
	}
	end := st.end
	end.answer = strings.Join(rec.lines, "\n")
	if x.hook != nil && !end.noHook && end.hookDelay == 0 {
		// Like Claude Code, the Stop hook runs before the prompt comes
		// back (while the turn still shows busy); with hook early D the
		// agent then stays busy for D more.
		if err := x.hook(ctx, prompt, "Stop", end.answer, end.usage); err != nil {
			rec.line("⚠ " + err.Error())
		}
		end.noHook = true
		if err := ctxtime.Sleep(ctx, st.early); err != nil {
			return turnEnd{}, err
		}
	}
	return end, nil
}

// turnState is what a turn's directives leave for its end.
type turnState struct {
	end   turnEnd       // exit, crash, and the hook settings
	early time.Duration // hook early D: busy for D after the Stop hook
	acked bool          // a "Done: …" line was shown
}

// directive runs one line of a turn's prompt; done says the turn ends
// there (exit, crash: st.end says how).
func (x *executor) directive(ctx context.Context, d directive, prompt string, ui turnUI, st *turnState) (done bool, err error) {
	switch d.kind {
	case dirBlank:
	case dirOther:
		if !st.acked {
			ui.line("Done: " + strings.TrimSuffix(d.text, "\r"))
			st.acked = true
		}
	case dirSleep:
		if err := ctxtime.Sleep(ctx, d.dur); err != nil {
			return false, err
		}
	case dirSilent:
		return false, silentFor(ctx, ui, d.dur)
	case dirSay:
		ui.line(d.text)
	case dirWrite:
		ui.line(x.write(d.path, d.text))
		x.afterTool(ctx, prompt, ui)
	case dirAsk:
		return false, askAndShow(ctx, ui, d.text)
	case dirConfirm:
		yes, err := ui.confirm(ctx, d.text)
		if err == nil {
			ui.line("confirmed: " + map[bool]string{true: "yes", false: "no"}[yes])
		}
		return false, err
	case dirRun:
		err := x.runShowing(ctx, ui, d.argv)
		if err == nil {
			x.afterTool(ctx, prompt, ui)
		}
		return false, err
	case dirExit:
		st.end = turnEnd{exit: true, code: d.code}
		return true, nil
	case dirCrash:
		st.end = turnEnd{crash: true}
		return true, nil
	case dirHook:
		x.hookDirective(ctx, d, prompt, ui, st)
	case dirLimit:
		// A provider's usage limit ends the turn: its words, no hook
		// (the rest of the prompt is not done).
		ui.line(d.text)
		st.end.noHook = true
		return true, nil
	case dirUsage:
		x.addUsage(ctx, d, prompt, ui, st)
	case dirRecall:
		for _, l := range x.recall(prompt) {
			ui.line(l)
		}
	}
	return false, nil
}

// silentFor sleeps d with the busy indicator off (silent D).
func silentFor(ctx context.Context, ui turnUI, d time.Duration) error {
	ui.silent(true)
	err := ctxtime.Sleep(ctx, d)
	ui.silent(false)
	return err
}

// askAndShow shows question with its menu and then the answer (ask
// QUESTION).
func askAndShow(ctx context.Context, ui turnUI, question string) error {
	yes, err := ui.ask(ctx, question)
	if err != nil {
		return err
	}
	if yes {
		ui.line("answered: yes")
	} else {
		ui.line("answered: no")
	}
	return nil
}

// runShowing runs argv and shows its output, then its error if it
// failed (run ARG...); only the end of ctx is an error of the turn.
func (x *executor) runShowing(ctx context.Context, ui turnUI, argv []string) error {
	out, err := x.run(ctx, argv)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for _, l := range out {
		ui.line(l)
	}
	if err != nil {
		ui.line(err.Error())
	}
	return nil
}

// afterTool runs the context hook after a tool and shows what it adds.
func (x *executor) afterTool(ctx context.Context, prompt string, ui turnUI) {
	if x.context != nil {
		showContext(ui, x.context(ctx, prompt))
	}
}

// hookDirective runs hook subagent at once, or notes for the turn's end
// what hook none, early and late ask of its Stop hook.
func (x *executor) hookDirective(ctx context.Context, d directive, prompt string, ui turnUI, st *turnState) {
	switch d.text {
	case "subagent":
		// A sub-agent ends inside the turn: its own event, with its
		// own answer, while the turn goes on.
		if x.hook != nil {
			if err := x.hook(ctx, prompt, "SubagentStop", "sub-agent answer", nil); err != nil {
				ui.line("⚠ " + err.Error())
			}
		}
	case "none":
		st.end.noHook = true
	case "early":
		st.early = d.dur
	case "late":
		st.end.hookDelay = d.dur
	}
}

// addUsage adds a usage directive to the turn's sum and hands the hook
// what the turn used so far, while it goes on (as a CLI's record grows
// with each model request).
func (x *executor) addUsage(ctx context.Context, d directive, prompt string, ui turnUI, st *turnState) {
	if st.end.usage == nil {
		st.end.usage = &Usage{}
	}
	st.end.usage.add(d)
	if x.hook != nil {
		sofar := *st.end.usage
		if err := x.hook(ctx, prompt, "Usage", "", &sofar); err != nil {
			ui.line("⚠ " + err.Error())
		}
	}
}

// answerUI keeps the answer lines a turn shows.
type answerUI struct {
	turnUI
	lines []string
}

func (a *answerUI) line(s string) {
	a.lines = append(a.lines, s)
	a.turnUI.line(s)
}

// recall answers with the first line of every earlier prompt of the
// session, so a test can tell a resumed conversation from a new one.
func (x *executor) recall(current string) []string {
	b, err := os.ReadFile(x.session)
	if err != nil && !errors.Is(err, os.ErrNotExist) || x.session == "" {
		return []string{"Recall: no session"}
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l != "" && l != textutil.FirstLine(current) {
			out = append(out, "Recall: "+l)
		}
	}
	if len(out) == 0 {
		return []string{"Recall: nothing earlier"}
	}
	return out
}

// remember appends the prompt's first line to the session file.
func (x *executor) remember(prompt string) error {
	if x.session == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(x.session), 0o700); err != nil {
		return fmt.Errorf("session file: %w", err)
	}
	f, err := os.OpenFile(x.session, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("session file: %w", err)
	}
	_, err = f.WriteString(textutil.FirstLine(prompt) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session file %s: %w", x.session, err)
	}
	return nil
}

// write writes text and a newline to path (relative paths resolve against
// the executor's dir), creating directories, and returns the answer line.
func (x *executor) write(path, text string) string {
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(x.dir, p)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Sprintf("write %s: %v", path, err)
	}
	if err := os.WriteFile(p, []byte(text+"\n"), 0o644); err != nil {
		return fmt.Sprintf("write %s: %v", path, err)
	}
	return "Wrote " + path
}

// run runs argv (no shell) in the executor's dir and environment and returns
// its combined output as lines. A non-zero exit gives an error "exit status
// N"; a program that cannot start gives an error naming it.
func (x *executor) run(ctx context.Context, argv []string) ([]string, error) {
	cmd := subproc.Command(ctx, argv[0], argv[1:]...)
	cmd.Dir = x.dir
	cmd.Env = x.env
	cmd.WaitDelay = time.Second
	out, err := cmd.CombinedOutput()
	lines := outputLines(out)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return lines, nil
	case errors.As(err, &ee) && ee.Exited():
		return lines, fmt.Errorf("exit status %d", ee.ExitCode())
	default:
		return lines, fmt.Errorf("run %s: %v", argv[0], err)
	}
}

// outputLines splits program output into display lines.
func outputLines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// crashText is what `crash` prints, shaped like a Go panic.
const crashText = `panic: simulated crash

goroutine 1 [running]:
main.main()
	/runner/agentsim/sim.go:1 +0x1d`
