package serve

import (
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/runner-cli/runner/internal/clock"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"strings"
	"sync"
	"time"
)

//go:embed web openapi.json
var files embed.FS

// Options are what a Server needs.
type Options struct {
	// StateDir is runner's state directory: the tokens and login codes
	// are in its serve folder.
	StateDir string
	// Runner runs runner for a request (Exec).
	Runner Runner
	// Follow sends the lines `runner events --json` prints after cursor
	// after to line, oldest first, then each as it is written, until ctx
	// ends (cmd/runner gives state/follow's Run); lost is told when
	// events after the cursor were rotated away, first being the oldest
	// kept.
	Follow func(ctx context.Context, after uint64, line func([]byte), lost func(first uint64)) error
	// Last returns the cursor of the newest event (0: none yet), where a
	// stream asked for with ?after=now starts.
	Last func(ctx context.Context) (uint64, error)
	// MCP, when set, is served at /mcp (every method, act scope).
	MCP http.Handler
	// MaxRuns bounds the runner processes at once (default 8), and
	// MaxFollowers the event streams (default 32).
	MaxRuns, MaxFollowers int
	// Heartbeat is how often an idle event stream gets a comment (default
	// 15s), so proxies and phones keep it open.
	Heartbeat time.Duration
	// Secure marks the cookie Secure (the server speaks TLS).
	Secure bool
	// Log, when set, gets a line per refused request and per failed
	// runner process.
	Log *slog.Logger
	// Status is the HTTP status of a request whose runner exited code
	// (not 0): cmd/runner gives its table (docs/exit-codes.md; the exit
	// codes are the command's own); nil: 500 for each.
	Status func(code int) int
	// Now is the clock (default clock.Now).
	Now func() time.Time
}

// Server is runner serve's handler.
type Server struct {
	o         Options
	tokens    *tokenCache
	sessions  sessions
	runs      chan struct{}
	followers chan struct{}
	mux       *http.ServeMux
	// screenMu guards noScreen, set once runner's status turns out not
	// to know --screen (the flag came with issue 52's dialogs).
	screenMu sync.Mutex
	noScreen bool
}

// route is one entry of the route table the mux is built from, the one
// OpenAPI document describes (TestOpenAPIMatchesMux).
type route struct {
	pattern string // "METHOD /path"
	scope   Scope  // ScopeNone: the route checks its own credential (/login)
	h       http.HandlerFunc
}

// New returns the server of o.
func New(o Options) *Server {
	if o.MaxRuns <= 0 {
		o.MaxRuns = 8
	}
	if o.MaxFollowers <= 0 {
		o.MaxFollowers = 32
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	if o.Now == nil {
		o.Now = clock.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, tokens: &tokenCache{stateDir: o.StateDir, now: o.Now},
		runs: make(chan struct{}, o.MaxRuns), followers: make(chan struct{}, o.MaxFollowers), mux: http.NewServeMux()}
	for _, r := range s.routes() {
		s.mux.Handle(r.pattern, s.guard(r))
	}
	return s
}

func (s *Server) routes() []route {
	rs := []route{
		{"GET /{$}", ScopeRead, s.asset("index.html")},
		{"GET /assets/{name}", ScopeRead, s.assets},
		{"GET /login", ScopeNone, s.login},
		{"POST /logout", ScopeRead, s.logout},
		{"GET /api/v1/openapi.json", ScopeRead, s.openapi},
		{"GET /api/v1/session", ScopeRead, s.session},
		{"GET /api/v1/tasks", ScopeRead, s.listTasks},
		{"POST /api/v1/tasks", ScopeAct, s.dispatch},
		{"GET /api/v1/tasks/{id}", ScopeRead, s.getTask},
		{"POST /api/v1/tasks/{id}/send", ScopeAct, s.send},
		{"POST /api/v1/tasks/{id}/cancel", ScopeAct, s.cancel},
		{"POST /api/v1/tasks/{id}/msg", ScopeAct, s.msg},
		{"POST /api/v1/tasks/{id}/answer", ScopeAct, s.answer},
		{"GET /api/v1/events", ScopeRead, s.events},
	}
	if s.o.MCP != nil {
		rs = append(rs, route{"/mcp", ScopeAct, s.o.MCP.ServeHTTP})
	}
	return rs
}

// ServeHTTP serves r with the headers every answer carries.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	s.mux.ServeHTTP(w, r)
}

// ctxKey carries the request's credential.
type ctxKey struct{}

type cred struct {
	scope   Scope
	bearer  bool
	session *session
}

// CSRFHeader is the header a page's request that changes something
// carries: its session's CSRF value (GET /api/v1/session).
const CSRFHeader = "X-Runner-CSRF"

const cookieName = "runner_session"

// guard checks r's credential against the route's scope before anything
// else: no credential or a wrong one is 401 and says nothing more; a read
// credential acting, or a session's request without its CSRF value, 403.
func (s *Server) guard(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.scope == ScopeNone {
			rt.h(w, r)
			return
		}
		c := s.credential(r)
		if c.scope == ScopeNone {
			s.o.Log.Info("refused: no valid credential", "method", r.Method, "path", r.URL.Path)
			w.Header().Set("WWW-Authenticate", `Bearer realm="runner"`)
			if r.Method == http.MethodGet && (r.URL.Path == "/" || strings.HasPrefix(r.URL.Path, "/assets/")) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprint(w, loggedOutPage)
				return
			}
			writeError(w, http.StatusUnauthorized, "unauthorized: give a token (Authorization: Bearer) or open a login link (runner serve --login-link)")
			return
		}
		if rt.scope == ScopeAct && c.scope < ScopeAct {
			writeError(w, http.StatusForbidden, "this credential may only read")
			return
		}
		if changes(r.Method) && !c.bearer {
			got := r.Header.Get(CSRFHeader)
			if c.session == nil || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(c.session.csrf)) != 1 {
				s.o.Log.Info("refused: no CSRF value", "method", r.Method, "path", r.URL.Path)
				writeError(w, http.StatusForbidden, "a request that changes something needs the "+CSRFHeader+" header")
				return
			}
		}
		rt.h(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, c)))
	})
}

// changes: every method but GET, HEAD and OPTIONS may change something.
func changes(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// credential is r's: its bearer token when it has an Authorization header
// (then only that counts), else its session cookie.
func (s *Server) credential(r *http.Request) cred {
	tokens := s.tokens.get()
	if tokens.Act == "" {
		return cred{}
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok {
			return cred{}
		}
		return cred{scope: tokens.scopeOf(strings.TrimSpace(tok)), bearer: true}
	}
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return cred{}
	}
	ss := s.sessions.get(ck.Value, tokens.generation(), s.o.Now())
	if ss == nil {
		return cred{}
	}
	return cred{scope: ss.scope, session: ss}
}

const loggedOutPage = `<!doctype html><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>runner</title><p>Not logged in. On the machine runner runs on, run <code>runner serve --login-link</code> and open the link it prints.</p>
`

// login takes a one-time code and opens a session: an HttpOnly,
// SameSite=Strict cookie, then on to the page.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	tokens := s.tokens.get()
	scope := ScopeNone
	if tokens.Act != "" {
		scope = claimLogin(s.o.StateDir, r.URL.Query().Get("code"), s.o.Now())
	}
	if scope == ScopeNone {
		s.o.Log.Info("refused: login code unknown, used or expired")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><title>runner</title><p>This login link is unknown, used or expired: run <code>runner serve --login-link</code> for a new one.</p>`)
		return
	}
	cookie, _ := s.sessions.open(scope, tokens.generation(), s.o.Now())
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: cookie, Path: "/", HttpOnly: true, Secure: s.o.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: int(SessionTTL / time.Second)})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if ck, err := r.Cookie(cookieName); err == nil {
		s.sessions.close(ck.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", HttpOnly: true, Secure: s.o.Secure,
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}

// session tells the page its scope and its CSRF value (same origin only:
// the server grants no CORS).
func (s *Server) session(w http.ResponseWriter, r *http.Request) {
	c, _ := r.Context().Value(ctxKey{}).(cred)
	out := struct {
		Scope string `json:"scope"`
		CSRF  string `json:"csrf,omitempty"`
	}{Scope: c.scope.String()}
	if c.session != nil {
		out.CSRF = c.session.csrf
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) {
	b, _ := files.ReadFile("openapi.json")
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// asset serves the embedded file name.
func (s *Server) asset(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.serveAsset(w, name) }
}

// assets serves web/NAME from the embedded files, and nothing else: NAME
// is one plain path element.
func (s *Server) assets(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !fs.ValidPath(name) || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") || name == "index.html" {
		http.NotFound(w, r)
		return
	}
	s.serveAsset(w, name)
}

var mimeTypes = map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".json": "application/json"}

func (s *Server) serveAsset(w http.ResponseWriter, name string) {
	b, err := files.ReadFile(path.Join("web", name))
	ct, known := mimeTypes[path.Ext(name)]
	if err != nil || !known {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Write(b)
}

// writeJSON writes v as JSON with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encode"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// apiError is the body of every error: what went wrong, and the exit code
// of the runner command behind it when there was one.
type apiError struct {
	Error    string `json:"error"`
	ExitCode *int   `json:"exit_code,omitempty"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apiError{Error: msg})
}

// HTTPServer returns the http.Server of h with the bounds a server that
// faces a network needs: a slow client cannot hold a connection
// (ReadHeaderTimeout, ReadTimeout, IdleTimeout; a response's writes get a
// deadline per handler), and headers are small.
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
}

// MaxConns bounds the connections a listener of Listen holds open at once.
const MaxConns = 128

// Listen listens on addr: HOST:PORT, or unix:/path (a socket made 0600;
// a stale one is replaced, a live one refused). A HOST that is not a
// loopback address is refused unless tls (the server speaks TLS) or
// insecure. The listener holds at most MaxConns connections.
func Listen(addr string, tls, insecure bool) (net.Listener, error) {
	var ln net.Listener
	if p, ok := strings.CutPrefix(addr, "unix:"); ok {
		if p == "" {
			return nil, errors.New("--listen unix:PATH: give the socket's path")
		}
		if fi, err := os.Lstat(p); err == nil {
			if fi.Mode()&os.ModeSocket == 0 {
				return nil, fmt.Errorf("--listen %s: %s exists and is not a socket", addr, p)
			}
			if c, err := net.DialTimeout("unix", p, time.Second); err == nil {
				c.Close()
				return nil, fmt.Errorf("--listen %s: a server listens there already", addr)
			}
			os.Remove(p)
		}
		old := umask(0o177)
		l, err := net.Listen("unix", p)
		umask(old)
		if err != nil {
			return nil, err
		}
		ln = l
	} else {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("--listen %s: %w", addr, err)
		}
		if !Loopback(host) && !tls && !insecure {
			return nil, fmt.Errorf("--listen %s: not a loopback address: give --tls-cert and --tls-key, or --insecure to serve plain HTTP there", addr)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		ln = l
	}
	return &limitListener{Listener: ln, sem: make(chan struct{}, MaxConns)}, nil
}

// Loopback reports whether host names this machine only: localhost or a
// loopback IP (an empty host is every address).
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// limitListener accepts a connection only while fewer than cap(sem) are
// open.
type limitListener struct {
	net.Listener
	sem chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.sem <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.sem })}, nil
}

type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
