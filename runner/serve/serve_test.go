package serve

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runner-cli/runner/internal/clock"
	"github.com/runner-cli/runner/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// fakeRunner records the argv of each run and answers with res (or
// resFor's answer for the run's argv).
type fakeRunner struct {
	mu     sync.Mutex
	calls  [][]string
	stdins []string
	resFor func(args []string) Result
}

func (f *fakeRunner) Run(_ context.Context, args []string, stdin []byte) Result {
	f.mu.Lock()
	f.calls = append(f.calls, args)
	f.stdins = append(f.stdins, string(stdin))
	f.mu.Unlock()
	if f.resFor != nil {
		return f.resFor(args)
	}
	return Result{Stdout: []byte(`{"ok":true}`)}
}

func (f *fakeRunner) ran() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

type fixture struct {
	t      *testing.T
	dir    string
	tokens Tokens
	fake   *fakeRunner
	srv    *Server
	ts     *httptest.Server
	now    time.Time
}

func newFixture(t *testing.T, o Options) *fixture {
	t.Helper()
	f := &fixture{t: t, dir: t.TempDir(), fake: &fakeRunner{}, now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	var err error
	if f.tokens, err = LoadTokens(f.dir, false); err != nil {
		t.Fatal(err)
	}
	o.StateDir, o.Runner = f.dir, f.fake
	o.Now = func() time.Time { return f.now }
	if o.Status == nil {
		o.Status = testStatus
	}
	f.srv = New(o)
	f.ts = httptest.NewServer(f.srv)
	t.Cleanup(f.ts.Close)
	return f
}

// do sends a request; hdr are header name, value pairs.
func (f *fixture) do(method, path, body string, hdr ...string) (*http.Response, string) {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.ts.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// login opens a session with a fresh login link: its cookie and CSRF value.
func (f *fixture) login(scope Scope) (cookie, csrf string) {
	f.t.Helper()
	code, err := LoginLink(f.dir, scope, time.Minute, f.now)
	if err != nil {
		f.t.Fatal(err)
	}
	resp, _ := f.do("GET", "/login?code="+code, "")
	if resp.StatusCode != http.StatusSeeOther {
		f.t.Fatalf("login: %d", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == cookieName {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
				f.t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/", c)
			}
			cookie = c.Value
		}
	}
	if cookie == "" {
		f.t.Fatal("login set no cookie")
	}
	_, body := f.do("GET", "/api/v1/session", "", "Cookie", cookieName+"="+cookie)
	var s struct{ Scope, CSRF string }
	if err := json.Unmarshal([]byte(body), &s); err != nil || s.CSRF == "" || s.Scope != scope.String() {
		f.t.Fatalf("session: %s (%v)", body, err)
	}
	return cookie, s.CSRF
}

const tid = "t_abcd2345"

// TestNoCredential: every route the mux serves but /login answers 401
// without a credential and with a wrong one, says nothing about tasks and
// runs nothing.
func TestNoCredential(t *testing.T) {
	f := newFixture(t, Options{MCP: http.NotFoundHandler(), Follow: func(context.Context, uint64, func([]byte), func(uint64)) error { return nil }})
	for _, rt := range f.srv.routes() {
		if rt.scope == ScopeNone {
			continue
		}
		method, p, ok := strings.Cut(rt.pattern, " ")
		if !ok {
			method, p = "POST", rt.pattern
		}
		p = strings.ReplaceAll(strings.ReplaceAll(strings.TrimSuffix(p, "{$}"), "{id}", tid), "{name}", "app.js")
		body := ""
		if method == "POST" {
			body = `{}`
		}
		for _, hdr := range [][]string{nil, bearer("runner_act_wrong"), bearer(""), {"Authorization", "Basic " + f.tokens.Act},
			{"Authorization", "Bearer " + f.tokens.Act + "x"}, {"Cookie", cookieName + "=" + f.tokens.Act}} {
			resp, got := f.do(method, p, body, hdr...)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s %s %q: %d, want 401", method, p, hdr, resp.StatusCode)
			}
			if strings.Contains(got, "t_") || strings.Contains(got, "status") {
				t.Errorf("%s %s: 401 says %q", method, p, got)
			}
		}
	}
	if n := len(f.fake.ran()); n != 0 {
		t.Errorf("runner ran %d times for requests without a credential", n)
	}
}

// TestScopes: the read token reads and may not act; the act token does
// both, without a CSRF header (a Bearer token is exempt).
func TestScopes(t *testing.T) {
	f := newFixture(t, Options{})
	if resp, _ := f.do("GET", "/api/v1/tasks", "", bearer(f.tokens.Read)...); resp.StatusCode != 200 {
		t.Errorf("read GET: %d", resp.StatusCode)
	}
	for _, p := range []string{"/api/v1/tasks/" + tid + "/cancel", "/api/v1/tasks/" + tid + "/answer", "/api/v1/tasks"} {
		if resp, _ := f.do("POST", p, `{}`, bearer(f.tokens.Read)...); resp.StatusCode != http.StatusForbidden {
			t.Errorf("read token POST %s: %d, want 403", p, resp.StatusCode)
		}
	}
	if n := len(f.fake.ran()); n != 1 {
		t.Fatalf("runner ran %d times, want 1 (the read)", n)
	}
	if resp, body := f.do("POST", "/api/v1/tasks/"+tid+"/cancel", `{"kill":true}`, bearer(f.tokens.Act)...); resp.StatusCode != 200 {
		t.Errorf("act POST cancel: %d %s", resp.StatusCode, body)
	}
	if got := f.fake.ran()[1]; !slices.Equal(got, []string{"cancel", tid, "--json", "--kill"}) {
		t.Errorf("cancel ran %q", got)
	}
}

// TestCSRF: a session's request that changes something needs its CSRF
// value: a cross-site POST (the cookie, no header) is 403 and runs nothing.
func TestCSRF(t *testing.T) {
	f := newFixture(t, Options{})
	cookie, csrf := f.login(ScopeAct)
	ck := []string{"Cookie", cookieName + "=" + cookie}
	if resp, _ := f.do("GET", "/api/v1/tasks", "", ck...); resp.StatusCode != 200 {
		t.Fatalf("session GET: %d", resp.StatusCode)
	}
	p := "/api/v1/tasks/" + tid + "/cancel"
	for _, h := range [][]string{ck, append(slices.Clone(ck), CSRFHeader, csrf+"x"), append(slices.Clone(ck), CSRFHeader, "")} {
		if resp, _ := f.do("POST", p, `{}`, h...); resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST %q: %d, want 403", h, resp.StatusCode)
		}
	}
	// A form post from another site: no JSON, no header.
	if resp, _ := f.do("POST", p, "", append(slices.Clone(ck), "Content-Type", "application/x-www-form-urlencoded", "Origin", "https://evil.example")...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("form POST: %d, want 403", resp.StatusCode)
	}
	if n := len(f.fake.ran()); n != 1 {
		t.Fatalf("runner ran %d times, want 1", n)
	}
	if resp, _ := f.do("POST", p, `{}`, append(slices.Clone(ck), CSRFHeader, csrf)...); resp.StatusCode != 200 {
		t.Errorf("POST with the CSRF value: %d", resp.StatusCode)
	}
	// A read-only session reads and may not act, CSRF value or not.
	rc, rcsrf := f.login(ScopeRead)
	if resp, _ := f.do("POST", p, `{}`, "Cookie", cookieName+"="+rc, CSRFHeader, rcsrf); resp.StatusCode != http.StatusForbidden {
		t.Errorf("read session POST: %d, want 403", resp.StatusCode)
	}
	// Logged out: the cookie is gone for good.
	if resp, _ := f.do("POST", "/logout", "", append(slices.Clone(ck), CSRFHeader, csrf)...); resp.StatusCode != http.StatusNoContent {
		t.Errorf("logout: %d", resp.StatusCode)
	}
	if resp, _ := f.do("GET", "/api/v1/tasks", "", ck...); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after logout: %d, want 401", resp.StatusCode)
	}
}

// TestLoginOnce: a login link works once, and not after it expired.
func TestLoginOnce(t *testing.T) {
	f := newFixture(t, Options{})
	code, err := LoginLink(f.dir, ScopeAct, time.Minute, f.now)
	if err != nil {
		t.Fatal(err)
	}
	if resp, _ := f.do("GET", "/login?code="+code, ""); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("first use: %d", resp.StatusCode)
	}
	resp, _ := f.do("GET", "/login?code="+code, "")
	if resp.StatusCode != http.StatusUnauthorized || len(resp.Cookies()) != 0 {
		t.Errorf("second use: %d, cookies %v; want 401 and none", resp.StatusCode, resp.Cookies())
	}
	old, _ := LoginLink(f.dir, ScopeAct, time.Minute, f.now)
	f.now = f.now.Add(2 * time.Minute)
	if resp, _ := f.do("GET", "/login?code="+old, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("expired: %d, want 401", resp.StatusCode)
	}
	for _, bad := range []string{"", "x", url.QueryEscape("../../read.token"), strings.Repeat("A", 43)} {
		if resp, _ := f.do("GET", "/login?code="+bad, ""); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("code %q: %d, want 401", bad, resp.StatusCode)
		}
	}
	// The codes are kept as hashes only.
	ents, _ := os.ReadDir(filepath.Join(f.dir, Dir, loginDir))
	for _, e := range ents {
		if strings.Contains(e.Name(), code) {
			t.Errorf("a code file is named by the code: %s", e.Name())
		}
	}
}

// TestRotate: rotated tokens end the old ones and every session; the
// files are private.
func TestRotate(t *testing.T) {
	f := newFixture(t, Options{})
	cookie, _ := f.login(ScopeAct)
	for _, n := range []string{readTokenFile, actTokenFile} {
		fi, err := os.Stat(filepath.Join(f.dir, Dir, n))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want 0600", n, fi.Mode(), err)
		}
	}
	again, err := LoadTokens(f.dir, false)
	if err != nil || again != f.tokens {
		t.Fatalf("tokens changed on a second load: %v", err)
	}
	nt, err := LoadTokens(f.dir, true)
	if err != nil || nt.Act == f.tokens.Act || nt.Read == f.tokens.Read {
		t.Fatalf("rotate: %v", err)
	}
	f.now = f.now.Add(2 * time.Second) // past the token cache
	for _, h := range [][]string{bearer(f.tokens.Act), bearer(f.tokens.Read), {"Cookie", cookieName + "=" + cookie}} {
		if resp, _ := f.do("GET", "/api/v1/tasks", "", h...); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("old %q after rotate: %d, want 401", h[1][:12], resp.StatusCode)
		}
	}
	if resp, _ := f.do("GET", "/api/v1/tasks", "", bearer(nt.Act)...); resp.StatusCode != 200 {
		t.Errorf("new token: %d", resp.StatusCode)
	}
	// A token file others may read is refused: nothing answers.
	os.Chmod(filepath.Join(f.dir, Dir, actTokenFile), 0o644)
	f.now = f.now.Add(2 * time.Second)
	if resp, _ := f.do("GET", "/api/v1/tasks", "", bearer(nt.Act)...); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("token file 0644: %d, want 401", resp.StatusCode)
	}
}

// TestBadInput: a task id that is none, bodies too large, malformed, with
// unknown fields or more than one object: 400, and runner never runs.
func TestBadInput(t *testing.T) {
	f := newFixture(t, Options{})
	act := bearer(f.tokens.Act)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v1/tasks/t_x", ""},
		{"GET", "/api/v1/tasks/T_ABCD2345", ""},
		{"GET", "/api/v1/tasks/--help", ""},
		{"GET", "/api/v1/tasks/t_abcd2345%0a", ""},
		{"POST", "/api/v1/tasks/..%2ft_abcd2345/cancel", `{}`},
		{"POST", "/api/v1/tasks/-t_abcd234/answer", `{"digest":"d","option":"1","op":"o"}`},
		{"POST", "/api/v1/tasks", `{"project":"/p","task":"x","notify":"rm -rf ~"}`},
		{"POST", "/api/v1/tasks", `{"project":"/p","task":"x"}{"project":"/q","task":"y"}`},
		{"POST", "/api/v1/tasks", `{"project":"/p","task":`},
		{"POST", "/api/v1/tasks", `[1,2]`},
		{"POST", "/api/v1/tasks", `{"project":"/p","task":"` + strings.Repeat("x", MaxBody) + `"}`},
		{"POST", "/api/v1/tasks", `{"project":"../p","task":"x"}`},
		{"POST", "/api/v1/tasks", `{"project":"-h","task":"x"}`},
		{"POST", "/api/v1/tasks", `{"project":"p","task":"x","agent":"--notify=x"}`},
		{"POST", "/api/v1/tasks", `{"project":"p","task":"x","after":["--all"]}`},
		{"POST", "/api/v1/tasks", `{"project":"p","task":" "}`},
		{"POST", "/api/v1/tasks/" + tid + "/answer", `{"digest":"d","option":"--kill","op":"o"}`},
		{"POST", "/api/v1/tasks/" + tid + "/answer", `{"digest":"d","option":"1"}`},
		{"POST", "/api/v1/tasks/" + tid + "/answer", `{"digest":"d e","option":"1","op":"o"}`},
		{"POST", "/api/v1/tasks/" + tid + "/send", `{"text":""}`},
		{"POST", "/api/v1/tasks/" + tid + "/msg", `{"text":"hi","type":"--kill"}`},
		{"POST", "/api/v1/tasks/" + tid + "/cancel", `{"kill":"yes"}`},
		{"GET", "/api/v1/events?after=-1", ""},
		{"GET", "/api/v1/events?after=x", ""},
	} {
		resp, body := f.do(c.method, c.path, c.body, act...)
		if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMovedPermanently {
			t.Errorf("%s %s %.60s: %d %s, want 400", c.method, c.path, c.body, resp.StatusCode, body)
		}
	}
	// The body's type must be JSON.
	if resp, _ := f.do("POST", "/api/v1/tasks/"+tid+"/cancel", `{}`, append(slices.Clone(act), "Content-Type", "text/plain")...); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("text/plain body: %d, want 400", resp.StatusCode)
	}
	if calls := f.fake.ran(); len(calls) != 0 {
		t.Errorf("runner ran for bad input: %q", calls)
	}
}

// TestAssets: the page and its files come from the embedded files only.
func TestAssets(t *testing.T) {
	f := newFixture(t, Options{})
	read := bearer(f.tokens.Read)
	for p, want := range map[string]int{
		"/":                         200,
		"/assets/app.js":            200,
		"/assets/app.css":           200,
		"/assets/nothere.js":        404,
		"/assets/.hidden":           404,
		"/assets/..%2fopenapi.json": 404,
		"/assets/..%2f..%2fauth.go": 404,
		"/assets/%2e%2e/serve.go":   404,
		"/assets/web%2fapp.js":      404,
		"/assets/index.html":        404,
		"/assets/app.js%00":         404,
		"/assets/..\\openapi.json":  404,
		"/api/v1/openapi.json":      200,
		"/nothing":                  404,
	} {
		resp, body := f.do("GET", p, "", read...)
		got := resp.StatusCode
		if got == http.StatusMovedPermanently || got == http.StatusTemporaryRedirect {
			got = 404 // the mux cleans the path: nothing of ours is served
		}
		if got != want {
			t.Errorf("GET %s: %d, want %d", p, resp.StatusCode, want)
		}
		if want != 200 && (strings.Contains(body, "package serve") || strings.Contains(body, "openapi")) {
			t.Errorf("GET %s served %q", p, body[:min(len(body), 80)])
		}
	}
	resp, _ := f.do("GET", "/", "", read...)
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
}

// TestCommands: each route runs its command with its argv, the body on
// standard input, and the exit code becomes the status.
func TestCommands(t *testing.T) {
	f := newFixture(t, Options{})
	act := bearer(f.tokens.Act)
	code := 0
	f.fake.resFor = func([]string) Result {
		if code != 0 {
			return Result{Code: code, Stderr: []byte(`{"error":"it said no","exit_code":5}` + "\n")}
		}
		return Result{Stdout: []byte(`{"id":"` + tid + `"}`)}
	}
	for _, c := range []struct {
		method, path, body string
		code, status       int
		args               []string
		stdin              string
	}{
		{"GET", "/api/v1/tasks", "", 0, 200, []string{"ps", "--all", "--json"}, ""},
		{"GET", "/api/v1/tasks/" + tid, "", 0, 200, []string{"status", tid, "--json", "--screen"}, ""},
		{"POST", "/api/v1/tasks", `{"project":"shop","task":"add a test","agent":"sim","timeout":"5m","worktree":true,"after":["t_aaaa2222"],"max_turns":3}`, 0, 201,
			[]string{"dispatch", "--detach", "--json", "--file", "-", "--agent=sim", "--timeout=5m", "--worktree", "--after=t_aaaa2222", "--max-turns=3", "--", "shop"}, "add a test"},
		{"POST", "/api/v1/tasks", `{"project":"/src/-x","task":"t"}`, 2, 400, []string{"dispatch", "--detach", "--json", "--file", "-", "--", "/src/-x"}, "t"},
		{"POST", "/api/v1/tasks/" + tid + "/send", `{"text":"go on"}`, 0, 200, []string{"send", tid, "--detach", "--json", "--file", "-"}, "go on"},
		{"POST", "/api/v1/tasks/" + tid + "/msg", `{"text":"hi","type":"update"}`, 0, 200, []string{"msg", tid, "--json", "--file", "-", "--type=update"}, "hi"},
		{"POST", "/api/v1/tasks/" + tid + "/cancel", `{}`, 0, 200, []string{"cancel", tid, "--json"}, ""},
		{"POST", "/api/v1/tasks/" + tid + "/answer", `{"digest":"ab12","option":"2","op":"op-1"}`, 0, 200, []string{"answer", tid, "2", "--digest=ab12", "--op=op-1", "--by=api", "--json"}, ""},
		{"POST", "/api/v1/tasks/" + tid + "/answer", `{"digest":"ab12","option":"2","op":"op-2"}`, 5, 409, nil, ""},
		{"POST", "/api/v1/tasks/" + tid + "/answer", `{"digest":"ab12","option":"9","op":"op-3"}`, 2, 400, nil, ""},
		{"POST", "/api/v1/tasks/" + tid + "/send", `{"text":"go on"}`, 1, 422, nil, ""},
		{"POST", "/api/v1/tasks/" + tid + "/send", `{"text":"go on"}`, 3, 504, nil, ""},
		{"POST", "/api/v1/tasks/" + tid + "/send", `{"text":"go on"}`, -1, 500, nil, ""},
	} {
		code = c.code
		n := len(f.fake.ran())
		resp, body := f.do(c.method, c.path, c.body, act...)
		if resp.StatusCode != c.status {
			t.Errorf("%s %s (exit %d): %d %s, want %d", c.method, c.path, c.code, resp.StatusCode, body, c.status)
		}
		calls := f.fake.ran()
		if len(calls) != n+1 {
			t.Fatalf("%s %s: %d runs", c.method, c.path, len(calls)-n)
		}
		if c.args != nil && !slices.Equal(calls[n], c.args) {
			t.Errorf("%s %s ran %q, want %q", c.method, c.path, calls[n], c.args)
		}
		if c.args != nil && f.fake.stdins[n] != c.stdin {
			t.Errorf("%s %s: stdin %q, want %q", c.method, c.path, f.fake.stdins[n], c.stdin)
		}
		if c.code != 0 {
			var e apiError
			if json.Unmarshal([]byte(body), &e) != nil || e.Error != "it said no" || e.ExitCode == nil || *e.ExitCode != c.code {
				t.Errorf("%s %s: error body %s", c.method, c.path, body)
			}
		}
	}
}

// TestStatusWithoutScreen: a runner whose status does not know --screen
// yet gives the record alone, and is asked without it from then on.
func TestStatusWithoutScreen(t *testing.T) {
	f := newFixture(t, Options{})
	f.fake.resFor = func(args []string) Result {
		if slices.Contains(args, "--screen") {
			return Result{Code: 2, Stderr: []byte(`{"error":"unknown flag: --screen","exit_code":2}`)}
		}
		return Result{Stdout: []byte(`{"id":"` + tid + `"}`)}
	}
	for range 2 {
		if resp, body := f.do("GET", "/api/v1/tasks/"+tid, "", bearer(f.tokens.Read)...); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	if n := len(f.fake.ran()); n != 3 {
		t.Errorf("%d runs, want 3 (--screen once, then without it twice)", n)
	}
}

// TestBoundedRuns: no more runner processes at once than MaxRuns.
func TestBoundedRuns(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	running, most := 0, 0
	f := newFixture(t, Options{MaxRuns: 2})
	f.fake.resFor = func([]string) Result {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		return Result{Stdout: []byte(`[]`)}
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { f.do("GET", "/api/v1/tasks", "", bearer(f.tokens.Read)...) })
	}
	deadline := clock.Now().Add(10 * time.Second)
	for len(f.fake.ran()) < 2 && clock.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	wg.Wait()
	if most > 2 {
		t.Errorf("%d runs at once, want at most 2", most)
	}
}

// TestListen: a listen beyond loopback needs TLS or --insecure; a unix
// socket is private.
func TestListen(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:7777", "example.com:7777", "[::]:0"} {
		if ln, err := Listen(addr, false, false); err == nil {
			ln.Close()
			t.Errorf("Listen(%s) without TLS: no error", addr)
		} else if !strings.Contains(err.Error(), "--insecure") {
			t.Errorf("Listen(%s): %v", addr, err)
		}
	}
	ln, err := Listen("127.0.0.1:0", false, false)
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	dir, err := os.MkdirTemp("/tmp", "rsv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "s")
	ln, err = Listen("unix:"+sock, false, false)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("socket %v %v: want no access for others", fi.Mode(), err)
	}
	if ln2, err := Listen("unix:"+sock, false, false); err == nil {
		ln2.Close()
		t.Error("a second server on a live socket: no error")
	}
	ln.Close()
}

// testStatus is cmd/runner's table of exit codes to HTTP statuses
// (httpStatus), for the routes' tests.
func testStatus(code int) int {
	switch code {
	case 2:
		return http.StatusBadRequest
	case 5:
		return http.StatusConflict
	case 3:
		return http.StatusGatewayTimeout
	case 1, 4, 6, 7, 8:
		return http.StatusUnprocessableEntity
	case 130:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
