// One attempt of one push to one target: the request its kind makes.

package send

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/runner-cli/runner/runner/config"
	"github.com/runner-cli/runner/runner/push"
	"github.com/runner-cli/runner/state"
)

// Deliver makes one attempt of ev to target t: a webhook's JSON POST
// (signed when t has a secret), or an ntfy message. A 2xx answer is
// success; the error otherwise never holds t's URL or secret.
func Deliver(ctx context.Context, c *http.Client, t config.PushTarget, ev state.PushEvent) error {
	req, err := request(ctx, t, ev)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusError(resp.StatusCode)
	}
	return nil
}

// request is the HTTP request of ev to t.
func request(ctx context.Context, t config.PushTarget, ev state.PushEvent) (*http.Request, error) {
	var body []byte
	if t.Kind == config.PushNtfy {
		body = []byte(ntfyMessage(ev))
	} else {
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		body = b
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "runner-push")
	if t.Kind == config.PushNtfy {
		setNtfyHeaders(req.Header, ev)
		return req, nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Runner-Event", ev.Status)
	if t.Secret != "" {
		req.Header.Set(push.SignatureHeader, push.Sign(t.Secret, body))
	}
	return req, nil
}

// ntfyMessage is an ntfy message's body: the question, else the reason.
func ntfyMessage(ev state.PushEvent) string {
	msg := ev.Question
	if msg == "" {
		msg = ev.Reason
	}
	if ev.Title != "" {
		msg += "\n\n" + ev.Title
	}
	if d := ev.Dialog; d != nil && len(d.Options) > 0 {
		var opts []string
		for _, o := range d.Options {
			opts = append(opts, o.Key+". "+o.Label)
		}
		msg += "\n" + strings.Join(opts, "\n")
	}
	return strings.TrimSpace(msg)
}

// setNtfyHeaders sets ntfy's Title, Priority, Tags and Click: the title
// names the task and its status, the priority is high for what waits on
// the user.
func setNtfyHeaders(h http.Header, ev state.PushEvent) {
	status, prio, tags := ev.Status, "high", "warning"
	switch state.Status(ev.Status) {
	case state.StatusNeedsInput:
		status, tags = "needs input", "question"
	case state.StatusDone:
		prio, tags = "default", "white_check_mark"
	case state.StatusLimited:
		tags = "hourglass"
	}
	title := "runner: " + ev.Task + " " + status
	if ev.Project != "" {
		title += " (" + ev.Project + ")"
	}
	h.Set("Title", headerValue(title))
	h.Set("Priority", prio)
	h.Set("Tags", tags+",runner")
	if ev.URL != "" {
		h.Set("Click", ev.URL)
	}
}

// headerValue is s fit for a header: printable ASCII as it is, anything
// else RFC 2047-encoded (as ntfy reads it), no line break either way.
func headerValue(s string) string {
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			return mime.QEncoding.Encode("utf-8", strings.Map(func(r rune) rune {
				if r == '\r' || r == '\n' {
					return ' '
				}
				return r
			}, s))
		}
	}
	return s
}
