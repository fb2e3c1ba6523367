package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocsExamples runs the shell examples of the manual (README.md and
// docs/*.md; docs/cli is made from the commands' own examples, which
// TestHelpExamples runs) in the environment of TestHelpExamples, with
// projects api and web registered. Every fenced block whose info string
// starts with sh, bash, shell or console is one example: its placeholders
// (t_abc123, s_abc123, %3, …) are fresh for it, its lines run in order and
// exit 0 or the code their comment gives, as in the help. In a console
// block the lines after "$ " are the commands and the rest is output, not
// compared. A line is one of:
//   - a runner command, as typed (pipes, "; echo …" and all), or
//     NAME=$(runner …), or NAME=$(runner …) || exit;
//   - tmux -L runner …: runner's own tmux server, here the private one;
//   - cd DIR or export NAME=VALUE, for the lines after it;
//   - a # comment, skipped.
//
// Anything else fails the test: run it this way, or mark the block
// ```sh norun with the reason in an HTML comment on the line before it
// (<!-- norun: it installs packages -->). What is not run is still
// checked: every runner command in it (at a line's start, after $(, a
// pipe, ;, && or ||, if, then, …) must name a command with the flags and
// number of arguments it takes. Not run either, for the reason
// examplesNotRun gives: a line whose command TestHelpExamples cannot run
// (attach, watch: a terminal). A line whose comment says "inside a task's
// pane" runs with that pane's environment (RUNNER_TASK_ID) of a task with
// a parent and a busy sibling. Before a block that adds a project the
// environment registered (the README's tour), that project is removed;
// after each block every task still active is ended, and api and web are
// registered again.
func TestDocsExamples(t *testing.T) {
	t.Parallel() // alongside the scripts: it waits more than it computes
	blocks := docBlocks(t, filepath.Join("..", ".."))
	e := newExampleEnv(t, "api", "web")
	var ran, notRun, norun int
	for _, b := range blocks {
		name := fmt.Sprintf("%s:%d", b.file, b.line)
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			lines := parseDocBlock(t, b)
			if t.Failed() {
				return
			}
			if b.norun != "" {
				norun++
				t.Skipf("not run (```%s): %s", b.info, b.norun)
			}
			for _, l := range lines {
				if l.notRun != "" {
					notRun++
				}
			}
			e.beforeDocBlock(t, lines)
			defer e.afterDocBlock(t)
			ran += e.runExample(t, lines)
		})
	}
	t.Logf("%d blocks: %d command lines run, %d lines not run in blocks that ran, %d blocks not run (norun)",
		len(blocks), ran, notRun, norun)
}

// docBlock is a fenced block of a doc that holds shell.
type docBlock struct {
	file  string // relative to the repository
	line  int    // of the opening fence
	info  string // the info string: sh, console, sh norun, …
	norun string // why it is not run: the <!-- norun: … --> comment before it
	text  []string
}

var (
	docShellLangs = []string{"sh", "bash", "shell", "console"}
	docNorun      = regexp.MustCompile(`^<!-- norun: (.+) -->$`)
)

// docBlocks reads the shell blocks of README.md and docs/*.md (not
// docs/cli), and fails the test for a block without an info string that
// holds a command ("runner …" or "$ …": say sh, console or text), and for
// a norun block without its reason.
func docBlocks(t *testing.T, root string) []docBlock {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var blocks []docBlock
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			fence := strings.TrimSpace(lines[i])
			if !strings.HasPrefix(fence, "```") {
				continue
			}
			b := docBlock{file: rel, line: i + 1, info: strings.TrimSpace(strings.TrimPrefix(fence, "```"))}
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
				b.text = append(b.text, lines[i])
			}
			words := strings.Fields(b.info)
			if len(words) == 0 {
				for _, l := range b.text {
					if cmds := runnerCommands(l); strings.HasPrefix(l, "$ ") || len(cmds) > 0 && docIsCommand(cmds[0]) {
						t.Errorf("%s:%d: a block without an info string holds a command (%q): say sh, console or text", rel, b.line, l)
						break
					}
				}
				continue
			}
			if !slices.Contains(docShellLangs, words[0]) {
				continue
			}
			if slices.Contains(words[1:], "norun") {
				prev := ""
				for j := b.line - 2; j >= 0 && prev == ""; j-- {
					prev = strings.TrimSpace(lines[j])
				}
				m := docNorun.FindStringSubmatch(prev)
				if m == nil {
					t.Errorf("%s:%d: ```%s without its reason: put <!-- norun: WHY --> on the line before it", rel, b.line, b.info)
					continue
				}
				b.norun = m[1]
			}
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// docIsCommand reports whether words (runner first) name a runner command.
func docIsCommand(words []string) bool {
	a, flush := newApp(strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" })
	defer flush()
	root := a.newRootCmd()
	c, _, err := root.Find(words[1:])
	return err == nil && c != root
}

// parseDocBlock is a block's lines as parseExample makes them, each runner
// command checked against the command tree.
func parseDocBlock(t *testing.T, b docBlock) []exampleLine {
	var texts []string
	for _, raw := range b.text {
		text := strings.TrimSpace(raw)
		if strings.HasPrefix(b.info, "console") {
			var ok bool
			if text, ok = strings.CutPrefix(text, "$ "); !ok {
				continue // output
			}
		}
		if n := len(texts); n > 0 && strings.HasSuffix(texts[n-1], `\`) {
			texts[n-1] = strings.TrimSuffix(texts[n-1], `\`) + " " + text
			continue
		}
		texts = append(texts, text)
	}
	var out []exampleLine
	for _, text := range texts {
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		for _, words := range runnerCommands(text) {
			if _, err := checkRunnerCommand(words); err != nil {
				t.Errorf("%s:%d: %s: %v", b.file, b.line, text, err)
			}
		}
		if b.norun != "" {
			continue
		}
		l := parseExampleLine(text)
		words := shellWords(l.command)
		switch {
		case len(words) == 2 && words[0] == "cd":
			l.cd = words[1]
		case len(words) == 2 && words[0] == "export" && strings.Contains(words[1], "="):
			l.export = words[1]
		case len(words) > 0 && words[0] == "runner":
			if path, err := checkRunnerCommand(words); err == nil && examplesNotRun[path] != "" {
				l.notRun = examplesNotRun[path]
			}
		case strings.HasPrefix(l.command, "tmux -L runner "):
		default:
			t.Errorf("%s:%d: %s: neither a runner command, NAME=$(runner …), tmux -L runner, cd, export nor a # comment: "+
				"run it so, or mark the block norun with its reason", b.file, b.line, text)
			continue
		}
		out = append(out, l)
	}
	return out
}

// checkRunnerCommand parses a runner command's words (runner first) as the
// binary would, without running it: the command must exist and take the
// flags and the number of arguments given. It returns the command's path.
func checkRunnerCommand(words []string) (string, error) {
	a, flush := newApp(strings.NewReader(""), io.Discard, io.Discard, func(string) string { return "" })
	defer flush()
	root := a.newRootCmd()
	c, args, err := root.Find(words[1:])
	if err != nil {
		return "", err
	}
	if err := c.ParseFlags(args); err != nil {
		return c.CommandPath(), fmt.Errorf("%s: %w", c.CommandPath(), err)
	}
	if c.Args != nil {
		if err := c.ValidateArgs(c.Flags().Args()); err != nil {
			return c.CommandPath(), fmt.Errorf("%s: %w", c.CommandPath(), err)
		}
	}
	return c.CommandPath(), nil
}

// runnerCommands are the words of each runner command in a shell line:
// at its start, or after an operator ($(, |, ;, &&, ||, …) or a keyword
// (if, then, do, …), up to the next operator.
func runnerCommands(line string) [][]string {
	var out [][]string
	var cur []string
	start, in := true, false
	for _, tok := range shellTokens(line) {
		switch {
		case tok.op:
			if in {
				out = append(out, cur)
			}
			cur, start, in = nil, true, false
		case start && slices.Contains([]string{"if", "then", "else", "elif", "do", "while", "until", "!"}, tok.text):
		case start:
			start, in = false, tok.text == "runner"
			cur = []string{tok.text}
		case in:
			cur = append(cur, tok.text)
		}
	}
	if in {
		out = append(out, cur)
	}
	return out
}

// shellWords are the words of a line's first command.
func shellWords(line string) []string {
	var out []string
	for _, tok := range shellTokens(line) {
		if tok.op {
			break
		}
		out = append(out, tok.text)
	}
	return out
}

type shellToken struct {
	text string
	op   bool // an operator: | || & && ; ( ) $( or a redirection
}

// shellTokens splits a line into words (quotes removed) and operators, as
// sh would, up to a # comment: enough for the docs' lines, not a shell.
func shellTokens(line string) []shellToken {
	var toks []shellToken
	var word strings.Builder
	inWord := false
	flush := func() {
		if inWord {
			toks = append(toks, shellToken{text: word.String()})
		}
		word.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				j = len(line) - i - 1
			}
			word.WriteString(line[i+1 : i+1+j])
			i, inWord = i+1+j, true
		case c == '"':
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				word.WriteByte(line[i])
			}
			inWord = true
		case c == ' ' || c == '\t':
			flush()
		case c == '#' && !inWord:
			flush()
			return toks
		case c == '$' && i+1 < len(line) && line[i+1] == '(':
			flush()
			toks = append(toks, shellToken{text: "$(", op: true})
			i++
		case strings.IndexByte("|&;()<>", c) >= 0:
			if c == '>' || c == '<' {
				if w := word.String(); inWord && strings.Trim(w, "0123456789") == "" {
					word.Reset()
					inWord = false // 2> is the redirection's
				}
			}
			flush()
			toks = append(toks, shellToken{text: string(c), op: true})
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flush()
	return toks
}

// beforeDocBlock removes a project the block adds itself, so that it adds
// it as a new user would (the README's tour adds api).
func (e *exampleEnv) beforeDocBlock(t *testing.T, lines []exampleLine) {
	for _, l := range lines {
		if w := shellWords(l.command); len(w) >= 4 && w[0] == "runner" && w[1] == "project" && w[2] == "add" {
			e.exec(t, nil, "runner", "project", "rm", w[3]) // exit 2 when it is not registered
		}
	}
}

// afterDocBlock ends every task the block left active (those it made
// itself, not through placeholders) and registers api and web again.
func (e *exampleEnv) afterDocBlock(t *testing.T) {
	var tasks []struct{ ID string }
	if out := e.runner(t, "ps", "--json"); json.Unmarshal([]byte(out), &tasks) != nil {
		t.Errorf("runner ps --json:\n%s", out)
	}
	for _, task := range tasks {
		e.exec(t, nil, "runner", "cancel", "--kill", task.ID)
	}
	for _, name := range []string{"api", "web"} {
		e.exec(t, nil, "runner", "project", "add", name, filepath.Join(e.home, "src", name)) // exit 2 when it is there
	}
}

func TestRunnerCommands(t *testing.T) {
	for _, tc := range []struct {
		line string
		want [][]string
	}{
		{`runner ps --all   # active and finished`, [][]string{{"runner", "ps", "--all"}}},
		{`A=$(runner dispatch . --detach "add it; now") || exit`, [][]string{{"runner", "dispatch", ".", "--detach", "add it; now"}}},
		{`tmux -L runner capture-pane -p -t %3 | runner agents detect --file - --agent claude`,
			[][]string{{"runner", "agents", "detect", "--file", "-", "--agent", "claude"}}},
		{`if runner dispatch api --print-answer "Review it." >"$out" 2>"$out.err"`,
			[][]string{{"runner", "dispatch", "api", "--print-answer", "Review it."}}},
		{`runner tmux exec --pane "$pane" -- 'make test'; echo "make exited $?"`,
			[][]string{{"runner", "tmux", "exec", "--pane", "$pane", "--", "make test"}}},
		{`runner events --follow | while IFS= read -r line; do runner msg t_abc123 "$line"; done`,
			[][]string{{"runner", "events", "--follow"}, {"runner", "msg", "t_abc123", "$line"}}},
		{`echo runner ps`, nil},
	} {
		if got := runnerCommands(tc.line); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("runnerCommands(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestCheckRunnerCommand(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{`runner ps --all --json`, true},
		{`runner dispatch api --after "$A,$B" --detach "write the test"`, true},
		{`runner attach t_abc123 --print`, true},
		{`runner gc [--older-than 2h]`, false}, // a synopsis, not an example
		{`runner ps --bogus`, false},
		{`runner cancel`, false},
		{`runner nosuch`, false},
	} {
		if _, err := checkRunnerCommand(shellWords(tc.line)); (err == nil) != tc.ok {
			t.Errorf("checkRunnerCommand(%q): %v, want ok %v", tc.line, err, tc.ok)
		}
	}
}
