package config

// Policy is what the config says of one project's tasks: each key's value
// for the project, else for "*" (every project), else none.
type Policy struct {
	// Isolation is "worktree" for a worktree per task, else "" (the
	// shared tree).
	Isolation string
	// MaxTurns, BudgetTokens and BudgetUSD are the tasks' budgets (0:
	// none).
	MaxTurns     int
	BudgetTokens int64
	BudgetUSD    float64
	// Setup makes a worktree ready (nil: nothing to do).
	Setup *WorktreeSetup
	// Sandbox says the tasks run sandboxed.
	Sandbox bool
	// Check is the command a group's candidates are checked with ("" for
	// none).
	Check string
	// Ports is the config's ports (the same for every project).
	Ports Ports
}

// PolicyFor returns the config's policy for project's tasks.
func (c *Config) PolicyFor(project string) Policy {
	if c == nil {
		return Policy{}
	}
	return Policy{
		Isolation:    forProject(c.Isolation, project),
		MaxTurns:     forProject(c.MaxTurns, project),
		BudgetTokens: forProject(c.BudgetTokens, project),
		BudgetUSD:    forProject(c.BudgetUSD, project),
		Setup:        forProject(c.WorktreeSetup, project),
		Sandbox:      forProject(c.Sandbox, project),
		Check:        forProject(c.Check, project),
		Ports:        c.Ports,
	}
}

// forProject is m's value for project, else for "*", else the zero value.
func forProject[V any](m map[string]V, project string) V {
	if v, ok := m[project]; ok {
		return v
	}
	return m["*"]
}
