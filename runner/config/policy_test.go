package config

import "testing"

func TestPolicyFor(t *testing.T) {
	setup := &WorktreeSetup{}
	c := &Config{
		Isolation: map[string]string{"*": "worktree", "web": "shared"},
		MaxTurns:  map[string]int{"api": 3},
		BudgetUSD: map[string]float64{"*": 2.5}, Sandbox: map[string]bool{"*": true, "api": false},
		WorktreeSetup: map[string]*WorktreeSetup{"api": setup},
	}
	api, web, other := c.PolicyFor("api"), c.PolicyFor("web"), c.PolicyFor("x")
	if api.Isolation != "worktree" || api.MaxTurns != 3 || api.BudgetUSD != 2.5 || api.Sandbox || api.Setup != setup {
		t.Errorf("api: %+v", api)
	}
	if web.Isolation != "shared" || web.MaxTurns != 0 || !web.Sandbox || web.Setup != nil {
		t.Errorf("web: %+v", web)
	}
	if other.Isolation != "worktree" || other.BudgetTokens != 0 || !other.Sandbox {
		t.Errorf("another project: %+v", other)
	}
	var none *Config
	if p := none.PolicyFor("api"); p != (Policy{}) {
		t.Errorf("no config: %+v", p)
	}
}
