// Running a shadow: the agent's CLI headless in the target's folder, its
// prompt (the target's transcript and the question), and bounded output.

package ask

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/runner-cli/runner/internal/subproc"
	"github.com/runner-cli/runner/internal/tailfile"
	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/runner/door"
	"github.com/runner-cli/runner/runner/messaging"
	"github.com/runner-cli/runner/runner/profile"
	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/tmuxctl"
)

type shadowResult struct {
	answer   string
	stderr   string
	exit     *int
	timedOut bool
	err      error
}

// runShadow runs the profile's headless command with prompt in the task's
// directory (there for a task on a host: runShadowThere), in its own process group, killed (the whole group) when
// timeout passes or ctx ends.
func runShadow(ctx context.Context, d Deps, t *state.Task, prof *profile.Profile, prompt string, timeout time.Duration) shadowResult {
	if t.Tmux.Host != "" {
		return runShadowThere(ctx, d, t, prof, prompt, timeout)
	}
	argv, err := d.ResolveArgv(prof, prof.HeadlessArgv(prompt))
	if err != nil {
		return shadowResult{err: fmt.Errorf("shadow of %s: %w", t.ID, err)}
	}
	if fi, err := os.Stat(t.Dir); err != nil || !fi.IsDir() {
		return shadowResult{err: fmt.Errorf("shadow of %s: project directory %s is missing", t.ID, t.Dir)}
	}
	if len(t.Sandbox) > 0 || d.Env.Getenv(door.EnvConfined) != "" {
		if argv, err = d.ShadowSandbox(t, prof, argv); err != nil {
			return shadowResult{err: err}
		}
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := subproc.Group(tctx, argv[0], argv[1:]...)
	cmd.Dir = t.Dir
	cmd.Env = shadowEnv(d, t, prof)
	stdout := &textutil.HeadWriter{Max: askOutputMax}
	stderr := &textutil.TailWriter{Max: askStderrMax}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err = cmd.Run()
	res := shadowResult{answer: strings.TrimSpace(tmuxctl.StripEscapes(stdout.String())), stderr: strings.TrimSpace(stderr.String())}
	switch {
	case err == nil:
		code := 0
		res.exit = &code
	case tctx.Err() != nil && ctx.Err() == nil:
		res.timedOut = true
		res.err = fmt.Errorf("the shadow of %s gave no answer within %s (its process group was killed)", t.ID, timeout)
	case ctx.Err() != nil:
		res.err = fmt.Errorf("the shadow of %s was interrupted", t.ID)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() >= 0 {
			code := ee.ExitCode()
			res.exit = &code
			res.err = fmt.Errorf("the shadow of %s (%s) exited %d%s", t.ID, argv[0], code, stderrNote(res.stderr))
		} else {
			res.err = fmt.Errorf("the shadow of %s (%s): %w%s", t.ID, argv[0], err, stderrNote(res.stderr))
		}
	}
	return res
}

func stderrNote(s string) string {
	if s == "" {
		return ""
	}
	return ": " + messaging.OneLine(s, 300)
}

// shadowEnv is the caller's environment without the variables that say
// which task a process belongs to (a shadow is not the caller, nor a child
// of it), plus RUNNER_SHADOW_OF and the profile's Env.
func shadowEnv(d Deps, t *state.Task, prof *profile.Profile) []string {
	return tmuxctl.ChildEnv(d.Env.Environ(), append([]string{"RUNNER_SHADOW_OF=" + t.ID}, prof.EnvList()...)...)
}

// Prompt is the prompt a shadow of t gets: who it answers for, t's task
// text, its turn log, the tail of its transcript and the question, at most
// ContextMax bytes. Context lines are quoted with "| " so that no line
// of it reads as an instruction on its own (the sim acts on lines that
// start with a directive); the question's lines are not quoted.
func Prompt(t *state.Task, transcriptTail, asker, question string) string {
	var b strings.Builder
	where := t.Dir
	if t.Project != "" {
		where = "project " + t.Project + " (" + t.Dir + ")"
	}
	fmt.Fprintf(&b, "You are the shadow of agent %s (%s): answer a question on its behalf.\n"+
		"That agent is busy with the task below in %s and must not be interrupted. "+
		"Answer the question at the end as it would, briefly and concretely, from the context below and by reading files if needed. "+
		"Do not change any file and do not run commands that change anything.\n\n", t.ID, t.Agent, where)
	b.WriteString("Its task:\n")
	b.WriteString(quoteLines(textutil.ClipBytes(strings.TrimSpace(t.Text), askTaskMax)))
	b.WriteString("\n\nIts turn log (oldest first):\n")
	var turns []string
	size := 0
	for i := len(t.Turns) - 1; i >= 0; i-- {
		l := t.Turns[i].Time.UTC().Format("15:04:05") + " " + messaging.OneLine(t.Turns[i].Summary, 200)
		if size+len(l)+3 > askTurnsMax {
			break
		}
		size += len(l) + 3
		turns = append(turns, l)
	}
	slices.Reverse(turns)
	if len(turns) == 0 {
		turns = []string{"(no turn finished yet)"}
	}
	b.WriteString(quoteLines(strings.Join(turns, "\n")))
	tail := fmt.Sprintf("\n\nQuestion from %s:\n%s\n", asker, textutil.ClipBytes(strings.TrimSpace(question), askQuestionMax))
	head := "\n\nThe end of its terminal output:\n"
	room := ContextMax - b.Len() - len(head) - len(tail)
	if tr := quotedTail(strings.TrimSpace(transcriptTail), room); tr != "" {
		b.WriteString(head)
		b.WriteString(tr)
	}
	b.WriteString(tail)
	return b.String()
}

// quoteLines prefixes every line of s with "| ".
func quoteLines(s string) string {
	if s == "" {
		return "| (empty)"
	}
	return "| " + strings.ReplaceAll(s, "\n", "\n| ")
}

// quotedTail quotes the last lines of s that fit in max bytes, quoting
// included; "" when none fits.
func quotedTail(s string, max int) string {
	if s == "" || max <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	var keep []string
	size := 0
	for i := len(lines) - 1; i >= 0; i-- {
		l := textutil.ClipBytes(lines[i], 400)
		if size+len(l)+3 > max {
			break
		}
		size += len(l) + 3
		keep = append(keep, l)
	}
	if len(keep) == 0 {
		return ""
	}
	slices.Reverse(keep)
	return quoteLines(strings.Join(keep, "\n"))
}

// transcriptReadMax is how much of the end of a transcript is read.
const transcriptReadMax = 64 << 10

// readTranscriptTail returns the last lines of a task's transcript as
// text: escapes stripped, carriage returns resolved, blank and repeated
// lines (spinner redraws) dropped. A missing file gives "".
func readTranscriptTail(path string) string {
	if path == "" {
		return ""
	}
	b, _ := tailfile.Bytes(path, transcriptReadMax)
	return CleanTranscript(string(b), 80)
}

// CleanTranscript turns raw terminal output into its last n meaningful
// lines: escapes stripped, each line's text after its last carriage return
// (a redraw) kept, blank lines and lines equal to the previous one dropped.
func CleanTranscript(raw string, n int) string {
	raw = strings.ReplaceAll(tmuxctl.StripEscapes(raw), "\r\n", "\n")
	var out []string
	for _, l := range strings.Split(raw, "\n") {
		if i := strings.LastIndexByte(l, '\r'); i >= 0 {
			l = l[i+1:]
		}
		l = strings.TrimRight(strings.Map(func(r rune) rune {
			if r < 0x20 && r != '\t' || r == 0x7f || r == utf8.RuneError {
				return -1
			}
			return r
		}, l), " \t")
		if strings.TrimSpace(l) == "" || (len(out) > 0 && out[len(out)-1] == l) {
			continue
		}
		out = append(out, l)
	}
	return textutil.LastLines(strings.Join(out, "\n"), n)
}

// Budgets of Prompt's parts, in bytes; the transcript gets what is
// left of ContextMax.
const (
	askQuestionMax = 2000
	askTaskMax     = 2000
	askTurnsMax    = 1200
)
