package serve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestOpenAPIMatchesMux: every path and method of openapi.json is a route
// the mux serves, and every route the mux serves is in the document.
func TestOpenAPIMatchesMux(t *testing.T) {
	b, err := files.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	s := New(Options{StateDir: t.TempDir(), Runner: &fakeRunner{}, MCP: http.NotFoundHandler()})
	// The document's operations, as the mux's patterns they reach.
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			method := strings.ToUpper(m)
			concrete := strings.NewReplacer("{id}", tid, "{name}", "app.js").Replace(p)
			_, pattern := s.mux.Handler(httptest.NewRequest(method, concrete, nil))
			if pattern == "" {
				t.Errorf("%s %s is documented; the mux serves no such route", method, p)
				continue
			}
			documented[method+" "+p] = true
			want := method + " " + p
			if p == "/" {
				want = "GET /{$}"
			}
			if pattern != want && pattern != p {
				t.Errorf("%s %s reaches the mux's %q", method, p, pattern)
			}
		}
	}
	// The mux's routes, each documented.
	for _, rt := range s.routes() {
		method, p, ok := strings.Cut(rt.pattern, " ")
		methods := []string{method}
		if !ok {
			p, methods = rt.pattern, []string{"GET", "POST", "DELETE"}
		}
		p = strings.TrimSuffix(p, "{$}")
		for _, m := range methods {
			if !documented[m+" "+p] {
				t.Errorf("the mux serves %s %s; openapi.json does not say so", m, p)
			}
		}
	}
	if !slices.ContainsFunc(s.routes(), func(r route) bool { return r.pattern == "GET /api/v1/openapi.json" }) {
		t.Error("the document is not served")
	}
}
