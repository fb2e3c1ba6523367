// A pool of hosts: the hosts a dispatch with --host any or --host label:L
// may run on, their capacity and use, and the one round trip that reads a
// host's load and memory (cached for every runner process in the state
// directory, see state.HostProbe).

package hosts

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/state"
)

// PoolAny is the pool of every registered host (dispatch --host any).
const PoolAny = "any"

// ProbeMaxAge is how long a host's probe serves every runner process
// before the next one asks the host again.
const ProbeMaxAge = 5 * time.Second

// probeTimeout bounds one probe: a host that does not answer within it
// counts as not answering.
const probeTimeout = 10 * time.Second

// IsPool says whether a --host value names a pool ("any", "label:L")
// rather than one host.
func IsPool(spec string) bool {
	return spec == PoolAny || strings.HasPrefix(spec, "label:")
}

// ValidateLabel returns a usage error unless l is a valid label: the
// rules of a host's name.
func ValidateLabel(l string) error {
	if !state.ValidName(l) {
		return fault.Usagef("invalid label %q: use 1 to 64 characters from a-z, 0-9, '.', '_' and '-', starting with a letter or digit", l)
	}
	return nil
}

// Members returns the hosts of pool spec, by name, drained ones
// included (Rank leaves them out); a spec that names no host is a usage
// error.
func Members(all map[string]*state.Host, spec string) ([]*state.Host, error) {
	label, byLabel := strings.CutPrefix(spec, "label:")
	if !byLabel && spec != PoolAny {
		return nil, fault.Usagef("--host %q is not a pool: give any or label:L", spec)
	}
	if byLabel {
		if err := ValidateLabel(label); err != nil {
			return nil, err
		}
	}
	var out []*state.Host
	for _, h := range all {
		if !byLabel || slices.Contains(h.Labels, label) {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) == 0 {
		if byLabel {
			return nil, fault.Usagef("no host has label %q (give one with 'runner host add NAME DEST --label %s', see 'runner host ls')", label, label)
		}
		return nil, fault.Usagef("--host any: no host is registered (add one with 'runner host add NAME user@machine')")
	}
	return out, nil
}

// Use counts, by host, the tasks that hold one of its slots: every
// active task placed there (queued ones placed but not started yet too).
func Use(st *state.State) map[string]int {
	use := map[string]int{}
	for _, t := range st.Tasks {
		if t.Tmux.Host != "" && t.Status.IsActive() {
			use[t.Tmux.Host]++
		}
	}
	return use
}

// Candidate is a host of a pool with a free slot, as Rank found it.
type Candidate struct {
	Host  *state.Host
	Free  int
	Probe *state.HostProbe
}

// Rank returns the hosts of members that can take a task now, best
// first: the most free slots (capacity less use), then the lowest load
// per core, then the most free memory, then the name. A drained host,
// one whose last probe did not answer, and one in skip are left out. why
// says, when none can, what holds each back ("a 2/2, b drained").
func Rank(members []*state.Host, use map[string]int, probes map[string]*state.HostProbe, skip map[string]string) (ranked []Candidate, why string) {
	var held []string
	for _, h := range members {
		p := probes[h.Name]
		free := h.Capacity() - use[h.Name]
		switch {
		case h.Drained:
			held = append(held, h.Name+" drained")
		case skip[h.Name] != "":
			held = append(held, h.Name+" "+skip[h.Name])
		case p != nil && !p.OK:
			held = append(held, h.Name+" unreachable")
		case free <= 0:
			held = append(held, fmt.Sprintf("%s %d/%d", h.Name, use[h.Name], h.Capacity()))
		default:
			ranked = append(ranked, Candidate{Host: h, Free: free, Probe: p})
		}
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		if a.Free != b.Free {
			return a.Free > b.Free
		}
		if la, lb := a.Probe.LoadPerCore(), b.Probe.LoadPerCore(); la != lb {
			return la < lb
		}
		if ma, mb := memAvail(a.Probe), memAvail(b.Probe); ma != mb {
			return ma > mb
		}
		return a.Host.Name < b.Host.Name
	})
	return ranked, strings.Join(held, ", ")
}

func memAvail(p *state.HostProbe) int64 {
	if p == nil {
		return 0
	}
	return p.MemAvailKB
}

// probeScript prints, in one round trip, the load average, the
// processors online and the memory: "LOAD1 CORES AVAILKB TOTALKB".
const probeScript = `read l _ </proc/loadavg 2>/dev/null || l=0
c=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 0)
m=$(awk '/^MemAvailable:/{a=$2} /^MemTotal:/{t=$2} END{print a+0, t+0}' /proc/meminfo 2>/dev/null || echo 0 0)
echo "$l $c $m"`

// Probes is where the probes of the hosts are kept for every runner
// process: a *state.Store.
type Probes interface {
	HostProbe(name string) *state.HostProbe
	SaveHostProbe(p state.HostProbe) error
}

// Probe asks c's host, in one round trip over its session shell, for its
// load, processors and memory, and records the answer (or that it did
// not answer, since when) as the host's probe for every runner process.
func Probe(ctx context.Context, s Probes, c *Conn) state.HostProbe {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	p := state.HostProbe{Host: c.host.Name, At: clock.Now().UTC()}
	out, err := c.Run(ctx, "sh", "-c", probeScript)
	if err == nil {
		f := strings.Fields(out)
		if len(f) == 4 {
			p.Load1, _ = strconv.ParseFloat(f[0], 64)
			p.Cores, _ = strconv.Atoi(f[1])
			p.MemAvailKB, _ = strconv.ParseInt(f[2], 10, 64)
			p.MemTotalKB, _ = strconv.ParseInt(f[3], 10, 64)
			p.OK = true
		} else {
			err = fmt.Errorf("unexpected answer %q", strings.TrimSpace(out))
		}
	}
	if err != nil {
		p.Error = err.Error()
		p.DownSince = p.At
		if old := s.HostProbe(p.Host); old != nil && !old.OK && !old.DownSince.IsZero() {
			p.DownSince = old.DownSince
		}
	}
	_ = s.SaveHostProbe(p)
	return p
}

// Probes returns the probe of each host of members: the cached one when
// younger than maxAge, else a new one (the hosts asked at once, one round
// trip each). A drained host is not asked.
func (p *Pool) Probes(ctx context.Context, members []*state.Host, maxAge time.Duration) map[string]*state.HostProbe {
	out := make(map[string]*state.HostProbe, len(members))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, h := range members {
		if old := p.store.HostProbe(h.Name); old != nil && clock.Since(old.At) < maxAge {
			out[h.Name] = old
			continue
		}
		if h.Drained {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := p.Conn(ctx, h.Name)
			if err != nil {
				return
			}
			pr := Probe(ctx, p.store, c)
			mu.Lock()
			out[h.Name] = &pr
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// SetDrained drains (or, with drained false, undrains) the registered
// host name: a drained host takes no new task from a pool.
func SetDrained(ctx context.Context, s *state.Store, name string, drained bool) (state.Host, error) {
	var out state.Host
	err := s.UpdateHosts(ctx, func(hosts map[string]*state.Host) error {
		h, ok := hosts[name]
		if !ok {
			return unknownHost(name, hosts)
		}
		h.Drained = drained
		out = *h
		return nil
	})
	return out, err
}
