package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Scope is what a credential may do.
type Scope int

// The scopes: Read may GET, Act may also change things.
const (
	ScopeNone Scope = iota
	ScopeRead
	ScopeAct
)

func (s Scope) String() string {
	switch s {
	case ScopeRead:
		return "read"
	case ScopeAct:
		return "act"
	}
	return "none"
}

// Dir is where the server's secrets live in the state directory: the
// tokens and the login codes, every file 0600 and the folder 0700.
const Dir = "serve"

const (
	readTokenFile = "read.token"
	actTokenFile  = "act.token"
	loginDir      = "login"
	readPrefix    = "runner_read_"
	actPrefix     = "runner_act_"
)

// Tokens are the two bearer tokens of a state directory.
type Tokens struct {
	Read, Act string
}

// random returns n random bytes, base64url without padding.
func random(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on the systems runner runs on
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// LoadTokens returns the tokens kept in stateDir/serve, made when missing
// (or all anew with rotate: every session and client with an old token
// then gets 401).
func LoadTokens(stateDir string, rotate bool) (Tokens, error) {
	dir := filepath.Join(stateDir, Dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Tokens{}, fmt.Errorf("serve tokens: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return Tokens{}, fmt.Errorf("serve tokens: %w", err)
	}
	var t Tokens
	for _, f := range []struct {
		name, prefix string
		to           *string
	}{{readTokenFile, readPrefix, &t.Read}, {actTokenFile, actPrefix, &t.Act}} {
		path := filepath.Join(dir, f.name)
		if !rotate {
			tok, err := readSecret(path)
			if err == nil && strings.HasPrefix(tok, f.prefix) && len(tok) > len(f.prefix)+32 {
				*f.to = tok
				continue
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return Tokens{}, err
			}
		}
		*f.to = f.prefix + random(32)
		if err := writeSecret(path, []byte(*f.to+"\n")); err != nil {
			return Tokens{}, err
		}
	}
	return t, nil
}

// readSecret reads a small secret file: a regular file, no link, readable
// by its owner only.
func readSecret(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || fi.Size() > 4096 {
		return "", fmt.Errorf("%s: not a private regular file (it must be 0600): refused", path)
	}
	b, err := os.ReadFile(path)
	return strings.TrimSpace(string(b)), err
}

// writeSecret writes b to path 0600 through a temporary file and a rename.
func writeSecret(path string, b []byte) error {
	tmp := path + ".tmp" + random(6)
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// sum is the SHA-256 of s: secrets are compared and keyed by it.
func sum(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// scopeOf returns the scope token gives under t, comparing in constant
// time against both.
func (t Tokens) scopeOf(token string) Scope {
	got := sum(token)
	r, a := sum(t.Read), sum(t.Act)
	isRead := subtle.ConstantTimeCompare(got[:], r[:]) == 1
	isAct := subtle.ConstantTimeCompare(got[:], a[:]) == 1
	switch {
	case isAct && t.Act != "":
		return ScopeAct
	case isRead && t.Read != "":
		return ScopeRead
	}
	return ScopeNone
}

// generation names a pair of tokens: a session belongs to the pair it was
// opened under and ends when they are rotated.
func (t Tokens) generation() [32]byte { return sum(t.Read + "\x00" + t.Act) }

// tokenCache reloads the tokens when their files change (a --rotate-token
// of another process), at most every second.
type tokenCache struct {
	stateDir string
	now      func() time.Time
	mu       sync.Mutex
	tokens   Tokens
	checked  time.Time
	stamp    string
}

func (c *tokenCache) get() Tokens {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if !c.checked.IsZero() && now.Sub(c.checked) < time.Second && now.After(c.checked) {
		return c.tokens
	}
	c.checked = now
	var stamp strings.Builder
	for _, n := range []string{readTokenFile, actTokenFile} {
		if fi, err := os.Lstat(filepath.Join(c.stateDir, Dir, n)); err == nil {
			fmt.Fprintf(&stamp, "%d.%d.%v;", fi.ModTime().UnixNano(), fi.Size(), fi.Mode())
		}
	}
	if stamp.String() == c.stamp && c.stamp != "" {
		return c.tokens
	}
	r, errR := readSecret(filepath.Join(c.stateDir, Dir, readTokenFile))
	a, errA := readSecret(filepath.Join(c.stateDir, Dir, actTokenFile))
	if errR != nil || errA != nil {
		c.tokens, c.stamp = Tokens{}, "" // no token: nothing answers
		return c.tokens
	}
	c.tokens, c.stamp = Tokens{Read: r, Act: a}, stamp.String()
	return c.tokens
}

// LoginTTL is how long a login link works, by default.
const LoginTTL = 10 * time.Minute

type loginCode struct {
	Scope   string    `json:"scope"`
	Expires time.Time `json:"expires"`
}

// LoginLink makes a one-time login code for scope, valid for ttl, kept
// (as its hash) in stateDir/serve/login, and returns the code: the link
// is BASE/login?code=CODE. The server takes a code once (the file's
// removal is the claim), so a second use of the link is 401.
func LoginLink(stateDir string, scope Scope, ttl time.Duration, now time.Time) (string, error) {
	if scope != ScopeRead && scope != ScopeAct {
		return "", errors.New("login link: scope read or act")
	}
	dir := filepath.Join(stateDir, Dir, loginDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("login link: %w", err)
	}
	code := random(32)
	h := sum(code)
	b, _ := json.Marshal(loginCode{Scope: scope.String(), Expires: now.Add(ttl)})
	if err := writeSecret(filepath.Join(dir, hex.EncodeToString(h[:])), b); err != nil {
		return "", err
	}
	pruneLogins(dir, now)
	return code, nil
}

// validCode: a code is 43 base64url characters (32 bytes).
func validCode(code string) bool {
	if len(code) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(code)
	return err == nil
}

// claimLogin takes code once: its scope when it was made and has not
// expired nor been taken, ScopeNone otherwise.
func claimLogin(stateDir, code string, now time.Time) Scope {
	if !validCode(code) {
		return ScopeNone
	}
	h := sum(code)
	path := filepath.Join(stateDir, Dir, loginDir, hex.EncodeToString(h[:]))
	raw, err := readSecret(path)
	if err != nil {
		return ScopeNone
	}
	if os.Remove(path) != nil {
		return ScopeNone // another request took it first
	}
	var lc loginCode
	if json.Unmarshal([]byte(raw), &lc) != nil || !now.Before(lc.Expires) {
		return ScopeNone
	}
	switch lc.Scope {
	case "act":
		return ScopeAct
	case "read":
		return ScopeRead
	}
	return ScopeNone
}

// pruneLogins removes the codes that expired.
func pruneLogins(dir string, now time.Time) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		raw, err := readSecret(path)
		var lc loginCode
		if err == nil && json.Unmarshal([]byte(raw), &lc) == nil && now.After(lc.Expires) {
			os.Remove(path)
		}
	}
}

// session is a browser's login: the scope of its link, the CSRF value its
// page sends back, the tokens it was opened under.
type session struct {
	scope   Scope
	csrf    string
	gen     [32]byte
	expires time.Time
}

// SessionTTL is how long a page's login lasts.
const SessionTTL = 24 * time.Hour

// maxSessions bounds the sessions kept; the oldest goes first.
const maxSessions = 256

// sessions are kept in memory, keyed by the hash of their cookie: a
// restart of the server asks for a new login link.
type sessions struct {
	mu sync.Mutex
	m  map[[32]byte]*session
}

func (ss *sessions) open(scope Scope, gen [32]byte, now time.Time) (cookie string, s *session) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.m == nil {
		ss.m = map[[32]byte]*session{}
	}
	for len(ss.m) >= maxSessions {
		var oldest [32]byte
		var t time.Time
		for k, v := range ss.m {
			if t.IsZero() || v.expires.Before(t) {
				oldest, t = k, v.expires
			}
		}
		delete(ss.m, oldest)
	}
	cookie = random(32)
	s = &session{scope: scope, csrf: random(24), gen: gen, expires: now.Add(SessionTTL)}
	ss.m[sum(cookie)] = s
	return cookie, s
}

// get returns the live session of cookie under tokens of generation gen.
func (ss *sessions) get(cookie string, gen [32]byte, now time.Time) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	k := sum(cookie)
	s := ss.m[k]
	if s == nil {
		return nil
	}
	if !now.Before(s.expires) || subtle.ConstantTimeCompare(s.gen[:], gen[:]) != 1 {
		delete(ss.m, k)
		return nil
	}
	return s
}

func (ss *sessions) close(cookie string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.m, sum(cookie))
}
