// What runner serve does around the handler: the address a browser
// reaches (BaseURL, LoginURL), the event stream of a state (Events) and
// serving until interrupted (Run).

package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/runner-cli/runner/state"
	"github.com/runner-cli/runner/state/follow"
)

// ShutdownGrace is how long Run lets the requests under way finish once
// its context ends.
const ShutdownGrace = 5 * time.Second

// Scheme is "https" with tls, else "http".
func Scheme(tls bool) string {
	if tls {
		return "https"
	}
	return "http"
}

// BaseURL is the address a browser on this machine reaches a server
// listening on listen (HOST:PORT or unix:PATH, as Listen takes) by: a
// unix socket and an address of every interface are reached on
// localhost.
func BaseURL(listen string, tls bool) string {
	scheme := Scheme(tls)
	if strings.HasPrefix(listen, "unix:") {
		return scheme + "://localhost"
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return scheme + "://" + listen
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return scheme + "://" + net.JoinHostPort(host, port)
}

// LoginURL makes a one-time login link for the page of the server base
// names (LoginLink): scope, good for ttl from now. The tokens are made
// first when there are none yet, so the link's session has a generation
// to belong to.
func LoginURL(stateDir, base string, scope Scope, ttl time.Duration, now time.Time) (string, error) {
	if _, err := LoadTokens(stateDir, false); err != nil {
		return "", err
	}
	code, err := LoginLink(stateDir, scope, ttl, now)
	if err != nil {
		return "", err
	}
	return strings.TrimRight(base, "/") + "/login?code=" + code, nil
}

// Events is the event stream of a state, as Options.Follow and
// Options.Last read it.
type Events struct {
	Store *state.Store
}

// Follow sends the lines of the events after cursor after, as they are
// written, until ctx ends (Options.Follow).
func (e Events) Follow(ctx context.Context, after uint64, line func([]byte), lost func(uint64)) error {
	return follow.Run(ctx, follow.Options{Store: e.Store, After: after, Follow: true, Line: line, Lost: lost})
}

// Last is the cursor of the newest event, 0 when there is none
// (Options.Last).
func (e Events) Last(ctx context.Context) (uint64, error) {
	st, err := e.Store.Read(ctx)
	if err != nil {
		return 0, err
	}
	return st.EventSeq, nil
}

// Run serves srv on ln, HTTPS with the certificate cert and its key key
// when cert is given, until ctx ends; then it shuts srv down, letting the
// requests under way finish for ShutdownGrace, and gives back ctx's
// error. A server that stops serving on its own gives back why.
func Run(ctx context.Context, srv *http.Server, ln net.Listener, cert, key string) error {
	errc := make(chan error, 1)
	go func() {
		if cert != "" {
			errc <- srv.ServeTLS(ln, cert, key)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return ctx.Err()
}
