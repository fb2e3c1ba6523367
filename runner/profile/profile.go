package profile

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/runner-cli/runner/runner/fault"
)

// Profile describes how the runner launches, drives and watches one agent
// CLI. Every field has a JSON name so the config file can override it (see
// MergeProfile). Patterns are RE2 regular expressions matched against single
// lines of the bottom of the screen (see Detect); they are compiled once, by
// Compile.
type Profile struct {
	// Name is the profile's name, as given to --agent.
	Name string `json:"name"`
	// Description is a one-line summary for `runner agents`.
	Description string `json:"description,omitempty"`

	// Command is the launch argv; Command[0] is looked up in PATH.
	Command []string `json:"command"`
	// Env is added to the pane's environment when the agent is launched.
	Env map[string]string `json:"env,omitempty"`
	// Binary is the executable whose presence means the CLI is installed
	// (exec.LookPath); empty means Command[0].
	Binary string `json:"binary,omitempty"`
	// VersionArgs, appended to Binary, print the CLI's version.
	VersionArgs []string `json:"version_args,omitempty"`
	// ModelFlag passes --model M to the agent: the argv gets ModelFlag, M.
	ModelFlag string `json:"model_flag,omitempty"`
	// PermissionsAutoArgs are appended to the argv by --permissions auto.
	PermissionsAutoArgs []string `json:"permissions_auto_args,omitempty"`
	// PermissionsAutoDoc says what PermissionsAutoArgs allow the agent to do.
	PermissionsAutoDoc string `json:"permissions_auto_doc,omitempty"`
	// PermissionsAsk is the CLI's asking mode by version range, for
	// --permissions ask (see AskModeFor): the first entry whose range
	// holds the installed version applies. Empty: the CLI has no asking
	// mode (--permissions ask is refused; runner's default falls back to
	// the CLI's own).
	PermissionsAsk []AskMode `json:"permissions_ask,omitempty"`
	// Headless is the argv template of the agent's one-shot mode without a
	// TUI, used by `runner ask` for shadow answers: the prompt replaces
	// every PromptPlaceholder (one argv element, never a shell). It should
	// keep the agent from changing files where the CLI allows that. Empty:
	// the agent has no headless mode (ask sends a message instead).
	Headless []string `json:"headless,omitempty"`

	// Ready patterns mark an idle agent waiting for a prompt (the input box).
	Ready []string `json:"ready,omitempty"`
	// Busy patterns mark an agent at work (spinners, "esc to interrupt").
	// Never a permanent footer.
	Busy []string `json:"busy,omitempty"`
	// Starting patterns mark a start-up that is not finished (a splash,
	// "loading", "Initializing...", a prompt queued "Waiting for
	// startup"): such a screen is starting, never ready or busy, even
	// where it shows an input box, and a prompt typed then may be lost or
	// queued. Needs-input and trust dialogs win over them.
	Starting []string `json:"starting,omitempty"`
	// NeedsInput patterns mark a dialog, approval menu or question.
	NeedsInput []string `json:"needs_input,omitempty"`
	// Trust lists first-run and trust dialogs the runner may accept on
	// --yes-trust, each with the keys that accept it. A match is needs_input.
	Trust []TrustDialog `json:"trust,omitempty"`
	// Exited patterns mark text the agent prints when it exits.
	Exited []string `json:"exited,omitempty"`
	// Error patterns mark a failed turn shown above an idle input: a ready
	// screen whose latest Error line is below every ErrorReset line is
	// reported as error.
	Error []string `json:"error,omitempty"`
	// ErrorReset patterns mark lines that supersede an earlier error: a new
	// echoed prompt, a cancel notice.
	ErrorReset []string `json:"error_reset,omitempty"`
	// TurnOpen and TurnClosed patterns are for agents that hide their busy
	// marker while the answer streams (Codex): TurnOpen marks the start of
	// a turn (an echoed prompt), TurnClosed its end (Codex's "Worked for
	// 12s" line, an interruption). A ready line whose nearest such line
	// above it, searched up to the top of the screen, is a TurnOpen line is
	// busy: the turn has started and not ended. Unused when empty.
	TurnOpen   []string `json:"turn_open,omitempty"`
	TurnClosed []string `json:"turn_closed,omitempty"`
	// Scrolled patterns say the view is scrolled away from the bottom of
	// the transcript (Codex's "enter/esc latest" footer): the end of the
	// last turn may be off screen, so TurnOpen does not count.
	Scrolled []string `json:"scrolled,omitempty"`
	// Undecided patterns say the screen does not show the state (a view
	// scrolled away from new output: "New activity"); checked after Busy,
	// before Ready, they make it unknown, for the caller to look again.
	Undecided []string `json:"undecided,omitempty"`
	// Unusable patterns mark an idle start screen from which no prompt
	// can get an answer (pi's "Warning: No models available": no
	// provider configured): the dispatch fails with the line before it
	// delivers anything. Read on the bottom lines, after start-up only.
	Unusable []string `json:"unusable,omitempty"`
	// Leave lists views that hide the agent's state and the keys that
	// leave them (Codex's transcript browsing mode, left with Escape;
	// its view scrolled away from new output, with C-End): checked with
	// Undecided, such a screen reads unknown with the keys in
	// Detection.LeaveKeys, and a wait presses them and looks again. A
	// view a prompt typed into would not reach the agent as a turn.
	Leave []LeaveView `json:"leave,omitempty"`
	// EchoBeforeTurn: the agent shows a submitted prompt in its transcript
	// before its turn shows any busy marker (Qwen Code and Gemini CLI echo
	// at once and draw their spinner a moment later), so the echo alone
	// is no sign that the turn began: a busy screen is awaited first, for
	// a few seconds, before an echo with no busy screen counts.
	EchoBeforeTurn bool `json:"echo_before_turn,omitempty"`
	// Volatile patterns mark lines masked before hashing the screen
	// (timers, spinners, clocks).
	Volatile []string `json:"volatile,omitempty"`
	// AnswerStart, AnswerEnd and AnswerAfter take the agent's answer off
	// the screen when no hook gave it (see ScreenAnswer). AnswerStart
	// matches the first line of an answer block, the match removed
	// (Claude's "● "); AnswerEnd matches chrome that ends a block (timer
	// lines, rules, footers); without AnswerStart the answer is the
	// lines between the last AnswerAfter line (the echoed prompt) and the
	// last AnswerEnd line below it.
	AnswerStart []string `json:"answer_start,omitempty"`
	AnswerEnd   []string `json:"answer_end,omitempty"`
	AnswerAfter []string `json:"answer_after,omitempty"`
	// AnswerSidebar patterns mark a line of a side panel drawn right of
	// the transcript (opencode's session sidebar, "Context"): the column
	// where the first match starts, if it is past the left edge, cuts
	// every line before the answer is taken.
	AnswerSidebar []string `json:"answer_sidebar,omitempty"`

	// BottomLines is how many non-blank lines, counted up from the last one,
	// make up the bottom of the screen that patterns are applied to.
	BottomLines int `json:"bottom_lines,omitempty"`
	// ErrorLines is how many non-blank bottom lines are searched for Error
	// patterns; 0 means BottomLines.
	ErrorLines int `json:"error_lines,omitempty"`
	// StartingMaxLines: a screen without any marker and with at most this
	// many non-blank lines is "starting" (the UI is not drawn yet); more is
	// "unknown". 0 means DefaultStartingMaxLines; negative means only a
	// blank screen is starting.
	StartingMaxLines int `json:"starting_max_lines,omitempty"`

	// EnterDelay is the pause between pasting text and sending Enter.
	EnterDelay Duration `json:"enter_delay"`
	// Settle is how long a finished screen (ready marker, no busy marker,
	// no output) must hold before the turn counts as done; it overrides
	// the config's settle for this profile (0: use the config's).
	Settle Duration `json:"settle,omitzero"`
	// ReadyHold is how long the first ready screen must stay ready before
	// the task is delivered: some CLIs draw their prompt seconds before
	// the input accepts text (claude, gemini, opencode).
	ReadyHold Duration `json:"ready_hold,omitzero"`
	// PassEnv names variables of the dispatcher's environment passed on to
	// the agent's pane (a trailing * matches a prefix, e.g. "ANTHROPIC_*"):
	// a tmux server started earlier does not have them.
	PassEnv []string `json:"pass_env,omitempty"`
	// MenuCursor matches the line of a menu's selected option (its cursor
	// glyph, e.g. "^\\s*❯ "): dialogs are answered by moving it onto the
	// option chosen by its label (TrustDialog.Choose, ApproveChoose).
	MenuCursor string `json:"menu_cursor,omitempty"`
	// ApproveChoose matches the label of an approval dialog's option that
	// allows once ("1. Yes"); --approve-rule selects it before Enter.
	// Empty: Enter on the option the dialog starts on.
	ApproveChoose string `json:"approve_choose,omitempty"`
	// KeyOptions reads the options of a dialog that shows no numbered
	// menu, such as a confirm's "[y] Yes   [n] No": each match on the
	// dialog's lines is one option, its group "key" (one letter or digit)
	// the key that chooses it, its group "label" (else the whole match,
	// brackets left out) what it says. runner answer presses the key
	// (then Enter, with KeyOptionsEnter) once the screen still shows the
	// dialog's digest. Empty: such a dialog has no options to answer.
	KeyOptions      string `json:"key_options,omitempty"`
	KeyOptionsEnter bool   `json:"key_options_enter,omitempty"`
	// VerifiedVersion is the newest version of the CLI whose screens,
	// dialogs and flags this profile was checked against (the real-agent
	// suite's pin); `runner doctor` warns about an installed one newer.
	VerifiedVersion string `json:"verified_version,omitempty"`
	// Unverified, when set, says why the profile was never run against
	// its CLI through the model mock (a turn needs the vendor's servers;
	// no install could be had) and what it rests on instead (the CLI's
	// documentation, the screens that could be captured): its patterns
	// and flags are the least certain. `runner agents` shows it.
	Unverified string `json:"unverified,omitempty"`
	// SandboxPaths are where the agent CLI keeps its own state (config,
	// sessions, logs): read-write under dispatch --sandbox, everything else
	// but the task's folder read-only. "~/x" is under HOME, "$VAR/x" or
	// "${VAR:-~/default}/x" under a variable of the pane's environment; a
	// trailing "/" marks a directory, made when missing (a first start in
	// the sandbox could not make it).
	SandboxPaths []string `json:"sandbox_paths,omitempty"`
	// PasteRaw pastes with paste-buffer -r (no LF→CR translation).
	PasteRaw bool `json:"paste_raw,omitempty"`
	// MaxTask is the largest task text in bytes (with the awareness
	// block) whose delivery is measured to be confirmed for this agent; a
	// longer one is refused before anything starts (exit 2). 0 means
	// DefaultMaxTask.
	MaxTask int `json:"max_task,omitempty"`
	// InterruptKeys are tmux key names that interrupt a busy agent.
	InterruptKeys []string `json:"interrupt_keys,omitempty"`
	// Limited patterns match the CLI's word that its provider's usage or
	// rate limit ended the turn (Claude Code's limit banner, Codex's "You've
	// hit your usage limit", an HTTP 429 it gave up on): where an Error
	// line would count (below every ErrorReset line), or in the turn's
	// answer from its hook. The turn ends limited, never done or a plain
	// failed; the reset time is read off the line (ParseReset).
	Limited []string `json:"limited,omitempty"`
	// LimitBusy patterns match a busy screen's sign that the CLI only
	// waits out its provider's limit by itself, retrying (OpenCode's "You
	// exceeded your current quota … [retrying in 17s attempt #1]"): the
	// state limit_wait. The supervisor interrupts it and the turn ends
	// limited, so runner, not the CLI, waits it out or ends the task
	// (--on-limit), and the task's --timeout does not run meanwhile.
	LimitBusy []string `json:"limit_busy,omitempty"`
	// LimitChoose is the label of the option that stops, in a dialog the
	// CLI opens on a limit (Gemini CLI's "Usage limit reached … 1. Switch
	// to <model> 2. Stop"): a needs_input screen whose text a Limited
	// pattern matches is answered with it (the cursor moved with
	// MenuCursor, then Enter) and the turn ends limited, not waiting for
	// the user. Empty: such a dialog is a question like any other.
	LimitChoose string `json:"limit_choose,omitempty"`
	// Spend names the record of what a turn used that the agent CLI
	// keeps (SpendKinds: "hook", "claude-transcript", "codex-session",
	// "gemini-chat", "qwen-chat", "copilot-events", "droid-settings");
	// empty: none the runner reads, a turn's
	// spend is unknown (unless its hook's payload carries "usage").
	// SpendCost says the record has the cost in dollars, which
	// --budget-usd needs.
	Spend     string `json:"spend,omitempty"`
	SpendCost bool   `json:"spend_cost,omitempty"`
	// Hook is the agent's own turn-end notification mechanism, if any.
	Hook *Hook `json:"hook,omitempty"`

	// SessionID patterns find the agent's own conversation id on its
	// screen (the resume hint most CLIs print when they exit): the first
	// capture group is the id; the lowest match wins.
	SessionID []string `json:"session_id,omitempty"`
	// Resume are the arguments that reopen a conversation, inserted right
	// after Command in the launch argv, with SessionPlaceholder replaced by
	// the id (claude: ["--resume", "{session}"]; codex: ["resume",
	// "{session}"]). Empty: the agent cannot be started again on its
	// conversation once its window is closed.
	Resume []string `json:"resume,omitempty"`
	// QuitKeys are tmux key names that end the agent at its prompt so that
	// it prints its resume hint; gc sends them one at a time, QuitGap
	// apart, before it closes the window.
	QuitKeys []string `json:"quit_keys,omitempty"`

	// IdleCommands are #{pane_current_command} values meaning the pane's
	// own program is in the foreground (the shell profile: a command that
	// is not one of these is still running).
	IdleCommands []string `json:"idle_commands,omitempty"`
	// NeedsInputAtCursor: when the cursor row is known, NeedsInput patterns
	// count only on it (the shell profile: "Continue? [y/N]" with the
	// cursor after it waits; "Compiling:" with the cursor below is output).
	NeedsInputAtCursor bool `json:"needs_input_at_cursor,omitempty"`
	// AltScreenNeedsInput reports needs_input while the alternate screen is
	// on (the shell profile: a pager or editor waits for the user).
	AltScreenNeedsInput bool `json:"alt_screen_needs_input,omitempty"`
	// NoAwareness: never paste the cross-task awareness block before the
	// task (the shell profile: bash would run its lines as commands).
	NoAwareness bool `json:"no_awareness,omitempty"`

	re *compiled
	// origins is where each key was set (see Origin), sources the files
	// applied, in order; both are shared between clones, never changed
	// once made (a merge makes new ones).
	origins map[string]originRef
	sources []Origin
}

// LeaveView is a view that hides the agent's state (Profile.Leave) and
// the keys that leave it.
type LeaveView struct {
	// Pattern matches a line of the view (its footer).
	Pattern string `json:"pattern"`
	// Keys are tmux key names sent, in order, to leave it.
	Keys []string `json:"keys"`
}

// TrustDialog is a first-run or trust dialog and the keys that accept it.
type TrustDialog struct {
	// Pattern matches a line of the dialog.
	Pattern string `json:"pattern"`
	// Keys are tmux key names sent, in order, to accept the dialog (once
	// Choose's option is selected, when Choose is set).
	Keys []string `json:"keys"`
	// Choose, when set, matches the label of the option that accepts (a
	// regular expression on the option's line): the cursor (the profile's
	// MenuCursor) is moved onto it with Down or Up, and checked on the
	// screen, before Keys. A dialog whose cursor starts elsewhere (Claude
	// Code 2.1.332 starts on "No, exit") is answered all the same.
	Choose string `json:"choose,omitempty"`
}

// Hook kinds.
const (
	HookKindSettingsFile = "settings-file"
	HookKindFlag         = "flag"
)

// Duration is a time.Duration written in JSON as a Go duration string
// ("150ms"); a JSON number is read as milliseconds.
type Duration struct{ time.Duration }

// MarshalJSON writes d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string ("150ms") or a number of milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("bad duration %q (want e.g. \"150ms\")", s)
		}
		if v < 0 {
			return fmt.Errorf("bad duration %q: negative", s)
		}
		d.Duration = v
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return fmt.Errorf("bad duration %s (want a string like \"150ms\" or milliseconds)", b)
	}
	if ms < 0 {
		return fmt.Errorf("bad duration %s: negative", b)
	}
	d.Duration = time.Duration(ms * float64(time.Millisecond))
	return nil
}

// Defaults used when a profile leaves a field at zero.
const (
	// DefaultMaxTask bounds the task text for agents whose limit was not
	// measured (the real CLIs): a large paste is shown collapsed (Claude
	// Code's "[Pasted text #1 +N lines]") but has to pass through the
	// agent's input handling; beyond this, hand the agent a file to read.
	DefaultMaxTask          = 256 << 10
	DefaultEnterDelay       = 150 * time.Millisecond
	DefaultBottomLines      = 12
	DefaultStartingMaxLines = 3
)

// MaxTaskBytes is the largest task text the profile accepts: MaxTask, or
// DefaultMaxTask when unset.
func (p *Profile) MaxTaskBytes() int {
	if p.MaxTask > 0 {
		return p.MaxTask
	}
	return DefaultMaxTask
}

// SessionPlaceholder marks where Resume takes the agent's session id.
const SessionPlaceholder = "{session}"

// QuitGap paces the QuitKeys: after a key the screen is polled every
// QuitGap/3 (up to 2 s) for its answer, and the next key follows QuitGap/3
// later. A CLI that asks for a second Ctrl-C must see two key presses, not
// one read of two bytes.
const QuitGap = 300 * time.Millisecond

// FindSession returns the agent's session id shown on screen: the first
// capture group of the lowest line a SessionID pattern matches; "" when
// none does.
func (p *Profile) FindSession(screen string) string {
	c := p.patterns()
	if c == nil {
		return ""
	}
	lines := strings.Split(screen, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		for _, re := range c.sessionID {
			if m := re.FindStringSubmatch(lines[i]); m != nil && m[1] != "" {
				return m[1]
			}
		}
	}
	return ""
}

// ResumeArgv returns argv (a launch argv that starts with the profile's
// Command) with the Resume arguments for session inserted after Command;
// nil when the profile cannot resume or session is empty.
func (p *Profile) ResumeArgv(argv []string, session string) []string {
	if len(p.Resume) == 0 || session == "" || len(argv) == 0 {
		return nil
	}
	n := len(p.Command)
	if n > len(argv) || !slices.Equal(argv[1:n], p.Command[1:]) {
		n = 1 // the command was changed since: insert after the program
	}
	out := append([]string(nil), argv[:n]...)
	for _, a := range p.Resume {
		out = append(out, strings.ReplaceAll(a, SessionPlaceholder, session))
	}
	return append(out, argv[n:]...)
}

// PromptPlaceholder marks where Headless takes the prompt.
const PromptPlaceholder = "{prompt}"

func (p *Profile) checkHeadless() error {
	if len(p.Headless) == 0 {
		return nil
	}
	if p.Headless[0] == "" || strings.Contains(p.Headless[0], PromptPlaceholder) {
		return keyErrorf(p.Name, "headless", "the first element must be the program, not %q", p.Headless[0])
	}
	for _, a := range p.Headless[1:] {
		if strings.Contains(a, PromptPlaceholder) {
			return nil
		}
	}
	return keyErrorf(p.Name, "headless", "no %s placeholder (e.g. [\"%s\", \"-p\", \"%s\"]; [] for no headless mode)",
		PromptPlaceholder, p.Headless[0], PromptPlaceholder)
}

// HeadlessArgv fills the Headless template with prompt; nil when the
// profile has no headless mode.
func (p *Profile) HeadlessArgv(prompt string) []string {
	if len(p.Headless) == 0 {
		return nil
	}
	out := make([]string, len(p.Headless))
	for i, a := range p.Headless {
		out[i] = strings.ReplaceAll(a, PromptPlaceholder, prompt)
	}
	return out
}

// BinaryName is the executable that must be in PATH for the profile.
func (p *Profile) BinaryName() string {
	if p.Binary != "" {
		return p.Binary
	}
	if len(p.Command) > 0 {
		return p.Command[0]
	}
	return ""
}

// LaunchOptions are the per-dispatch choices that shape the launch argv.
type LaunchOptions struct {
	Model string // --model, already resolved from aliases
	// Permissions is --permissions: PermissionsAuto adds
	// PermissionsAutoArgs, PermissionsAsk Ask's Args; anything else adds
	// nothing.
	Permissions string
	Ask         AskMode  // the asking mode (AskModeFor), for PermissionsAsk
	ExtraArgs   []string // --agent-arg, passed through as argv, last
}

// Argv builds the launch argv for opts. It fails when a model is asked of a
// profile without a model flag, or auto permissions of one without a flag.
func (p *Profile) Argv(opts LaunchOptions) ([]string, error) {
	argv := append([]string(nil), p.Command...)
	if opts.Model != "" {
		if p.ModelFlag == "" {
			return nil, fault.Usagef("agent %q has no model flag: --model %q cannot be passed (use --agent-arg, or set \"model_flag\" in the profile)", p.Name, opts.Model)
		}
		argv = append(argv, p.ModelFlag, opts.Model)
	}
	switch opts.Permissions {
	case PermissionsAuto:
		if len(p.PermissionsAutoArgs) == 0 && len(p.Env) == 0 {
			return nil, fault.Usagef("agent %q has no auto-approval mode: --permissions auto is not available (set \"permissions_auto_args\" in the profile)", p.Name)
		}
		argv = append(argv, p.PermissionsAutoArgs...)
	case PermissionsAsk:
		argv = append(argv, opts.Ask.Args...)
	}
	return append(argv, opts.ExtraArgs...), nil
}

// EnvList is the profile's Env as KEY=VALUE, sorted by key.
func (p *Profile) EnvList() []string {
	out := make([]string, 0, len(p.Env))
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		out = append(out, k+"="+p.Env[k])
	}
	return out
}
