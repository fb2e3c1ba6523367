// The built-in profiles, as data: one constructor per agent CLI, each a
// literal of patterns, keys and flags with the reason for each beside it.
// The file (and codexProfile, the CLI with the most screens) is longer than
// the ~400 lines a file of logic should be because a table reads best
// whole, and splitting it would scatter what one CLI needs.

package profile

import (
	_ "embed"
	"encoding/json"
	"time"
)

// opencodeTurnEndJS is runner's OpenCode plugin (the opencode profile's
// hook).
//
//go:embed opencode-turn-end.js
var opencodeTurnEndJS string

// The screen patterns below were built from the labelled real screens in
// ../shared/screens (captured with tmux 3.3a, pane 120x40: Claude Code
// 2.1.197, Codex CLI 0.169.0, Gemini CLI 0.61.0, opencode 1.18.33, Qwen Code
// 0.15.10, bash 5.2.15; see its INDEX.md), and every one of those screens is
// a case in detect_test.go. The flags were checked against the sources cited
// next to each profile. Aider has no captured screens: its patterns follow
// its documented prompts and are the least certain.

// Builtins returns fresh, compiled copies of the built-in profiles, in the
// order `runner agents` lists them. Callers may modify what they get.
func Builtins() []*Profile {
	ps := []*Profile{claudeProfile(), codexProfile(), geminiProfile(), opencodeProfile(),
		qwenProfile(), aiderProfile(), shellProfile(), simProfile()}
	for _, p := range ps {
		if err := p.Compile(); err != nil {
			panic("built-in " + err.Error()) // a bug in this file, caught by the tests
		}
	}
	return ps
}

// BuiltinProfile returns a fresh copy of the built-in profile name.
func BuiltinProfile(name string) (*Profile, error) {
	return FindProfile(Builtins(), name)
}

// brailleSpinner is the dots spinner of the Ink-based CLIs (Gemini, Qwen).
const brailleSpinner = `[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`

// claudeProfile: Claude Code.
//
// Flags: CLI reference https://docs.anthropic.com/claude/docs/claude-code/cli-usage
// (--model, -p/--print, --settings); --dangerously-skip-permissions is
// --permission-mode bypassPermissions (dev.to/geekcoding101 "Claude
// --dangerously-skip-permissions: what it does"); hooks: Stop event with
// {"type":"command"} entries in a settings file
// (https://docs.anthropic.com/ja/docs/claude-code/hooks).
func claudeProfile() *Profile {
	return &Profile{
		Name:            "claude",
		VerifiedVersion: "2.1.197",
		PassEnv:         []string{"ANTHROPIC_*", "CLAUDE_*", "DISABLE_AUTOUPDATER"},
		// ~/.claude.json is rewritten in place (and backed up beside it).
		SandboxPaths: []string{"${CLAUDE_CONFIG_DIR:-~/.claude}/", "~/.claude.json", "~/.claude.json.backup", "~/.cache/claude-cli-nodejs/"},
		ReadyHold:    Duration{2 * time.Second},
		Description:  "Claude Code (npm @anthropic-ai/claude-code)",
		Command:      []string{"claude"},
		// The auto-updater installs globally unless disabled (issue 5, §7).
		Env:         map[string]string{"DISABLE_AUTOUPDATER": "1"},
		VersionArgs: []string{"--version"},
		ModelFlag:   "--model",
		// Unattended means nobody answers: file edits in the project
		// (acceptEdits) and every shell command and web fetch
		// (--allowedTools) go unasked; the user's own deny rules still
		// hold. Not bypassPermissions (= --dangerously-skip-permissions):
		// Claude Code 2.x exits 1 with it when run as root unless
		// IS_SANDBOX=1, asks for a confirmation at its first start, and
		// drops the user's deny rules.
		PermissionsAutoArgs: []string{"--permission-mode", "acceptEdits", "--allowedTools", "Bash,WebFetch,WebSearch"},
		// Checked (TestRealAgentsAuto, 2.1.197, as root): a Write of a new
		// file and a shell command that is not an edit ran without a
		// dialog.
		PermissionsAutoDoc: "acceptEdits + allowedTools Bash,WebFetch,WebSearch: file edits in the working directory, every shell command " +
			"and web fetch run without asking; your deny rules still hold; edits outside the working directory still ask (needs_input, or --approve-rule)",
		// Shadow answers (runner ask): -p prints the answer and exits;
		// plan mode is Claude Code's read-only permission mode (checked
		// in `claude --help` 2.1.197: choices acceptEdits, auto,
		// bypassPermissions, default, dontAsk, plan).
		Headless: []string{"claude", "-p", "--permission-mode", "plan", PromptPlaceholder},
		Ready: []string{
			`^❯\x{a0}`,         // the input box: "❯"+NBSP (echoed prompts use a plain space)
			`\? for shortcuts`, // idle footer
		},
		Busy: []string{
			`esc to interrupt`,               // footer while working
			`^[·✢*✶✻✽] [A-Z][a-z]+…`,         // spinner line "✶ Newspapering…"
			`Retrying in \d+s · attempt \d+`, // offline retry loop
		},
		NeedsInput: []string{
			`^\s*Do you want to `, // proceed / make this edit to X / create X / allow ...
			`Esc to cancel · Tab to amend`,
			`Enter to confirm · Esc to cancel`,
			`Press Enter to continue`, // onboarding screens
			`^\s*❯ 1\. `,              // a numbered menu with its selection on option 1
		},
		// The selected option: "❯ " (the composer's "❯" is followed by a
		// no-break space instead).
		MenuCursor: `^\s*❯ `,
		// Options chosen by label, the cursor checked before Enter: 2.1.197
		// starts the folder dialog on "❯ 1. Yes, I trust this folder",
		// 2.1.332 on "❯ No, exit" (testdata/screens-newest).
		Trust: []TrustDialog{
			{Pattern: `Yes, I trust this folder`, Keys: []string{"Enter"}, Choose: `^\s*(?:❯ )?\s*(?:\d+\. )?Yes, I trust this folder`},
			{Pattern: `Detected a custom API key`, Keys: []string{"Enter"}, Choose: `^\s*(?:❯ )?\s*(?:\d+\. )?Yes$`},
		},
		ApproveChoose: `^\s*(?:❯ )?\s*(?:\d+\. )?Yes$`,
		Exited:        []string{`^Resume this session with:`, `^claude --resume \S+`},
		Error:         []string{`^(● |\s+⎿\s+)API Error`},
		ErrorReset:    []string{`^❯ \S`, `Press Ctrl-C again to exit`, `Interrupted · What should Claude do`},
		Volatile: []string{
			`^[·✢*✶✻✽] \S+…`, `Retrying in \d+s`, `\(\d+[ms]( \d+s)? · [↑↓] \d+ tokens\)`,
		},
		// "● " starts an answer (and a tool call); "✻ Crunched for 6s" and
		// the composer's rules end it.
		AnswerStart:   []string{`^● `},
		AnswerEnd:     []string{`^[·✢*✶✻✽] \S+ for `, `^─{8}`, `^❯`},
		BottomLines:   12,
		EnterDelay:    Duration{150 * time.Millisecond},
		InterruptKeys: []string{"Escape"},
		// Only Stop: a sub-agent's end is SubagentStop, which never reaches
		// the task's events file. The payload (one line of JSON on stdin)
		// carries session_id and last_assistant_message; the appender
		// writes it as is, with no process of the runner's.
		Hook: &Hook{
			Kind:     HookKindSettingsFile,
			File:     "claude-settings.json",
			Args:     []string{"--settings", "{file}"},
			Settings: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":{append}}]}]}}`,
			Doc:      "Stop hook in a --settings file of the runner's (the user's own settings and hooks stay in force)",
		},

		// Resume hint printed on exit (screen claude__exited__3).
		SessionID: []string{`claude --resume ([0-9A-Za-z_-]*[0-9][0-9A-Za-z_-]*)`},
		Resume:    []string{"--resume", SessionPlaceholder},
		QuitKeys:  []string{"C-c", "C-c"}, // the first asks "Press Ctrl-C again to exit"
	}
}

// codexProfile: OpenAI Codex CLI.
//
// Flags: -m/--model, -a/--ask-for-approval never, -s/--sandbox
// workspace-write, `codex exec` for non-interactive runs
// (https://raw.githubusercontent.com/openai/codex/rust-v0.66.0/docs/sandbox.md,
// https://developers.openai.com/codex/autofix-ci; --full-auto still asks
// "on-request": github.com/openai/codex/issues/6522).
func codexProfile() *Profile {
	return &Profile{
		Name:            "codex",
		VerifiedVersion: "0.169.0",
		PassEnv:         []string{"OPENAI_*", "CODEX_*"},
		SandboxPaths:    []string{"${CODEX_HOME:-~/.codex}/"},
		Description:     "OpenAI Codex CLI (npm @openai/codex)",
		// --no-daemon: without it Codex starts (or joins) a shared
		// background server that outlives the pane.
		Command:             []string{"codex", "--no-daemon"},
		Binary:              "codex",
		VersionArgs:         []string{"--version"},
		ModelFlag:           "--model",
		PermissionsAutoArgs: []string{"--ask-for-approval", "never", "--sandbox", "workspace-write"},
		PermissionsAutoDoc: "never asks; commands run in the workspace-write sandbox (writes only in the project and temp dirs, " +
			"no network); what the sandbox refuses is reported to the model, not escalated",
		// Shadow answers: `codex exec` (checked in `codex exec --help`
		// 0.169.0): a read-only sandbox for its commands, no git-repo
		// requirement (a project may not be one), no session files, no
		// colour escapes in the answer.
		Headless: []string{"codex", "exec", "--sandbox", "read-only", "--skip-git-repo-check", "--ephemeral",
			"--color", "never", PromptPlaceholder},
		Ready: []string{
			`^› `,              // the composer (placeholder or typed text) above the status lines
			`\? for shortcuts`, // footer; also shown while busy, so busy must win
		},
		Busy: []string{
			`esc to interrupt`,
			`^[•◦] (Working|Reconnecting)`,
		},
		// Codex draws its composer (logo, "› Ask Codex to do anything")
		// before its start-up ends: the footer is then a bare "? for
		// shortcuts" (after it, the model line and "← for agents · ? for
		// shortcuts"), and in a folder it has never trusted the trust
		// dialog follows seconds later. A prompt pasted meanwhile is
		// queued ("Waiting for startup") or put back in the composer
		// unsent (testdata/screens-real/codex__starting__*).
		Starting: []string{
			`^  \? for shortcuts$`,
			`Waiting for startup`, // a prompt queued while Codex starts ("· esc cancel")
		},
		// Codex hides its Working line while the final answer streams: the
		// screen is then the answer above an empty composer. A turn ends
		// with a "Worked for 11s • 20:52" line (or "■ ..." when it is
		// interrupted or fails), so an echoed prompt with neither below it
		// is a turn still running.
		TurnOpen:   []string{`^› [^/\s]`},                       // not the slash-command popup "› /quit  exit Codex"
		TurnClosed: []string{`^\s*─*\s*Worked for <?\d`, `^■ `}, // "Worked for <1s" after a quick turn
		NeedsInput: []string{
			`^\s*Would you like to `, // run the following command? / make the following edits?
			`Press enter to confirm or esc to cancel`,
			`Welcome to Codex`,
			`Sign in with ChatGPT`,
			`Press enter to (continue|save)`,
			`Task is still running`,
		},
		MenuCursor: `^\s*› \d+\.`,
		Trust: []TrustDialog{
			{Pattern: `(Trust this folder|trust the (files|contents) (in|of) this)`, Keys: []string{"Enter"},
				Choose: `^\s*(?:› )?\d+\. (?:Trust and continue|Yes\b)`},
		},
		ApproveChoose: `^\s*(?:› )?\d+\. Yes, proceed`,
		Exited:        []string{`codex resume \S+`, `^Error loading configuration`},
		Error:         []string{`^■ (stream error|unexpected status|Error)`},
		ErrorReset:    []string{`^› \S`},
		Volatile:      []string{`\(\d+[hms]( \d+s)? • esc to interrupt\)`, `Worked for .* • \d\d:\d\d`, `^[•◦] (Working|Reconnecting)`},
		AnswerStart:   []string{`^• `},
		AnswerEnd:     []string{`^\s*─*\s*Worked for`, `^› `, `^■ `},
		BottomLines:   8,
		// Codex reads Enter within 120 ms of a paste burst as a newline.
		EnterDelay:    Duration{200 * time.Millisecond},
		InterruptKeys: []string{"Escape"},
		// Codex runs its notify program with the event as JSON in the last
		// argument; sh hands it to `runner hook` on stdin (the hook reads
		// stdin, never the agent's terminal), skipping the hidden turn that
		// writes the thread's title (it ends while the real turn runs).
		Hook: &Hook{
			Kind: HookKindFlag,
			// codexNotifyScript (below) is constant; TestCodexNotifyHook
			// feeds it a hostile payload and a user's notify to chain.
			Args:      []string{"-c", codexNotifyArg},
			ChainUser: ChainCodexNotify,
			Doc:       "notify program (-c notify=…): runs after every turn with {\"type\":\"agent-turn-complete\",…}; then the user's own notify from config.toml",
		},

		// "To reconnect, run: codex resume <id>" on exit (codex__exited__1);
		// `codex resume` takes the other flags after it (--no-daemon too).
		// An id has a digit: Codex 0.171 also prints "codex resume and …"
		// prose ("No saved session found with ID and" after a resume).
		SessionID: []string{`codex resume ([0-9A-Za-z_-]*[0-9][0-9A-Za-z_-]*)`},
		Resume:    []string{"resume", SessionPlaceholder},
		QuitKeys:  []string{"C-c"}, // one Ctrl-C at the idle composer exits
	}
}

// geminiProfile: Google Gemini CLI.
//
// Flags: -m/--model, -p/--prompt (headless), --approval-mode yolo (--yolo is
// deprecated) — `gemini --help` as quoted on dev.to/shoogarsoft and
// dev.to/agentrq "Gemini CLI YOLO mode, read from the source";
// https://raw.githubusercontent.com/google-gemini/gemini-cli/main/docs/cli/headless.md.
func geminiProfile() *Profile {
	return &Profile{
		Name:                "gemini",
		VerifiedVersion:     "0.61.0",
		PassEnv:             []string{"GEMINI_*", "GOOGLE_*"},
		SandboxPaths:        []string{"~/.gemini/"},
		ReadyHold:           Duration{3 * time.Second},
		Description:         "Google Gemini CLI (npm @google/gemini-cli)",
		Command:             []string{"gemini"},
		VersionArgs:         []string{"--version"},
		ModelFlag:           "--model",
		PermissionsAutoArgs: []string{"--approval-mode", "yolo"},
		PermissionsAutoDoc: "yolo: every tool call is approved (shell, edits, web); the sandbox is a separate switch; " +
			"in an untrusted folder Gemini forces the default mode back",
		// Shadow answers: -p is the headless prompt; approval mode plan
		// is read-only (`gemini --help` 0.61.0: default, auto_edit, yolo,
		// plan; a settings file that disables plan falls back to default,
		// which in headless mode refuses tools that need approval).
		Headless: []string{"gemini", "--approval-mode", "plan", "-p", PromptPlaceholder},
		Ready: []string{
			// The empty input box's placeholder: "> " (or "! " in shell
			// mode), "* " in YOLO mode (--permissions auto; 0.61).
			`^ ?[>!*] {3}Type your (message|shell command)`,
			// The input box holding text (the lowest "> " or YOLO "* "
			// line): reported as the ready line so delivery sees a prompt
			// still unsent. Answers are indented: no line of theirs starts so.
			`^ ?[>*] \S`,
			`^ workspace \(/directory\)`, // status rows under the input box
		},
		Busy: []string{
			`esc to cancel`,
			`^ ?` + brailleSpinner + ` `,
			`Shell awaiting input`,
			`^│ ⊷ `, // a running tool box
		},
		NeedsInput: []string{
			`Allow execution of`,
			`Apply this change\?`,
			`How would you like to authenticate`,
			`Login with Google`,
			`Waiting for user confirmation`,
			`Enter Gemini API Key`,
			`\(Press Enter to submit, Esc to cancel`,
			`^│? *● 1\. `,
		},
		MenuCursor: `^[│ ]*● \d+\.`,
		Trust: []TrustDialog{
			{Pattern: `Do you trust the files in this folder\?`, Keys: []string{"Enter"}, Choose: `^[│ ]*(?:● )?\s*\d+\. Trust folder`},
		},
		ApproveChoose: `^[│ ]*(?:● )?\s*\d+\. Allow once`,
		Exited:        []string{`To resume this session: gemini --resume`, `Agent powering down`},
		Error:         []string{`^✕ \[API Error`, `This request failed\.`},
		ErrorReset:    []string{`^ > \S`, `Request cancelled`},
		// Qwen Code, its fork, echoes before its spinner: so may Gemini.
		EchoBeforeTurn: true,
		Volatile:       []string{brailleSpinner, `\(esc to cancel, \d+[ms]`},
		AnswerStart:    []string{`^ ?✦ `},
		AnswerEnd:      []string{`\? for shortcuts`, `^─{8}`, `^ ?[>*] `},
		BottomLines:    12,
		// Against the real CLI (0.61) an Enter sooner than ~300 ms after the
		// paste was often taken as part of the paste (a newline).
		EnterDelay:    Duration{350 * time.Millisecond},
		InterruptKeys: []string{"Escape"},
		// AfterAgent runs when the agent loop of a prompt completes, with
		// session_id, prompt and prompt_response (gemini-cli 0.61.0
		// fireAfterAgentEvent). The file is Gemini's system defaults
		// (GEMINI_CLI_SYSTEM_DEFAULTS_PATH), the lowest layer: hooks
		// concatenate with the user's own, and nothing of
		// ~/.gemini/settings.json changes. Gemini runs no settings hooks in
		// a folder it does not trust: there the screen ends the turn.
		// Gemini reads a system file only when it and every directory above
		// it belong to root and are not writable by group or others
		// (0.61.0 isPathSecureSync): elsewhere runner leaves the hook out.
		Hook: &Hook{
			Kind:      HookKindSettingsFile,
			RootOwned: true,
			File:      "gemini-system-defaults.json",
			Env:       map[string]string{"GEMINI_CLI_SYSTEM_DEFAULTS_PATH": "{file}"},
			Settings:  `{"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":{append}}]}]}}`,
			Doc:       "AfterAgent hook in a system-defaults file of the runner's (GEMINI_CLI_SYSTEM_DEFAULTS_PATH); trusted folders only",
		},

		// In the exit summary box (gemini__exited__1).
		SessionID: []string{`gemini --resume ([0-9A-Za-z_-]*[0-9][0-9A-Za-z_-]*)`},
		Resume:    []string{"--resume", SessionPlaceholder},
		QuitKeys:  []string{"C-c", "C-c"}, // the first cancels, the second exits
	}
}

// opencodeProfile: opencode (sst).
//
// Flags: -m/--model provider/model, `opencode run` (https://opencode.ai/docs/cli/commands.md,
// https://opencode.ai/docs/zh-cn/cli); --auto approves every permission not
// explicitly denied (https://opencode.ai/v1/docs/permissions/; listed by
// `opencode --help` of 1.18.33, not yet run through dispatch).
func opencodeProfile() *Profile {
	return &Profile{
		Name:            "opencode",
		VerifiedVersion: "1.18.33",
		PassEnv:         []string{"OPENCODE_*", "OPENAI_*", "ANTHROPIC_*"},
		SandboxPaths: []string{"${XDG_DATA_HOME:-~/.local/share}/opencode/", "${XDG_CONFIG_HOME:-~/.config}/opencode/",
			"${XDG_CACHE_HOME:-~/.cache}/opencode/", "${XDG_STATE_HOME:-~/.local/state}/opencode/"},
		ReadyHold:           Duration{5 * time.Second},
		Description:         "opencode (npm opencode-ai)",
		Command:             []string{"opencode"},
		VersionArgs:         []string{"--version"},
		ModelFlag:           "--model",
		PermissionsAutoArgs: []string{"--auto"},
		PermissionsAutoDoc:  "auto: every permission request that config does not explicitly deny is approved",
		// Shadow answers: `opencode run MESSAGE` with the built-in plan
		// agent, whose permission rules deny edits ("Plan mode. Disallows
		// all edit tools"; `opencode run --help` 1.18.33: --agent).
		Headless: []string{"opencode", "run", "--agent", "plan", PromptPlaceholder},
		// Not the "ctrl+p commands" footer: opencode draws it (and the logo)
		// seconds before the input box, and a prompt pasted then is lost.
		Ready: []string{
			// The input box's agent · model row: "┃  Build · Mock Model
			// Mock", "┃  Build auto · Mock Model Mock" with --auto (1.18.33).
			`^\s*┃\s{2}\S+(?: auto)? · \S`,
			`Ask anything…`, // home screen input placeholder
		},
		Busy: []string{
			`esc interrupt`,
			`esc again to`,
			`^\s*[■⬝]{8}`, // 8-cell progress bar
			`\[retrying in \d+s`,
		},
		NeedsInput: []string{
			`Permission required`,
			`Allow once\s+Allow always\s+Reject`,
			`\S\s{3,}(Connect a provider|Select (model|provider|agent))\s+esc$`, // modal title with its esc
		},
		Exited:     []string{`^\s*Continue\s+opencode -s \S+`},
		Error:      []string{`^\s*┃?\s*(Cannot connect to API|Error:)`},
		ErrorReset: []string{`^\s*┃?\s*\$ \S`},
		Volatile:   []string{`[■⬝]{8}`, `retrying in \d+s`},
		// A modal is drawn over the transcript, well above the input box.
		// The answer sits between the prompt's "┃" box and the "▣  Build ·
		// model · 2.1s" line.
		AnswerEnd:   []string{`^\s*▣ `},
		AnswerAfter: []string{`^\s*┃`},
		// A wide pane shows the session's sidebar right of the transcript
		// (title, "Context", tokens, cost, LSP, the directory).
		AnswerSidebar: []string{`Context$`},
		BottomLines:   30,
		ErrorLines:    6,
		EnterDelay:    Duration{150 * time.Millisecond},
		InterruptKeys: []string{"Escape", "Escape"}, // one Esc asks "esc again to interrupt"; C-c exits
		// OpenCode's plugins see session.idle. runner's plugin
		// (opencode-turn-end.js) is written into the task's hook directory
		// and named in OPENCODE_CONFIG_CONTENT, a config layer merged over
		// the user's: no config directory is added, since OpenCode installs
		// its plugin package into each config directory it loads, from the
		// network (a per-task OPENCODE_CONFIG_DIR kept it from being ready
		// within 90 s offline). A user's own OPENCODE_CONFIG_CONTENT is
		// kept: runner's plugin is added to its list (EnvMergeJSON).
		Hook: &Hook{
			Kind:         HookKindSettingsFile,
			File:         "runner-turn-end.js",
			Settings:     opencodeTurnEndJS,
			Env:          map[string]string{"OPENCODE_CONFIG_CONTENT": `{"plugin":["{file_url}"]}`},
			EnvMergeJSON: true,
			// session.idle comes 0.6-0.8 s after the last frame (the
			// real-agent tests through the mock).
			Grace: Duration{3 * time.Second},
			Doc:   "plugin on session.idle (a file:// plugin in OPENCODE_CONFIG_CONTENT)",
		},

		// "Continue  opencode -s ses_…" on exit (opencode__exited__1).
		SessionID: []string{`opencode -s ([0-9A-Za-z_-]*[0-9][0-9A-Za-z_-]*)`},
		Resume:    []string{"-s", SessionPlaceholder},
		QuitKeys:  []string{"C-c"}, // a single Ctrl-C exits
	}
}

// qwenProfile: Qwen Code (a Gemini CLI fork).
//
// Flags: -m/--model, -p/--prompt, --yolo = --approval-mode yolo
// (https://www.mintlify.com/QwenLM/qwen-code/cli/options/yolo).
func qwenProfile() *Profile {
	return &Profile{
		Name:                "qwen",
		VerifiedVersion:     "0.15.10",
		PassEnv:             []string{"OPENAI_*", "DASHSCOPE_*", "QWEN_*"},
		SandboxPaths:        []string{"~/.qwen/"},
		Description:         "Qwen Code (npm @qwen-code/qwen-code)",
		Command:             []string{"qwen"},
		VersionArgs:         []string{"--version"},
		ModelFlag:           "--model",
		PermissionsAutoArgs: []string{"--approval-mode", "yolo"},
		PermissionsAutoDoc:  "yolo: every tool call is approved (file writes, shell commands) without confirmation",
		// Shadow answers: like gemini; plan mode is read-only
		// (https://qwenlm.github.io/qwen-code-docs/en/users/features/approval-mode).
		Headless: []string{"qwen", "--approval-mode", "plan", "-p", PromptPlaceholder},
		Ready: []string{
			// The input box starts at column 0 (echoed prompts are
			// indented): "> ", or "* " in YOLO mode (--permissions auto:
			// "*   Type your message or @path/to/file", 0.15.10).
			`^[>*] `,
			`^[>*]$`,
		},
		Busy: []string{`esc to cancel`, `^\s*` + brailleSpinner + ` \S`},
		// Seen with the mock: the prompt is in the transcript and the
		// screen idle for a moment before the spinner (and the request).
		EchoBeforeTurn: true,
		// The input box is drawn while Qwen still initialises (a spinner,
		// braille or dots, "⠋ Initializing..." below it); a prompt typed
		// then is queued ("Press ↑ to edit queued messages") or stays in
		// the composer unsent (testdata/screens-real/qwen__starting__*).
		Starting: []string{`^\s*\S*\s*Initializing\.\.\.$`},
		NeedsInput: []string{
			`Allow execution of`,
			`Waiting for user confirmation`,
			`Select Authentication Method`,
			`Step \d+/\d+`,
			`Enter to submit, Esc to go back`,
			`You must select an auth method`,
		},
		Exited:      []string{`qwen --resume \S+`, `Agent powering down`},
		Error:       []string{`^\s*✕ \[API Error`},
		ErrorReset:  []string{`^  > \S`, `Request cancelled`, `Press Ctrl\+C again to exit`},
		Volatile:    []string{brailleSpinner, `\(\d+[ms].*esc to cancel\)`},
		AnswerStart: []string{`^\s{0,2}✦ `},
		AnswerEnd:   []string{`\? for shortcuts`, `^─{8}`, `^[>*]`},
		BottomLines: 15,
		EnterDelay:  Duration{150 * time.Millisecond},
		// Qwen is an Ink app like Gemini.
		InterruptKeys: []string{"Escape"},
		// Qwen Code 0.15.10 has Claude-style hooks: Stop with
		// last_assistant_message (SubagentStop for sub-agents), read from
		// its system defaults file too (QWEN_CODE_SYSTEM_DEFAULTS_PATH), the
		// lowest settings layer, so ~/.qwen/settings.json is untouched.
		Hook: &Hook{
			Kind:     HookKindSettingsFile,
			File:     "qwen-system-defaults.json",
			Env:      map[string]string{"QWEN_CODE_SYSTEM_DEFAULTS_PATH": "{file}"},
			Settings: `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":{append}}]}]}}`,
			Doc:      "Stop hook in a system-defaults file of the runner's (QWEN_CODE_SYSTEM_DEFAULTS_PATH)",
		},

		// "To continue this session, run qwen --resume <id>" (qwen__exited__1).
		SessionID: []string{`qwen --resume ([0-9A-Za-z_-]*[0-9][0-9A-Za-z_-]*)`},
		Resume:    []string{"--resume", SessionPlaceholder},
		QuitKeys:  []string{"C-c", "C-c"}, // the first asks "Press Ctrl+C again to exit"
	}
}

// aiderProfile: Aider. No captured screens: patterns follow its prompt_toolkit
// prompt ("> ", "file.py> ", "architect> ") and its confirmations.
//
// Flags: --model, --yes-always, --message (https://aider.chat/docs/config/options.html,
// https://aider.chat/docs/scripting.html).
func aiderProfile() *Profile {
	return &Profile{
		Name:                "aider",
		PassEnv:             []string{"OPENAI_*", "ANTHROPIC_*", "AIDER_*"},
		SandboxPaths:        []string{"~/.aider/"},
		Description:         "Aider (pip aider-chat); patterns not yet checked against real screens",
		Command:             []string{"aider"},
		VersionArgs:         []string{"--version"},
		ModelFlag:           "--model",
		PermissionsAutoArgs: []string{"--yes-always"},
		PermissionsAutoDoc:  "yes-always: every confirmation is answered yes (adding files, running commands, creating files)",
		// No headless mode for shadows: `aider --message` applies the
		// edits it proposes, and aider has no read-only switch for it.
		Ready:         []string{`^[\w./-]*(?: [\w./-]+)*> ?$`},
		Busy:          []string{`Waiting for `, `^\s*[░█]+\s`},
		NeedsInput:    []string{`\(Y\)es/\(N\)o`, `\[Yes\]:\s*$`, `\(D\)on't ask again`},
		Error:         []string{`^litellm\.\w+Error`, `^Error:`},
		ErrorReset:    []string{`^[\w./-]*> \S`},
		Volatile:      []string{`Waiting for `, `[░█]{3,}`},
		BottomLines:   3,
		EnterDelay:    Duration{150 * time.Millisecond},
		InterruptKeys: []string{"C-c"},
	}
}

// shellPS1 is the shell profile's PS1 (it carries the last exit
// status: "runner[0]:/path$ ").
const shellPS1 = `runner[$?]:\w$ `

// shellProfile runs the task as a command line in bash. The bottom is one
// line: a prompt is ready (the command ended; the runner's prompt carries
// its exit status), a question or REPL prompt is needs_input, anything else
// is output of a running command. With pane metadata, a foreground command
// other than the shell is busy and the alternate screen (a pager, an
// editor) is needs_input.
func shellProfile() *Profile {
	return &Profile{
		Name:        "shell",
		Description: "a bash shell; the task is a command line, its exit status the outcome",
		Command:     []string{"bash", "--noprofile", "--norc"},
		Binary:      "bash",
		Env:         map[string]string{"PS1": shellPS1},
		VersionArgs: []string{"--version"},
		Ready: []string{
			`^runner\[(?P<status>\d+)\]:.*\$$`,
			`^[\w.-]+@[\w.-]+:.*[$#]$`,
		},
		NeedsInput: []string{
			`\[[yYnN]/[yYnN]\]:?$`, // Continue? [y/N]
			`[?:]$`,                // a question or "Name:" prompt
			`^(>>>|\.\.\.)$`,       // Python REPL prompts
			`^\(END\)$|^:$`,        // less
			`^".*" \d+L, \d+B`,     // vim's file status line
		},
		Busy:                []string{`[^$#%]$`}, // the last line is output, not a prompt
		BottomLines:         1,
		EnterDelay:          Duration{50 * time.Millisecond},
		InterruptKeys:       []string{"C-c"},
		IdleCommands:        []string{"bash", "sh", "dash", "zsh", "fish", "ksh"},
		NeedsInputAtCursor:  true,
		AltScreenNeedsInput: true,
		NoAwareness:         true,
		// Measured: bash's readline reads a 1 MiB paste in 17-37 s
		// (about 28-60 KiB/s); more would take minutes.
		MaxTask: 1 << 20,
	}
}

// simProfile drives `runner agent-sim`, whose screen contract is fixed by
// the sim spec: a 3+ line box at the bottom when ready, a
// "✻ Working… (esc to interrupt)" line when busy, a numbered menu under a
// question for ask and trust. A `silent` turn shows no marker at all, so it
// is never ready.
func simProfile() *Profile {
	return &Profile{
		Name:        "sim",
		Description: "the simulated agent (runner agent-sim), for tests and the first run",
		// Its sessions' prompts (what a resumed sim recalls).
		SandboxPaths: []string{"${XDG_STATE_HOME:-~/.local/state}/runner-agent-sim/"},
		Command:      []string{"runner", "agent-sim"},
		Binary:       "runner",
		// "runner" is this binary, as in Command.
		Headless: []string{"runner", "agent-sim", "-p", PromptPlaceholder},
		Ready: []string{
			`^│ > `, // the input line of the box
			`^│ >$`,
		},
		Busy:       []string{`^[✻✽✶✢] Working… \(esc to interrupt\)`},
		NeedsInput: []string{`^❯ 1\. Yes`, `^  2\. No`},
		Trust: []TrustDialog{
			{Pattern: `^Do you trust the files in this folder\?`, Keys: []string{"1"}},
		},
		Exited: []string{`^panic: simulated crash`},
		// A silent first turn shows only the echoed prompt: not "starting".
		StartingMaxLines: -1,
		ErrorReset:       []string{`^> \S`},
		Volatile:         []string{`^[✻✽✶✢] Working…`},
		// The answer lines sit between the echoed "> prompt" and the box.
		AnswerEnd:   []string{`^╭─`},
		AnswerAfter: []string{`^> `},
		BottomLines: 8,
		EnterDelay:  Duration{20 * time.Millisecond}, // the sim needs no pause before Enter
		// The sim draws its ready box in one write at the very end of a
		// turn and never shows it while busy: a short settle is safe.
		Settle: Duration{25 * time.Millisecond},
		// The sim splits directives on LF only: without -r tmux turns the
		// newlines of a multi-line task (or the awareness block) into CR
		// and the whole task becomes one line.
		PasteRaw: true,
		// Measured: 16 MiB is taken and confirmed in about 12 s.
		MaxTask:       16 << 20,
		InterruptKeys: []string{"Escape"},
		Hook: &Hook{
			Kind: HookKindFlag,
			Args: []string{"--hook", "{command}"},
			Doc:  "--hook ARGV runs at the end of every turn with a Stop event as JSON on stdin",
		},

		// Printed when the sim exits at its prompt (C-d, a double C-c).
		SessionID: []string{`agent-sim --resume ([0-9A-Za-z_-]*[0-9][0-9A-Za-z_-]*)`},
		Resume:    []string{"--resume", SessionPlaceholder},
		QuitKeys:  []string{"C-c", "C-c"}, // the first asks "Press Ctrl-C again to exit"
	}
}

// codexNotifyScript is the sh -c script of Codex's notify program. Its
// arguments: the number N of words of the user's own notify program
// (Hook.ChainUser), those N words, then Codex's event JSON (which holds the
// user's prompt), last. The event is used only quoted, as data (case
// pattern, printf '%s'): runner's appender ({append_str}, the shell-quoted
// events path) gets it on stdin, except for the hidden turn that writes
// the thread's title (it ends while the real turn runs; should its text
// change, the supervisor tells it apart: its prompt is not the task's).
// Then the user's program runs as argv with the event appended, as Codex
// would have run it.
const codexNotifyScript = `n=$1; shift; p=; for a; do p=$a; done; ` +
	`i=0; for a; do if [ "$i" -lt "$n" ]; then set -- "$@" "$a"; fi; i=$((i+1)); done; shift "$i"; ` +
	`case "$p" in *'"input-messages":["Generate a concise, single-line task title'*) ;; *) printf '%s' "$p" | {append_str};; esac; ` +
	`if [ "$#" -gt 0 ]; then exec "$@" "$p"; fi`

// codexNotifyArg is the -c value that sets Codex's notify program: sh with
// codexNotifyScript, and "{chain}" for the user's own program.
var codexNotifyArg = func() string {
	q, _ := json.Marshal(codexNotifyScript)
	return `notify=["sh","-c",` + string(q) + `,"runner-notify",{chain}]`
}()
