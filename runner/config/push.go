package config

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/runner-cli/runner/state"
)

// The kinds of push target.
const (
	PushWebhook = "webhook" // a JSON POST of the event, signed when Secret is set
	PushNtfy    = "ntfy"    // a message to an ntfy topic's URL
)

// DefaultPushEvents are the statuses a target is pushed when its events
// are not given: the ones that wait on the user.
var DefaultPushEvents = []string{string(state.StatusNeedsInput), string(state.StatusFailed),
	string(state.StatusTimeout), string(state.StatusLimited)}

// pushEvents are the statuses a target may ask for.
var pushEvents = []string{string(state.StatusNeedsInput), string(state.StatusFailed), string(state.StatusTimeout),
	string(state.StatusLimited), string(state.StatusDone), string(state.StatusExited), string(state.StatusCancelled)}

// PushTarget is one entry of notify_push.
type PushTarget struct {
	Kind string `json:"kind"`
	URL  string `json:"url"`
	// Events are the statuses pushed (DefaultPushEvents when empty).
	Events []string `json:"events,omitempty"`
	// Secret signs a webhook's body (HMAC-SHA256, X-Runner-Signature).
	// Never printed.
	Secret string `json:"secret,omitempty"`
}

// Wants says whether status is one of the target's events.
func (t PushTarget) Wants(status state.Status) bool {
	ev := t.Events
	if len(ev) == 0 {
		ev = DefaultPushEvents
	}
	return slices.Contains(ev, string(status))
}

// ID names the target where runner says how it fares (doctor, events,
// the journal): its kind and its URL without user, password, query or
// fragment (where a token may be), never its secret.
func (t PushTarget) ID() string {
	u, err := url.Parse(t.URL)
	if err != nil {
		return t.Kind + " (a bad URL)"
	}
	return t.Kind + " " + (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// validatePush checks notify_push and serve_url.
func (c *Config) validatePush() error {
	for i, t := range c.NotifyPush {
		key := fmt.Sprintf("notify_push[%d]", i)
		if t.Kind != PushWebhook && t.Kind != PushNtfy {
			return fmt.Errorf("%s.kind: %q: want %q or %q", key, t.Kind, PushWebhook, PushNtfy)
		}
		if err := checkHTTPURL(t.URL); err != nil {
			return fmt.Errorf("%s.url: %w", key, err)
		}
		for _, ev := range t.Events {
			if !slices.Contains(pushEvents, ev) {
				return fmt.Errorf("%s.events: %q: want some of %s", key, ev, strings.Join(pushEvents, ", "))
			}
		}
		if t.Secret != "" && t.Kind != PushWebhook {
			return fmt.Errorf("%s.secret: only a webhook is signed", key)
		}
	}
	if c.ServeURL != "" {
		if err := checkHTTPURL(c.ServeURL); err != nil {
			return fmt.Errorf("serve_url: %w", err)
		}
	}
	return nil
}

// checkHTTPURL holds u to an absolute http or https URL with a host. What
// it says never quotes u whole (a token may be in it).
func checkHTTPURL(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("not a URL")
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return fmt.Errorf("scheme %q: want http or https", p.Scheme)
	}
	if p.Host == "" || p.Hostname() == "" {
		return fmt.Errorf("no host")
	}
	return nil
}
