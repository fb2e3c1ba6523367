package watch

import (
	"strings"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/projects"
	"github.com/runner-cli/runner/state"
)

func TestBuild(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	task := func(id, project string, s state.Status, age time.Duration, parent string) *state.Task {
		at := now.Add(-age)
		t := &state.Task{ID: id, Project: project, Dir: "/src/" + project, Agent: "sim", Text: "do " + id,
			Status: s, Created: at, Parent: parent, History: []state.StatusChange{{Status: s, Time: at}}}
		if s.IsTerminal() {
			t.Ended = at
		}
		return t
	}
	st := &state.State{Projects: map[string]*state.Project{"api": {Name: "api", Dir: "/src/api"}}, Tasks: map[string]*state.Task{}}
	for _, t := range []*state.Task{
		task("t_a", "api", state.StatusDone, time.Hour, ""),
		task("t_b", "api", state.StatusRunning, 2*time.Hour, ""),
		task("t_c", "api", state.StatusNeedsInput, time.Minute, "t_b"),
		task("t_d", "web", state.StatusDone, 30*time.Minute, ""),
		task("t_e", "web", state.StatusFailed, 5*time.Hour, ""), // older than the recent window
		task("t_f", "zed", state.StatusQueued, time.Second, ""),
		task("t_g", "", state.StatusDone, time.Minute, "t_x"),    // parent not listed: a root; grouped under its dir
		task("t_h", "api", state.StatusRunning, 3*time.Hour, ""), // the same name on a host: a group of its own
		task("t_i", "", state.StatusDone, 2*time.Minute, ""),     // a path on a host
	} {
		st.Tasks[t.ID] = t
	}
	st.Tasks["t_g"].Dir = "/tmp/scratch"
	st.Tasks["t_h"].Tmux.Host = "gpu"
	st.Tasks["t_i"].Dir, st.Tasks["t_i"].Tmux.Host = "/srv/x", "gpu"
	layout := func(rows []Row) string {
		var b []string
		for _, r := range rows {
			if r.Task == nil {
				b = append(b, "["+r.Project+"]")
				continue
			}
			b = append(b, strings.Repeat(">", r.Depth)+r.Task.ID)
		}
		return strings.Join(b, " ")
	}
	for _, c := range []struct {
		name string
		f    Filter
		want string
		n    int // tasks counted
	}{
		{"default: active groups first, children under parents, old finished left out", Filter{},
			"[api] t_b >t_c t_a [api @gpu] t_h [zed] t_f [/tmp/scratch] t_g [host:gpu:/srv/x] t_i [web] t_d", 8},
		{"all", Filter{All: true}, "[api] t_b >t_c t_a [api @gpu] t_h [zed] t_f [/tmp/scratch] t_g [host:gpu:/srv/x] t_i [web] t_d t_e", 9},
		{"recent window", Filter{Recent: 10 * time.Minute}, "[api] t_b >t_c [api @gpu] t_h [zed] t_f [/tmp/scratch] t_g [host:gpu:/srv/x] t_i", 6},
		{"project by name", Filter{Project: projects.Ref{Name: "web"}, All: true}, "[web] t_d t_e", 2},
		{"project by dir", Filter{Project: projects.Ref{Dir: "/tmp/scratch"}}, "[/tmp/scratch] t_g", 1},
		{"text filter, case-insensitive, on status too", Filter{Text: "NEEDS"}, "[api] t_c", 1},
		{"text filter on id", Filter{Text: "t_d"}, "[web] t_d", 1},
		{"nothing matches", Filter{Text: "zzz"}, "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows, counts := Build(st, now, c.f)
			if got := layout(rows); got != c.want {
				t.Errorf("rows\n got %s\nwant %s", got, c.want)
			}
			total := 0
			for _, n := range counts {
				total += n
			}
			if total != c.n {
				t.Errorf("counts %v: %d tasks, want %d", counts, total, c.n)
			}
		})
	}
}

func TestRowFields(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	tk := &state.Task{ID: "t_a", Project: "api", Status: state.StatusNeedsInput, Created: now.Add(-time.Hour),
		History: []state.StatusChange{{Status: state.StatusRunning, Time: now.Add(-time.Hour)}, {Status: state.StatusNeedsInput, Time: now.Add(-time.Minute)}},
		Turns:   []state.Turn{{Time: now, Summary: "first"}, {Time: now, Summary: "latest"}}}
	st := &state.State{Tasks: map[string]*state.Task{"t_a": tk}}
	st.AddMessage(&state.Message{ID: "m_1", To: "t_a", From: "user", Status: state.MessagePending, Text: "hi", Created: now})
	rows, _ := Build(st, now, Filter{})
	r := rows[1]
	if !r.Since.Equal(now.Add(-time.Minute)) || r.Summary != "latest" || r.Queue != 1 {
		t.Errorf("row: since %v summary %q queue %d; want the status's start, the latest turn, 1 queued", r.Since, r.Summary, r.Queue)
	}
}

// Without inotify the preview is refreshed on a timer.
func TestFeedWithoutInotify(t *testing.T) {
	f := &feed{}
	f.follow("/some/transcript")
	if f.watched != "/some/transcript" {
		t.Fatalf("watched %q", f.watched)
	}
	if _, ok := f.nextPaneEvent()().(paneMsg); !ok {
		t.Fatal("no refresh without a watcher")
	}
}

// TestBuildGroups: a group's candidates are one row (its first candidate
// standing for it) until expanded: then a header and each candidate under
// it; the `/` filter finds them by the group's id.
func TestBuildGroups(t *testing.T) {
	now := clock.Now()
	st := &state.State{Projects: map[string]*state.Project{}, Tasks: map[string]*state.Task{}}
	for i, id := range []string{"t_c1", "t_c2", "t_c3", "t_solo"} {
		at := now.Add(-time.Duration(i) * time.Minute)
		tk := &state.Task{ID: id, Project: "api", Dir: "/src/api", Agent: "sim", Text: "fix it", Status: state.StatusRunning, Created: at}
		if id != "t_solo" {
			tk.Group = "g_one"
		}
		st.Tasks[id] = tk
	}
	st.Tasks["t_c2"].Status = state.StatusDone
	rows, counts := Build(st, now, Filter{})
	if len(rows) != 3 || rows[1].Group != "g_one" || rows[1].Task == nil || len(rows[1].Members) != 3 || rows[2].Task.ID != "t_solo" {
		t.Fatalf("collapsed: %+v", rows)
	}
	if counts[state.StatusRunning] != 3 || counts[state.StatusDone] != 1 {
		t.Errorf("counts %v: every candidate counts", counts)
	}
	rows, _ = Build(st, now, Filter{Expanded: map[string]bool{"g_one": true}})
	if len(rows) != 6 || rows[1].Group != "g_one" || rows[1].Task != nil || rows[2].Depth != 1 || rows[4].Depth != 1 || rows[5].Task.ID != "t_solo" {
		t.Fatalf("expanded: %+v", rows)
	}
	rows, _ = Build(st, now, Filter{Text: "g_one"})
	if len(rows) != 2 || len(rows[1].Members) != 3 {
		t.Errorf("filtered by the group's id: %+v", rows)
	}
}
