package serve

import (
	"slices"
	"strings"
	"testing"
)

// FuzzDecoders: no body makes a decoder panic, and what a body decodes to
// becomes an argv with only allowed flags, each given as --flag=value or
// alone, the project after "--", nothing a flag where a value goes.
func FuzzDecoders(f *testing.F) {
	for _, s := range []string{
		`{"project":"shop","task":"x","agent":"sim","after":["t_aaaa2222"],"approve_rule":["^Run"]}`,
		`{"project":"/a/b","task":"x","timeout":"5m","budget_usd":1.5}`,
		`{"digest":"ab","option":"1","op":"o"}`, `{"text":"hi","type":"update"}`, `{"kill":true}`,
		`{"project":"-x","task":"y"}`, `{}`, `[]`, `{"a":1}`, `{"text":"\u0000"}`,
	} {
		f.Add([]byte(s))
	}
	allowed := []string{"--agent", "--model", "--permissions", "--timeout", "--ready-timeout", "--worktree", "--sandbox",
		"--commit", "--exclusive", "--yes-trust", "--after", "--approve-rule", "--max-turns", "--budget-tokens", "--budget-usd"}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d DispatchRequest
		if DecodeJSON(b, &d) == nil {
			if args, err := d.Args(); err == nil {
				if !slices.Equal(args[:5], []string{"dispatch", "--detach", "--json", "--file", "-"}) ||
					args[len(args)-2] != "--" || args[len(args)-1] != d.Project {
					t.Fatalf("argv %q", args)
				}
				for _, a := range args[5 : len(args)-2] {
					name, _, _ := strings.Cut(a, "=")
					if !slices.Contains(allowed, name) {
						t.Fatalf("flag %q from %s", a, b)
					}
				}
			}
		}
		var a AnswerRequest
		if DecodeJSON(b, &a) == nil {
			if args, err := a.Args(tid); err == nil {
				if len(args) != 7 || args[2] != a.Option || strings.HasPrefix(args[2], "-") ||
					args[3] != "--digest="+a.Digest || args[4] != "--op="+a.Op {
					t.Fatalf("answer argv %q", args)
				}
			}
		}
		var tr TextRequest
		_ = DecodeJSON(b, &tr)
		var c CancelRequest
		_ = DecodeJSON(b, &c)
	})
}
