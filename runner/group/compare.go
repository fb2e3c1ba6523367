package group

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/runner-cli/runner/gitsnap"
	"github.com/runner-cli/runner/runner/worktree"
	"github.com/runner-cli/runner/state"
)

// Row is one candidate of a group, as `runner compare` shows it.
type Row struct {
	Task  string `json:"task"`
	Agent string `json:"agent"`
	// Host is the host the candidate runs on ("" here).
	Host   string       `json:"host"`
	Status state.Status `json:"status"`
	// Answer is the first line of the agent's last answer.
	Answer string             `json:"answer"`
	Check  *state.CheckResult `json:"check"`
	// Passed says the check passed (false without a check).
	Passed     bool     `json:"passed"`
	Files      int      `json:"files"`
	Insertions int      `json:"insertions"`
	Deletions  int      `json:"deletions"`
	Paths      []string `json:"paths"`
	// Tokens and CostUSD are the task's spend as its CLI recorded it
	// (CostUSD 0 where the CLI reports no cost).
	Tokens  int64   `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// WallMS is how long the task ran, from its start to its end (or now).
	WallMS int64 `json:"wall_ms"`
	// Forecast is the merge forecast against the project's branch (nil
	// when it could not be made: ForecastError says why).
	Forecast      *worktree.Outlook `json:"forecast"`
	ForecastError string            `json:"forecast_error,omitempty"`
	// SameFiles names the other candidates that changed some of the same
	// files.
	SameFiles []string `json:"same_files"`
	// Votes is how many ballots named it (a group that voted).
	Votes int    `json:"votes"`
	Error string `json:"error,omitempty"`
}

// Comparison is a group and its candidates side by side.
type Comparison struct {
	Group *state.Group `json:"group"`
	Rows  []Row        `json:"candidates"`
}

// Compare reads group ref's candidates: status, answer, check, what each
// changed from the group's snapshot (files, lines), spend, wall time, the
// merge forecast and which candidates changed the same files.
func Compare(ctx context.Context, d Deps, ref string) (*Comparison, error) {
	g, err := d.Store.FindGroup(ctx, ref)
	if err != nil {
		return nil, err
	}
	if _, err := d.Tasks.Reconcile(ctx); err != nil {
		return nil, err
	}
	c := &Comparison{Group: g, Rows: make([]Row, len(g.Tasks))}
	fc, ferrs := forecasts(ctx, d, g)
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, id := range g.Tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c.Rows[i] = row(ctx, d, g, id)
			switch {
			case fc[id] != nil:
				c.Rows[i].Forecast = &fc[id].Outlook
			case ferrs[id] != nil:
				c.Rows[i].ForecastError = ferrs[id].Error()
			case c.Rows[i].Error == "":
				c.Rows[i].ForecastError = "no branch of its own"
			}
		}()
	}
	wg.Wait()
	sameFiles(c.Rows)
	return c, nil
}

// forecasts forecasts merging g's candidates, one look per machine their
// branches are on (a forecast reads one repository: the candidates on
// another host have their branches there), with each candidate's error
// when its machine's look failed.
func forecasts(ctx context.Context, d Deps, g *state.Group) (map[string]*worktree.Check, map[string]error) {
	byHost := map[string][]string{}
	var order []string
	for _, id := range g.Tasks {
		host := ""
		if t, err := d.Tasks.Task(ctx, id); err == nil {
			host = t.Tmux.Host
		}
		if _, ok := byHost[host]; !ok {
			order = append(order, host)
		}
		byHost[host] = append(byHost[host], id)
	}
	out, errs := map[string]*worktree.Check{}, map[string]error{}
	for _, host := range order {
		var fc map[string]*worktree.Check
		var err error
		if host == "" {
			fc, err = d.Merges.Forecast(ctx, byHost[host], "")
		} else {
			fc, err = forecastThere(ctx, d, g, host, byHost[host])
		}
		for _, id := range byHost[host] {
			if fc[id] != nil {
				out[id] = fc[id]
			} else if err != nil {
				errs[id] = err
			}
		}
	}
	return out, errs
}

// forecastThere forecasts merging the candidates ids, on host, into the
// branch checked out here: its commit is carried there for the look (only
// what the host lacks since the group's snapshot, under a branch of its
// own, runner-forecast/GROUP-ID, removed after) and the forecast names
// the branch here. The pick merges here: that is the merge forecast.
func forecastThere(ctx context.Context, d Deps, g *state.Group, host string, ids []string) (map[string]*worktree.Check, error) {
	branch, commit, err := gitsnap.Head(ctx, g.Dir)
	if err != nil {
		return nil, err
	}
	if commit == "" {
		return nil, fmt.Errorf("the repository %s here has no commit to merge into", g.Dir)
	}
	if branch == "" {
		branch = "HEAD"
	}
	there, err := on(ctx, d, host)
	if err != nil {
		return nil, err
	}
	origin := g.Dir // the repository there: the candidates' (the same path, as a rule)
	if t, err := d.Tasks.Task(ctx, ids[0]); err == nil && t.Origin != "" {
		origin = t.Origin
	}
	var have []string
	if s, err := gitsnap.Get(ctx, g.Dir, g.ID); err == nil {
		have = []string{s.Base, s.Commit}
	}
	tmp := "runner-forecast/" + g.ID + "-" + strings.TrimPrefix(gitsnap.NewID(), "s_")
	ref := []string{"refs/heads/" + tmp}
	if _, err := gitsnap.Carry(ctx, g.Dir, there, origin, []gitsnap.CarryRef{{Ref: ref[0], Commit: commit}}, have); err != nil {
		return nil, fmt.Errorf("forecast against %s here: carry it to host %s: %w", branch, host, err)
	}
	defer func() { _, _ = gitsnap.DropRefs(context.WithoutCancel(there), origin, ref) }()
	fc, err := d.Merges.Forecast(ctx, ids, tmp)
	for _, c := range fc {
		c.Into = branch
	}
	return fc, err
}

// row reads one candidate.
func row(ctx context.Context, d Deps, g *state.Group, id string) Row {
	r := Row{Task: id, Paths: []string{}, SameFiles: []string{}}
	t, err := d.Tasks.Task(ctx, id)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Agent, r.Host, r.Status, r.Check, r.Passed = t.Agent, t.Tmux.Host, t.Status, t.Check, t.Check.Passed()
	r.Answer = firstLine(t.Answer)
	r.Tokens, r.CostUSD = t.Spend.Tokens(), t.Spend.CostUSD
	if !t.Started.IsZero() {
		end := t.Ended
		if end.IsZero() || !t.Status.IsTerminal() {
			end = d.Now()
		}
		r.WallMS = end.Sub(t.Started).Milliseconds()
	}
	if g.Ballot != nil {
		r.Votes = g.Ballot.Tally[id]
	}
	if diff, err := diffOn(ctx, d, t, gitsnap.DiffOptions{Lines: true}); err == nil {
		r.Files, r.Insertions, r.Deletions = len(diff.Files), diff.Insertions, diff.Deletions
		for _, f := range diff.Files {
			r.Paths = append(r.Paths, f.Path)
		}
	} else {
		r.Error = "its changes: " + err.Error()
	}
	return r
}

// sameFiles fills each row's SameFiles.
func sameFiles(rows []Row) {
	for i := range rows {
		mine := map[string]bool{}
		for _, p := range rows[i].Paths {
			mine[p] = true
		}
		for j := range rows {
			if i == j {
				continue
			}
			for _, p := range rows[j].Paths {
				if mine[p] {
					rows[i].SameFiles = append(rows[i].SameFiles, rows[j].Task)
					break
				}
			}
		}
	}
}

// candidateDiff is a candidate's stat and patch against its snapshot.
func candidateDiff(ctx context.Context, d Deps, t *state.Task) (string, error) {
	diff, err := diffOn(ctx, d, t, gitsnap.DiffOptions{Patch: true})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(diff.Stat + "\n" + diff.Patch), nil
}

// Between is how candidate b's tree differs from candidate a's (`runner
// compare GROUP --diff A B`); a and b are task ids or prefixes among the
// group's.
func Between(ctx context.Context, d Deps, ref, a, b string) (*gitsnap.DiffResult, error) {
	g, err := d.Store.FindGroup(ctx, ref)
	if err != nil {
		return nil, err
	}
	ta, err := member(ctx, d, g, a)
	if err != nil {
		return nil, err
	}
	tb, err := member(ctx, d, g, b)
	if err != nil {
		return nil, err
	}
	if ta.Tmux.Host != tb.Tmux.Host {
		return nil, &NotMemberError{Group: g.ID, Ref: b, Tasks: g.Tasks,
			Why: fmt.Sprintf("%s runs on %s and %s on %s: --diff compares two candidates on one machine (see each with 'runner diff')", ta.ID, where(ta), tb.ID, where(tb))}
	}
	gctx, err := on(ctx, d, ta.Tmux.Host)
	if err != nil {
		return nil, err
	}
	return gitsnap.Between(gctx, ta.Dir, tb.Dir)
}

// where names the machine t runs on.
func where(t *state.Task) string {
	if t.Tmux.Host == "" {
		return "this machine"
	}
	return "host " + t.Tmux.Host
}

// on is ctx for gitsnap's calls on host ("": this machine).
func on(ctx context.Context, d Deps, host string) (context.Context, error) {
	if host == "" || d.Hosts == nil {
		return ctx, nil
	}
	return d.Hosts.GitOn(ctx, host)
}

// diffOn is candidate t's diff from its snapshot, where it runs.
func diffOn(ctx context.Context, d Deps, t *state.Task, opts gitsnap.DiffOptions) (*gitsnap.DiffResult, error) {
	gctx, err := on(ctx, d, t.Tmux.Host)
	if err != nil {
		return nil, err
	}
	return gitsnap.Diff(gctx, t.Dir, t.ID, opts)
}

// member finds a candidate of g by id or prefix.
func member(ctx context.Context, d Deps, g *state.Group, ref string) (*state.Task, error) {
	var hits []string
	for _, id := range g.Tasks {
		if id == ref {
			hits = []string{id}
			break
		}
		if ref != "" && strings.HasPrefix(id, ref) {
			hits = append(hits, id)
		}
	}
	if len(hits) != 1 {
		return nil, &NotMemberError{Group: g.ID, Ref: ref, Tasks: g.Tasks}
	}
	return d.Tasks.Task(ctx, hits[0])
}

// NotMemberError says a reference names no candidate (or several) of a
// group: bad input.
type NotMemberError struct {
	Group, Ref string
	Tasks      []string
	// Why replaces the message (a candidate that cannot be used so).
	Why string
}

func (e *NotMemberError) Error() string {
	if e.Why != "" {
		return "group " + e.Group + ": " + e.Why
	}
	return "group " + e.Group + ": " + strconv.Quote(e.Ref) + " is not one of its candidates (" + strings.Join(e.Tasks, ", ") + ")"
}
