// Package agentsim is the simulated agent behind the hidden `runner
// agent-sim` command: a scripted stand-in for a TUI coding agent (Claude
// Code, Codex, …) with a real terminal UI, so the tmux controller, the state
// detector and the dispatch lifecycle can be tested deterministically.
//
// It owns the terminal it runs on (Run) or none at all (RunHeadless, the
// `-p PROMPT` mode). Of the module it imports only internal/clock,
// internal/ctxtime, internal/subproc (the programs run and the hooks
// start) and internal/textutil (TestImports).
//
// # Terminal
//
// Run puts the terminal into raw mode with golang.org/x/term (like
// cfmakeraw), switches bracketed paste on (ESC[?2004h) and hides the cursor;
// all of it is undone before Run returns, whatever the reason: C-d, exit N,
// crash, SIGINT/SIGTERM/SIGHUP, a cancelled context or a panic. The size
// comes from term.GetSize; SIGWINCH repaints the screen at the new size.
//
// # Screen contract (other code matches on it)
//
// The screen is a scrolling history with a live area under it that always
// ends on the last row of the terminal: at start the cursor moves to the
// bottom row (scrolling the screen up one line), and when the live area
// shrinks blank lines make up the difference.
//
//   - Ready: a box the width of the terminal,
//     "╭──…──╮" / "│ > typed text…│" / "╰──…──╯". Multi-line or wrapped input
//     grows the box up to 6 content rows, continuation rows start "│   ",
//     and when rows are left out the last is "│   … +N lines".
//   - Busy: after Enter the box goes, "> " + first prompt line (+ " [+N
//     lines]") is echoed into the history, and the live area is the single
//     line "✻ Working… (esc to interrupt)", its glyph cycling ✻ ✽ ✶ ✢ every
//     100 ms. Answer lines go into the history above it. Keys other than
//     Escape and C-c are dropped while busy (pastes too).
//   - End of turn: a blank line, then the ready box again.
//   - ask: the live area is the question, "❯ 1. Yes" and "  2. No"; keys 1,
//     2, Enter (the selection), Escape (no), Up/Down move ❯. The question
//     then goes into the history followed by "answered: yes|no".
//   - Trust (Options.Trust): before the first box, "Do you trust the files in
//     this folder?", "❯ 1. Yes, proceed", "  2. No, exit"; 1 or Enter go on,
//     2 or Escape (or C-c) print "Not trusted." and exit 1.
//   - Late trust (Options.TrustLate): the box comes first; the first
//     submitted prompt is echoed and held, and the same dialog appears;
//     accepting it runs the held prompt's turn (it is not submitted again).
//   - Escape or C-c while busy or asking: "Interrupted." and the ready box;
//     the rest of the prompt is skipped and the hook does not run.
//   - At the ready box: C-c clears the input; with empty input it prints
//     "Press Ctrl-C again to exit" and a second C-c within 1 s exits 0. C-d
//     with empty input exits 0. Either exit prints the resume hint
//     "Resume this session with: runner agent-sim --resume <id>" (ResumeHint). C-u clears the input, Backspace (0x7f or
//     0x08) deletes a rune, C-j (LF) adds a newline, Enter (CR) submits, an
//     empty input submits nothing. Unknown escape sequences are ignored.
//     Escape twice within 1 s with empty input opens Codex's transcript
//     browsing view: the box gives way to "  Browsing transcript · ↑↓/jk
//     scroll · ↵ rewind · esc back" until Escape goes back to the box
//     (other keys are dropped there).
//   - crash: "panic: simulated crash", a blank line and a few goroutine-trace
//     lines, exit 2.
//
// # Input
//
// Everything between ESC[200~ and ESC[201~ is kept verbatim in the input:
// LF, CR, CRLF, tabs, escape bytes, any UTF-8. Typed text is kept as bytes,
// so a UTF-8 sequence split across reads needs no care. The submitted prompt
// is exactly these bytes. Input that arrives during Options.Startup, before
// the first box, is discarded, as with real agents.
//
// # Directives
//
// Each line of a submitted prompt (CR before LF is ignored) is one of:
//
//	sleep DURATION    busy with the spinner (Go duration: 2s, 150ms)
//	silent DURATION   busy without a spinner: it is erased, then nothing
//	                  is written for DURATION (a resize still repaints)
//	say TEXT          an answer line
//	write PATH TEXT   write TEXT and "\n" to PATH (relative to the cwd;
//	                  directories are created); answers "Wrote PATH"
//	ask QUESTION      the Yes/No menu above; answers "answered: yes|no"
//	confirm QUESTION  the question, then "  [y] Yes   [n] No": no numbers,
//	                  no cursor; y or n (either case) answers, Escape is
//	                  no, other keys (Enter, digits) are dropped; answers
//	                  "confirmed: yes|no"
//	run ARG...        run a program (split on blanks, '…'/"…" quote, no
//	                  shell) in the cwd and environment, stdin /dev/null;
//	                  shows its combined output and "exit status N" if N≠0
//	exit N            exit with code N (0-255) at once
//	crash             print the panic text and exit 2
//	hook subagent     run the hook now with a SubagentStop event (a
//	                  sub-agent's end inside the turn)
//	hook none         no Stop hook at the end of this turn
//	hook early D      run the Stop hook when the lines are done, then stay
//	                  busy for D before the ready box (a hook that comes
//	                  before the final frame)
//	hook late D       run the Stop hook D after the ready box
//	recall            one "Recall: <first line>" per earlier prompt of the
//	                  session (Options.SessionID, also after a resume)
//	limit TEXT        a usage limit ends the turn here: TEXT as its last
//	                  line, no Stop hook, the rest of the prompt skipped
//	usage IN OUT [CACHED [COST]]
//	                  the turn used IN input, OUT output and CACHED cached
//	                  tokens (and COST dollars): summed over the turn's
//	                  usage lines into the Stop hook's "usage"; each line
//	                  also runs the hook at once with a "Usage" event
//	                  whose "usage" is the turn's sum so far
//
// A keyword with bad arguments ("sleep well", "exit now") is not a
// directive. Blank lines are ignored. The first other line is answered
// "Done: <line>", once per prompt.
//
// # Record and hook
//
// Options.Record gets {"prompt": "<exact text>"} as one JSON line per
// submitted prompt, appended and fsynced before the turn starts (JSON
// cannot hold invalid UTF-8; such bytes are recorded as U+FFFD).
// Options.Hook runs after each turn that finished (not interrupted, not
// exit/crash), as the last thing of the turn, before the ready box comes
// back (as Claude Code runs its Stop hooks), with the sim's cwd and
// environment and on stdin, like Claude Code's Stop hook:
//
//	{"hook_event_name":"Stop","cwd":"…","session_id":"…","last_prompt":"…",
//	 "last_assistant_message":"<the turn's answer lines>",
//	 "usage":{"input_tokens":…,"output_tokens":…,"cache_read_input_tokens":…,"cost_usd":…}}
//
// ("usage" only after a turn with usage lines, cost_usd only when one
// gave a COST).
//
// A hook that fails or runs over 30 s gives one "⚠ hook …" line and the sim
// goes on.
//
// # Sessions
//
// Every submitted prompt's first line is appended to a file per session in
// Options.SessionDir. Options.Resumed (--resume ID) starts on session ID:
// "Resumed session ID" is printed first, and recall sees its prompts, as a
// real CLI resumed on its conversation would.
//
// # Headless
//
// RunHeadless runs one prompt's directives without a TUI: answer lines on
// stdout, ask prints its question and answers no, exit N and crash as in the
// TUI (the panic text on stderr), the record and the hook as above.
package agentsim
