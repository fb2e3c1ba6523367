package extcmd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/runner-cli/runner/cmd/runner/exitcode"
	"github.com/runner-cli/runner/cmd/runner/internal/cmdkit"
	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/runner"
	"github.com/runner-cli/runner/runner/fault"
	"github.com/runner-cli/runner/runner/mcpserver"
	"github.com/runner-cli/runner/runner/serve"
	"github.com/runner-cli/runner/tmuxctl"
)

// serveOptions are the flags of runner serve.
type serveOptions struct {
	listen              string
	tlsCert, tlsKey     string
	insecure            bool
	token, rotate       bool
	loginLink, readOnly bool
	loginTTL            time.Duration
	url                 string
}

// NewServeCmd is runner serve over f.
func (c *Cmds) NewServeCmd() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--listen ADDR] [--token | --rotate-token | --login-link]",
		Short: "Serve runner over HTTP: an API, a live page for a phone, the event stream",
		Long: `Serve runner's tasks over HTTP until interrupted (docs/serve.md): a JSON API
described at /api/v1/openapi.json, the event stream as Server-Sent Events, and
a page at / that shows every task live, a task's screen, and its dialog's
options as buttons. Each request runs the runner command it stands for with
--json, on this machine's state; stopping the server changes nothing about
tasks.

Every route needs a credential. Programs send 'Authorization: Bearer TOKEN':
--token prints the read token and the act token (kept 0600 in the state
directory, made on first use), --rotate-token makes both anew (every old
token and page session then gets 401). A browser opens the link --login-link
prints once (it expires after --login-ttl): it sets a session cookie, act
scope unless --read-only.

--listen takes HOST:PORT or unix:PATH. A HOST other than loopback needs
--tls-cert and --tls-key, or --insecure. Reach a loopback server from a phone
through ssh -L, Tailscale or a tunnel (docs/serve.md).`,
		Example: `  runner serve --token                     # print the tokens
  runner serve --login-link                # a one-time link for the page
  runner serve --listen unix:runner.sock   # serve until Ctrl-C`,
		Args: cmdkit.Args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return c.runServe(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:7777", "address to serve on: HOST:PORT or unix:PATH")
	f.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&o.tlsKey, "tls-key", "", "the certificate's private key (PEM)")
	f.BoolVar(&o.insecure, "insecure", false, "serve plain HTTP on an address that is not loopback")
	f.BoolVar(&o.token, "token", false, "print the read and the act token and exit")
	f.BoolVar(&o.rotate, "rotate-token", false, "make both tokens anew, print them and exit")
	f.BoolVar(&o.loginLink, "login-link", false, "print a one-time login link for the page and exit")
	f.BoolVar(&o.readOnly, "read-only", false, "with --login-link: a session that may only read")
	f.DurationVar(&o.loginTTL, "login-ttl", serve.LoginTTL, "with --login-link: how long the link works")
	f.StringVar(&o.url, "url", "", "with --login-link: the server's address as the browser reaches it (default: from --listen)")
	return cmd
}

func (c *Cmds) runServe(ctx context.Context, o serveOptions) error {
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return fault.Usagef("serve: give --tls-cert and --tls-key together")
	}
	env, _, err := c.f.Env(false)
	if err != nil {
		return err
	}
	stateDir := env.Store.Dir()
	switch {
	case o.token || o.rotate:
		t, err := serve.LoadTokens(stateDir, o.rotate)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.f.Out, "read %s\nact  %s\n", t.Read, t.Act)
		return nil
	case o.loginLink:
		if o.loginTTL <= 0 {
			return fault.Usagef("--login-ttl %s: give a positive duration", o.loginTTL)
		}
		scope := serve.ScopeAct
		if o.readOnly {
			scope = serve.ScopeRead
		}
		base := o.url
		if base == "" {
			base = serve.BaseURL(o.listen, o.tlsCert != "")
		}
		link, err := serve.LoginURL(stateDir, base, scope, o.loginTTL, clock.Now())
		if err != nil {
			return err
		}
		fmt.Fprintln(c.f.Out, link)
		return nil
	}
	if _, err := serve.LoadTokens(stateDir, false); err != nil {
		return err
	}
	ln, err := serve.Listen(o.listen, o.tlsCert != "", o.insecure)
	if err != nil {
		return fault.Usagef("%v", err)
	}
	srv := c.newServer(ctx, env, o.tlsCert != "")
	fmt.Fprintf(c.f.ErrOut, "runner serve: listening on %s://%s (tokens: runner serve --token; the page: runner serve --login-link)\n", serve.Scheme(o.tlsCert != ""), ln.Addr())
	return serve.Run(ctx, srv, ln, o.tlsCert, o.tlsKey)
}

// newServer is the http.Server of runner serve over env: requests (and
// /mcp's tools) run this runner itself (env.Exe) with the server's
// environment, state directory and tmux server, in the user's home; the
// event stream is followed in process.
func (c *Cmds) newServer(ctx context.Context, env *runner.Env, secure bool) *http.Server {
	home, _ := os.UserHomeDir()
	environ := tmuxctl.ChildEnv(os.Environ(), "RUNNER_STATE_DIR="+env.Store.Dir(), "RUNNER_TMUX_SOCKET="+env.TC.Socket())
	log := slog.New(slog.NewTextHandler(c.f.ErrOut, nil))
	h := serve.New(serve.Options{
		StateDir: env.Store.Dir(),
		Runner:   serve.Exec{Exe: env.Exe, Dir: home, Environ: environ},
		Follow:   serve.Events{Store: env.Store}.Follow,
		Last:     serve.Events{Store: env.Store}.Last,
		MCP: mcpserver.HTTPHandler(mcpserver.Options{Exe: env.Exe, Environ: environ, Dir: home,
			Version: c.version, Logger: log, Meaning: exitcode.Meaning}),
		Status: exitcode.HTTPStatus,
		Secure: secure,
		Log:    log,
	})
	srv := serve.HTTPServer(h)
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	return srv
}
