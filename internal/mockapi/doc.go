// Package mockapi is a small mock of the model APIs that the real agent CLIs
// call, served on 127.0.0.1, so that Claude Code, Codex, Gemini CLI,
// opencode and Qwen Code (CLIs), and pi and Copilot CLI (NewCLIs), can
// run real turns offline in tests.
//
// It owns: the Anthropic Messages API (streaming SSE and plain JSON, plus
// count_tokens), the OpenAI Responses API (streaming, what Codex calls) and
// Chat Completions (streaming, what opencode's OpenAI-compatible provider
// calls), the Gemini generateContent / streamGenerateContent / countTokens
// calls, a scripted choice of replies ([Turn]), a log of every request, and
// [AgentEnv], the environment and first-run files each CLI needs to talk to
// the mock from a throw-away HOME.
//
// A turn can answer with plain text, or first with a tool call (write a file
// or run a shell command, mapped to each CLI's own tool) so that the CLI shows
// its real approval dialog, and then with a final text once the tool result
// comes back. Requests that offer no tools (titles, summaries, quota checks)
// get the turn's text and never a tool call.
//
// Caveat: the wire formats are the subset these CLIs read (checked against
// the versions named in runner/profile/testdata/screens-real/README.md), not complete
// implementations of the vendors' APIs. Unknown paths answer 404 with a JSON
// error and are logged, so a new CLI release that calls something new shows up
// in [Server.Requests].
package mockapi
