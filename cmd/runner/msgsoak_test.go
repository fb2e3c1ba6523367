package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/runner-cli/runner/state"
)

// scriptEnv is the environment of the script's commands, for programs run
// outside ts.Exec (which is not safe from several goroutines).
func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
		"RUNNER_TMUX_SOCKET", "RUNNER_STATE_DIR", "RUNNER_CONFIG", "TERM", "TMPDIR"} {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func scriptStateDir(ts *testscript.TestScript) string {
	if d := ts.Getenv("RUNNER_STATE_DIR"); d != "" {
		return d
	}
	return filepath.Join(ts.Getenv("XDG_STATE_HOME"), "runner")
}

// stormSend is one `runner msg` of msgstorm and what it printed.
type stormSend struct {
	To, Type, Token string
	Exit            int
	Outcomes        []struct {
		To, ID, Result, Reason string
	}
	Stderr string
}

// cmdMsgStorm: msgstorm N WORKERS OUT IDFILE sends N messages "say
// note-K-end" from WORKERS concurrent loops of `runner msg --json`, each to
// a random task of IDFILE (one id per line) with a random type, and writes
// what every call returned to OUT (JSON lines).
func cmdMsgStorm(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: msgstorm N WORKERS OUT IDFILE")
	}
	var n, workers int
	fmt.Sscan(args[0], &n)
	fmt.Sscan(args[1], &workers)
	ids := strings.Fields(ts.ReadFile(args[3]))
	if len(ids) == 0 {
		ts.Fatalf("msgstorm: no ids in %s", args[3])
	}
	types := []string{"request", "update", "result", "dependency"}
	env := scriptEnv(ts)
	bin, err := exec.LookPath("runner")
	if err != nil {
		for _, p := range strings.Split(ts.Getenv("PATH"), ":") {
			if _, err := os.Stat(filepath.Join(p, "runner")); err == nil {
				bin = filepath.Join(p, "runner")
				break
			}
		}
	}
	if bin == "" {
		ts.Fatalf("msgstorm: no runner in PATH")
	}
	sends := make([]stormSend, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for k := range jobs {
				s := &sends[k]
				s.To, s.Type, s.Token = ids[rand.IntN(len(ids))], types[rand.IntN(len(types))], fmt.Sprintf("note-%d-end", k)
				cmd := exec.Command(bin, "msg", "--json", "--type", s.Type, s.To, "say "+s.Token)
				cmd.Env, cmd.Dir = env, ts.Getenv("WORK")
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if ee, ok := err.(*exec.ExitError); ok {
					s.Exit = ee.ExitCode()
				} else if err != nil {
					s.Exit = -1
				}
				s.Stderr = stderr.String()
				_ = json.Unmarshal(out, &s.Outcomes)
			}
		})
	}
	for k := range n {
		jobs <- k
	}
	close(jobs)
	wg.Wait()
	f, err := os.Create(ts.MkAbs(args[2]))
	ts.Check(err)
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, s := range sends {
		ts.Check(enc.Encode(s))
	}
}

// cmdCheckMsgs: checkmsgs STORM [MAXREFUSED] checks, after a msgstorm whose recipients
// have all settled, that every message was delivered exactly once or refused
// with a reason, and that the state, the journal and the agents' transcripts
// agree:
//   - each call got exit 0 with one outcome (queued, delivering or merged
//     into a message id) or exit 2 with a refusal reason;
//   - every message in the state is delivered; the ids the calls created
//     are exactly the state's messages;
//   - the journal has one msg-delivered per message and one event per call;
//   - every accepted note is answered exactly once in its recipient's
//     transcript, and no refused note at all.
func cmdCheckMsgs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: checkmsgs STORM [MAXREFUSED]")
	}
	maxRefused := -1
	if len(args) == 2 {
		fmt.Sscan(args[1], &maxRefused)
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	var sends []stormSend
	for line := range strings.Lines(string(data)) {
		var s stormSend
		ts.Check(json.Unmarshal([]byte(line), &s))
		sends = append(sends, s)
	}
	dir := scriptStateDir(ts)
	store, err := state.Open(dir)
	ts.Check(err)
	full, err := store.Read(context.Background())
	ts.Check(err)
	all, err := full.AllMessages() // the archived ones too
	ts.Check(err)
	var st struct {
		Messages map[string]*state.Message
	}
	st.Messages = map[string]*state.Message{}
	for _, m := range all {
		st.Messages[m.ID] = m
	}

	created := map[string]bool{}
	accepted := map[string]string{} // token → recipient
	refused := map[string]bool{}
	results := map[string]int{}
	for _, s := range sends {
		switch {
		case s.Exit == 0 && len(s.Outcomes) == 1 && s.Outcomes[0].ID != "":
			o := s.Outcomes[0]
			results[o.Result]++
			if o.Result != "merged" {
				if created[o.ID] {
					ts.Fatalf("message id %s created twice", o.ID)
				}
				created[o.ID] = true
			}
			accepted[s.Token] = s.To
		case s.Exit == 2 && len(s.Outcomes) == 1 && s.Outcomes[0].Result == "refused" && s.Outcomes[0].Reason != "":
			results["refused"]++
			refused[s.Token] = true
			if maxRefused >= 0 && len(refused) > maxRefused {
				ts.Fatalf("more than %d refusals; this one: %s", maxRefused, s.Outcomes[0].Reason)
			}
		default:
			ts.Fatalf("runner msg %s %s: exit %d, outcomes %+v, stderr %s", s.To, s.Token, s.Exit, s.Outcomes, s.Stderr)
		}
	}
	for id := range created {
		m, ok := st.Messages[id]
		if !ok {
			ts.Fatalf("message %s was accepted but is not in the state", id)
		}
		if m.Status != "delivered" {
			ts.Fatalf("message %s is %s, not delivered", id, m.Status)
		}
	}
	if len(st.Messages) != len(created) {
		ts.Fatalf("the state has %d messages, the calls created %d", len(st.Messages), len(created))
	}

	// The journal.
	jf, err := os.Open(filepath.Join(dir, "journal.jsonl"))
	ts.Check(err)
	defer jf.Close()
	delivered := map[string]int{}
	events := map[string]int{}
	idRe := regexp.MustCompile(`^(m_[a-z0-9]{8}) `)
	sc := bufio.NewScanner(jf)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev struct{ Kind, Message string }
		ts.Check(json.Unmarshal(sc.Bytes(), &ev))
		if !strings.HasPrefix(ev.Kind, "msg-") {
			continue
		}
		events[ev.Kind]++
		if ev.Kind == "msg-delivered" {
			m := idRe.FindStringSubmatch(ev.Message)
			if m == nil {
				ts.Fatalf("msg-delivered event without an id: %q", ev.Message)
			}
			delivered[m[1]]++
		}
	}
	for id := range created {
		if delivered[id] != 1 {
			ts.Fatalf("message %s has %d msg-delivered events, want 1", id, delivered[id])
		}
	}
	for k, n := range results {
		if events["msg-"+k] != n {
			ts.Fatalf("journal: %d msg-%s events, the calls got %d", events["msg-"+k], k, n)
		}
	}

	// The transcripts: each accepted note answered exactly once.
	logs := map[string]string{}
	for token, to := range accepted {
		if _, ok := logs[to]; !ok {
			b, err := os.ReadFile(filepath.Join(dir, "logs", to+".log"))
			ts.Check(err)
			logs[to] = string(b)
		}
		// The sim prints the answer line once. The composer shows the
		// pasted "say …" lines before Enter; they are not answers.
		if c := strings.Count(logs[to], token) - strings.Count(logs[to], "say "+token); c != 1 {
			ts.Fatalf("%s is answered %d times in %s's transcript, want 1", token, c, to)
		}
	}
	for token := range refused {
		for to, l := range logs {
			if strings.Count(l, token) != strings.Count(l, "say "+token) {
				ts.Fatalf("refused %s reached %s", token, to)
			}
		}
	}
	ts.Logf("checkmsgs: %d calls: %v; %d messages delivered once each; journal %v", len(sends), results, len(created), events)
}
