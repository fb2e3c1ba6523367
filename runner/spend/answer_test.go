package spend

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runner-cli/runner/runner/profile"
)

// TestGeminiChatAnswer: Gemini CLI 0.61's AfterAgent prompt_response
// repeats the streamed chunks after the answer; the answer comes from the
// chat file the payload names (a real one, taken from a turn through the
// mock), and only when that file has the named prompt's answer.
func TestGeminiChatAnswer(t *testing.T) {
	chat, err := filepath.Abs("testdata/gemini-chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := "The answer streams word by word ANSWER-FIRST-LINE.\nA second line with the details ANSWER-DONE."
	garbled := want + " answer  streams  word  by  word"
	payload := func(path, prompt string) string {
		b, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "AfterAgent", "transcript_path": path,
			"prompt": prompt, "prompt_response": garbled})
		return string(b)
	}
	half := filepath.Join(t.TempDir(), "half.jsonl")
	b, _ := os.ReadFile(chat)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var kept []string
	for _, l := range lines {
		if !strings.Contains(l, `"type":"gemini"`) {
			kept = append(kept, l)
		}
	}
	if len(kept) == len(lines) {
		t.Fatal("testdata has no gemini record")
	}
	if err := os.WriteFile(half, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, line, want string
	}{
		{"the chat file's answer", payload(chat, "please do the ANSWER-TASK now"), want},
		{"another prompt's turn: the payload's", payload(chat, "some other prompt"), garbled},
		{"answer not written yet: the payload's", payload(half, "please do the ANSWER-TASK now"), garbled},
		{"no chat file: the payload's", payload(filepath.Join(t.TempDir(), "none"), "x"), garbled},
	} {
		ev, ok := ReadHookEvent(c.line)
		if !ok || !ev.Stop || ev.Answer != c.want {
			t.Errorf("%s: answer %q (ok %v, stop %v), want %q", c.name, ev.Answer, ok, ev.Stop, c.want)
		}
	}
}

// geminiToolTurn is a Gemini CLI 0.61 chat file (cut to what runner reads)
// of a turn whose model response calls a tool and comes with text: the
// record is written, then rewritten with its toolCalls; the tool's result
// is a "user" record; then the answer.
var geminiToolTurn = []string{
	`{"id":"u1","type":"user","content":[{"text":"please do the SPEND-ONE now"}]}`,
	`{"id":"g1","type":"gemini","content":"I'll create the file.","tokens":{"input":2023,"output":56,"cached":789,"thoughts":0,"tool":0}}`,
	`{"id":"g1","type":"gemini","content":"I'll create the file.","tokens":{"input":2023,"output":56,"cached":789,"thoughts":0,"tool":0},"toolCalls":[{"id":"run_shell_command_1","name":"run_shell_command"}]}`,
	`{"id":"u2","type":"user","content":[{"functionResponse":{"id":"run_shell_command_1","name":"run_shell_command","response":{"output":"ok"}}}]}`,
	`{"id":"g2","type":"gemini","content":"SPEND-ONE-DONE","tokens":{"input":2023,"output":56,"cached":789,"thoughts":0,"tool":0}}`,
}

// TestGeminiChatAnswerToolText: the answer is the response after the tool
// ran, not the text the tool call came with (which the AfterAgent payload
// puts first: "I'll create the file. \nSPEND-ONE-DONE"), and the turn's
// spend counts both responses, complete.
func TestGeminiChatAnswerToolText(t *testing.T) {
	chat := writeLines(t, "gemini-tool.jsonl", geminiToolTurn...)
	b, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "AfterAgent", "transcript_path": chat,
		"prompt": "please do the SPEND-ONE now", "prompt_response": "I'll create the file. \nSPEND-ONE-DONE"})
	ev, ok := ReadHookEvent(string(b))
	if !ok || ev.Answer != "SPEND-ONE-DONE" {
		t.Fatalf("answer %q (ok %v), want SPEND-ONE-DONE", ev.Answer, ok)
	}
	u, ok, complete := TurnUsage(&profile.Profile{Name: "gemini", Spend: profile.SpendGemini}, ev, "please do the SPEND-ONE", nil)
	if want := (profile.Usage{Input: 2 * (2023 - 789), Cached: 2 * 789, Output: 112}); u != want || !ok || !complete {
		t.Errorf("TurnUsage = %+v, %v, %v; want %+v, complete", u, ok, complete, want)
	}
	// The answer not written yet: not the tool call's text.
	half := writeLines(t, "gemini-half.jsonl", geminiToolTurn[:4]...)
	b, _ = json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "AfterAgent", "transcript_path": half,
		"prompt": "please do the SPEND-ONE now", "prompt_response": "SPEND-ONE-DONE"})
	if ev, _ := ReadHookEvent(string(b)); ev.Answer != "SPEND-ONE-DONE" {
		t.Errorf("answer not in the chat yet: %q, want the payload's", ev.Answer)
	}
}

// Copilot's agentStop names its session's events file, which has the
// answer: the turn's last non-empty assistant message (a tool call's
// message has none), never an earlier turn's.
func TestCopilotAnswer(t *testing.T) {
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	body := `{"type":"session.start","data":{}}
{"type":"user.message","data":{"content":"first"}}
{"type":"assistant.message","data":{"content":"first answer"}}
{"type":"user.message","data":{"content":"create a file"}}
{"type":"assistant.message","data":{"content":"","toolRequests":[{"name":"create"}]}}
{"type":"tool.execution_complete","data":{}}
{"type":"assistant.message","data":{"content":"I wrote hello.txt. Done."}}
{"type":"assistant.turn_end","data":{}}
`
	if err := os.WriteFile(events, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	line := `{"event":"Stop","data":{"sessionId":"4835963a-5a43","transcriptPath":` + strconv.Quote(events) + `,"stopReason":"end_turn"}}`
	ev, ok := ReadHookEvent(line)
	if !ok || !ev.Stop || ev.HasAnswer || ev.AnswerFile != events || ev.Session != "4835963a-5a43" {
		t.Errorf("ParseHookEvent = %+v, %v", ev, ok)
	}
	if a, ok := LateAnswer(ev, "create a file"); !ok || a != "I wrote hello.txt. Done." {
		t.Errorf("LateAnswer = %q, %v", a, ok)
	}
	// A turn with no answer yet: none, not the turn before's.
	if err := os.WriteFile(events, []byte(body+`{"type":"user.message","data":{"content":"again"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, ok := LateAnswer(ev, ""); ok {
		t.Errorf("answer %q from an earlier turn", a)
	}
	// By the prompt: the file a turn late has no answer to this turn's.
	if a, ok := copilotAnswer(events, "again"); ok {
		t.Errorf("answer %q to another prompt", a)
	}
	if a, ok := copilotAnswer(events, "create a"); !ok || a != "I wrote hello.txt. Done." {
		t.Errorf("the answer to 'create a file' = %q, %v", a, ok)
	}
	// A tool call whose model response carries text: that text is not
	// the answer, the response after the tool ran is; until it is
	// written there is none.
	tool := `{"type":"user.message","data":{"content":"make hello"}}
{"type":"assistant.message","data":{"content":"I'll create the file.","toolRequests":[{"toolCallId":"c1","name":"bash"}]}}
{"type":"assistant.turn_end","data":{}}
{"type":"tool.execution_complete","data":{}}
`
	if err := os.WriteFile(events, []byte(tool), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, ok := copilotAnswer(events, "make hello"); ok {
		t.Errorf("the tool call's text %q taken for the answer", a)
	}
	if err := os.WriteFile(events, []byte(tool+`{"type":"assistant.message","data":{"content":"Created hello.txt.","toolRequests":[]}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if a, ok := copilotAnswer(events, "make hello"); !ok || a != "Created hello.txt." {
		t.Errorf("the answer after the tool = %q, %v", a, ok)
	}
	if _, ok := copilotAnswer(filepath.Join(dir, "missing"), ""); ok {
		t.Error("an answer from a missing file")
	}
}

// TestDroidLateAnswer: Factory Droid 0.225's Stop payload names its
// session record (under testdata/droid, a real one: a Create
// approved, then its answer; a command refused; a turn that failed on an
// unreachable provider), which has the answer the payload does not.
func TestDroidLateAnswer(t *testing.T) {
	const rec = "testdata/droid/.factory/sessions/-tmp-yy-proj1/791ae85d-4149-4a78-962f-79158d2a347b.jsonl"
	line := `{"session_id":"791ae85d-4149-4a78-962f-79158d2a347b","transcript_path":"/home/u/.factory/sessions/-p/791ae85d-4149-4a78-962f-79158d2a347b.jsonl","cwd":"/p","permission_mode":"off","hook_event_name":"Stop","stop_hook_active":false}`
	ev, ok := profile.ParseHookEvent(line)
	if !ok || !ev.Stop || ev.AnswerFile != ev.Transcript || ev.HasAnswer {
		t.Fatalf("ParseHookEvent: %+v, %v; want a Stop whose answer is in its transcript", ev, ok)
	}
	cases := []struct {
		sig, want string
		ok        bool
	}{
		{"please do the WRITEFILE", "I wrote hello.txt for you. Done.", true},
		{"please do SHELLCMD", "", false}, // refused: no answer but the screen's
		{"this one fails", "", false},     // the provider unreachable
		{"", "", false},                   // the last turn's: the failed one
		{"not a prompt of it", "", false},
	}
	for _, c := range cases {
		if a, ok := droidAnswer(rec, c.sig); a != c.want || ok != c.ok {
			t.Errorf("droidAnswer(%q) = %q, %v; want %q, %v", c.sig, a, ok, c.want, c.ok)
		}
	}
	ev.AnswerFile = rec // as the supervisor maps it
	if a, ok := LateAnswer(ev, "WRITEFILE"); !ok || a != "I wrote hello.txt for you. Done." {
		t.Errorf("LateAnswer = %q, %v", a, ok)
	}
}

// TestDroidLateFailure: a Droid turn that ended on an error its provider
// gave (here unreachable) has the error in its record, after the prompt
// and before the turn's outcome; a completed turn has none.
func TestDroidLateFailure(t *testing.T) {
	ev := profile.HookEvent{Stop: true, AnswerFile: "testdata/droid/.factory/sessions/-tmp-yy-proj1/791ae85d-4149-4a78-962f-79158d2a347b.jsonl"}
	f, ended := LateFailure(ev, "this one fails")
	if !ended || !strings.HasPrefix(f, "Unable to reach http://127.0.0.1:") {
		t.Errorf("the failed turn: %q, %v; want its error", f, ended)
	}
	if f, ended := LateFailure(ev, "please do the WRITEFILE"); !ended || f != "" {
		t.Errorf("the completed turn: %q, %v; want no failure", f, ended)
	}
	if f, ended := LateFailure(ev, "a prompt it never had"); ended || f != "" {
		t.Errorf("no such turn: %q, %v", f, ended)
	}
	ev.AnswerFile = "testdata/copilot-events.jsonl" // another CLI's record: nothing to say
	if f, ended := LateFailure(ev, ""); ended || f != "" {
		t.Errorf("not a Droid record: %q, %v", f, ended)
	}
}
