package mockapi

import "strings"

// ToolCall is a model's call of a tool the CLI offers by name, with its
// arguments: an MCP server's tool (runner mcp's runner_list, say), which
// each CLI offers the model under a name of its own.
type ToolCall struct {
	// Name is the tool's own name (runner_list).
	Name string
	// Args are its arguments (nil: none).
	Args map[string]any
}

// offeredAs is the name under which offered holds c's tool: its own name,
// or an MCP tool's qualified one, SERVER__NAME after a prefix (Claude
// Code: mcp__runner__runner_list; Gemini CLI, Qwen Code:
// runner__runner_list).
func (c *ToolCall) offeredAs(offered []string) (string, bool) {
	for _, o := range offered {
		if o == c.Name || strings.HasSuffix(o, "__"+c.Name) {
			return o, true
		}
	}
	return "", false
}

func (c *ToolCall) argsOrEmpty() map[string]any {
	if c.Args == nil {
		return map[string]any{}
	}
	return c.Args
}
