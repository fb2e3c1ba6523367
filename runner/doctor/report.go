package doctor

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/push"
)

// WriteChecks writes checks a line each: status, name, detail and the
// fix.
func WriteChecks(w io.Writer, checks []Check) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range checks {
		line := fmt.Sprintf("%s\t%s\t%s", c.Status, c.Name, c.Detail)
		if c.Fix != "" {
			line += "  (fix: " + c.Fix + ")"
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// PushChecks is a line per notify_push target of the config: ok, or a
// warning with its last failure when its last attempt failed (its secret
// never said). None without a config that reads or without targets.
func PushChecks(getenv func(string) string) []Check {
	cfg, _, err := config.Load(getenv)
	if err != nil || len(cfg.NotifyPush) == 0 {
		return nil
	}
	store, err := config.OpenStore(getenv, cfg)
	if err != nil {
		return nil
	}
	return pushChecks(push.Healths(store, cfg.NotifyPush))
}

// pushChecks is PushChecks from the targets' healths, the pushes queued
// and the error reading them.
func pushChecks(healths []push.Health, queued int, err error) []Check {
	var out []Check
	for _, h := range healths {
		c := Check{Name: "push", Status: CheckOK, Detail: h.Target + ": nothing pushed yet"}
		if !h.LastSent.IsZero() {
			c.Detail = h.Target + ": last pushed " + h.LastSent.Local().Format(time.DateTime)
		}
		if h.Failing {
			c.Status = CheckWarn
			c.Detail = fmt.Sprintf("%s: last failure %s (task %s): %s", h.Target, h.LastFailure.Local().Format(time.DateTime), h.Task, h.Error)
			c.Fix = "check the receiver is up and the URL right; runner events shows each push that gave up"
		}
		if queued > 0 {
			c.Detail += fmt.Sprintf("; %d push(es) queued", queued)
		}
		out = append(out, c)
	}
	if err != nil {
		out = append(out, Check{Name: "push", Status: CheckWarn, Detail: err.Error()})
	}
	return out
}

// WriteAgents writes `runner agents`' table: whether each CLI is
// installed, its version, whether it has a turn-end hook, the version
// its profile was verified on, its path and command.
func WriteAgents(w io.Writer, sts []AgentStatus) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tINSTALLED\tVERSION\tHOOK\tVERIFIED\tPATH\tCOMMAND")
	for _, s := range sts {
		inst, path, ver := "no", "-", "-"
		if s.Installed {
			inst, path = "yes", s.Path
		}
		if s.Version != "" {
			ver = s.Version
		}
		hook := "yes"
		if strings.HasPrefix(s.Hook, "none") {
			hook = "no (screen)"
		}
		verified := "-"
		switch {
		case s.Unverified != "":
			verified = "unverified"
		case s.VerifiedVersion != "":
			verified = s.VerifiedVersion
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, inst, ver, hook, verified, path, strings.Join(s.Command, " "))
	}
	return tw.Flush()
}
