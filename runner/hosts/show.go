package hosts

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/internal/textutil"
	"github.com/runner-cli/runner/state"
)

// Row is a line of `runner host list`: the host, its slots in use and
// its health from its last probe.
type Row struct {
	*state.Host
	Capacity int              `json:"capacity"`
	Use      int              `json:"use"`
	Health   string           `json:"health"`
	Probe    *state.HostProbe `json:"probe,omitempty"`
}

// Prober reads the hosts' load and memory, each answer at most maxAge
// old (a *Pool).
type Prober interface {
	Probes(ctx context.Context, members []*state.Host, maxAge time.Duration) map[string]*state.HostProbe
}

// Table is the registered hosts, each with its slots in use (from the
// state) and its health (from p, at most ProbeMaxAge old).
func Table(ctx context.Context, s *state.Store, p Prober) ([]Row, error) {
	list, err := List(ctx, s)
	if err != nil {
		return nil, err
	}
	st, err := s.Read(ctx)
	if err != nil {
		return nil, err
	}
	return Rows(list, st, p.Probes(ctx, list, ProbeMaxAge)), nil
}

// Rows are the lines of list: each host's slots in use in st, and its
// health from its probe.
func Rows(list []*state.Host, st *state.State, probes map[string]*state.HostProbe) []Row {
	use := Use(st)
	rows := make([]Row, 0, len(list))
	for _, h := range list {
		rows = append(rows, Row{Host: h, Capacity: h.Capacity(), Use: use[h.Name], Health: Health(h, probes[h.Name]), Probe: probes[h.Name]})
	}
	return rows
}

// Health says how h is: "ok", "drained", "unreachable since T" or
// "unknown" (not asked).
func Health(h *state.Host, p *state.HostProbe) string {
	switch {
	case h.Drained:
		return "drained"
	case p == nil:
		return "unknown"
	case !p.OK:
		return "unreachable since " + p.DownSince.Local().Format(time.TimeOnly)
	}
	return "ok"
}

// WriteTable writes rows as `runner host list`'s table.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tAGENTS\tLOAD/CORE\tFREE MEM\tHEALTH\tLABELS\tSSH\tRUNNER")
	for _, r := range rows {
		load, mem := "-", "-"
		if p := r.Probe; p != nil && p.OK {
			load, mem = fmt.Sprintf("%.2f", p.LoadPerCore()), fmt.Sprintf("%d MiB", p.MemAvailKB/1024)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Use, r.Capacity, load, mem, r.Health,
			textutil.OrDash(strings.Join(r.Labels, ",")), SSHLine(r.Host), textutil.OrDash(r.Runner))
	}
	return tw.Flush()
}

// SSHLine is the ssh command line a host stands for.
func SSHLine(h *state.Host) string {
	return strings.Join(append(append([]string{"ssh"}, h.SSHArgs...), h.Destination), " ")
}

// AgentCommands are the commands of the agent CLIs that check looks for
// on a host, from the profiles' commands: each first word once, but
// runner's own and paths.
func AgentCommands(commands [][]string) []string {
	var agents []string
	for _, c := range commands {
		if len(c) > 0 && c[0] != "runner" && !strings.Contains(c[0], "/") && !slices.Contains(agents, c[0]) {
			agents = append(agents, c[0])
		}
	}
	return agents
}

// WriteReport writes r for people: whether the host is reachable and how
// fast, what is installed there, and each problem with its fix.
func WriteReport(w io.Writer, r *Report) {
	if !r.Reachable {
		fmt.Fprintf(w, "host %s (%s): unreachable\n  ssh: %s\n", r.Host, r.Destination, r.Error)
	} else {
		fmt.Fprintf(w, "host %s (%s): reachable, first command %s, then %s per command over the shared connection (%s in runner's session shell)\n",
			r.Host, r.Destination, r.Connect.Round(time.Millisecond), r.RoundTrip.Round(100*time.Microsecond), r.Session.Round(100*time.Microsecond))
		fmt.Fprintf(w, "  tmux:   %s\n  git:    %s\n  runner: %s\n  bwrap:  %s\n", textutil.OrDash(r.Tmux), textutil.OrDash(r.Git), textutil.OrDash(r.Runner), textutil.OrDash(r.Sandbox))
		var have, missing []string
		for name, path := range r.Agents {
			if path != "" {
				have = append(have, name+" ("+path+")")
			} else {
				missing = append(missing, name)
			}
		}
		sort.Strings(have)
		sort.Strings(missing)
		fmt.Fprintf(w, "  agents: %s; not installed: %s\n", textutil.OrDash(strings.Join(have, ", ")), textutil.OrDash(strings.Join(missing, ", ")))
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "  problem: %s\n", p)
	}
}
