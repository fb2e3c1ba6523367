package mockapi

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MockAPIKey is the API key the CLIs are given. The mock accepts any key;
// Claude Code's first-run "Detected a custom API key" dialog is pre-answered
// for this one through its last 20 characters in ~/.claude.json.
const MockAPIKey = "sk-ant-mock-0123456789abcdefghij"

// MockModel is the model name configured for Codex, opencode and Qwen Code
// (the mock answers whatever model is asked for).
const MockModel = "mock-model"

// CLIs lists the agent CLIs AgentEnv knows, in a stable order.
func CLIs() []string { return []string{"claude", "codex", "gemini", "opencode", "qwen"} }

// NewCLIs are the agent CLIs whose profiles are agent files alone, run by
// TestRealAgentsNewCLIs (not by the whole suite yet).
func NewCLIs() []string { return []string{"pi", "copilot"} }

// AddedCLIs are the agent CLIs of issue 54 verified through the mock
// (Factory Droid), run by TestRealAgentsNewCLIs,
// TestRealAgentsAutoSandbox, TestRealAgentsAnswerToolText and
// TestRealAgentsLimit; the spend, budget and remote tests do not run them
// yet (Droid records no per-turn usage: see its profile).
func AddedCLIs() []string { return []string{"droid"} }

// AgentEnv returns what the agent CLI cli ("claude", "codex", "gemini",
// "opencode", "qwen", "pi", "copilot") needs to run against the mock at
// baseURL from the throw-away home directory home: environment entries
// (KEY=VALUE, to add to a minimal environment such as PATH, LANG and TERM;
// HOME and the XDG directories point into home) and first-run files
// (absolute paths under home → content).
//
// The files seed only what a user does once per machine: the log-in or API
// key (and its approval), the provider pointing at the mock, and onboarding
// steps that would otherwise need the real network. Folder trust is a
// question of each new project: it is seeded only for projects (absolute
// directories the CLI will be started in, pre-trusted as a user who
// answered the dialog before would have them). Pass none to start the CLI
// in a folder it has never seen, as a dispatch to a new project does.
// Write the files with WriteFiles before starting the CLI.
//
// What stays on screen is the CLI's real behaviour: trust dialogs for
// folders not in projects, and tool approvals (opencode is configured with
// permission "ask" for edit and bash, since it allows both by default).
func AgentEnv(cli, baseURL, home string, projects ...string) (env []string, files map[string]string, err error) {
	if !filepath.IsAbs(home) {
		return nil, nil, fmt.Errorf("mockapi: home %q for %s is not an absolute path (use t.TempDir())", home, cli)
	}
	for _, p := range projects {
		if !filepath.IsAbs(p) {
			return nil, nil, fmt.Errorf("mockapi: project %q for %s is not an absolute path", p, cli)
		}
	}
	baseURL = strings.TrimSuffix(baseURL, "/")
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		return nil, nil, fmt.Errorf("mockapi: base URL %q for %s is not an http(s) URL (use Server.URL())", baseURL, cli)
	}
	env = []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
	}
	setup, ok := setups[cli]
	if !ok {
		return nil, nil, fmt.Errorf("mockapi: unknown agent CLI %q (known: %s)", cli, strings.Join(append(append(CLIs(), NewCLIs()...), AddedCLIs()...), ", "))
	}
	a := &agentSetup{baseURL: baseURL, home: home, projects: projects, env: env, files: map[string]string{}}
	setup(a)
	return a.env, a.files, nil
}

// WriteFiles writes files (absolute path → content) as returned by AgentEnv,
// creating directories (0700) as needed; files are 0600.
func WriteFiles(files map[string]string) error {
	for _, path := range sortedKeys(files) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("mockapi: create directory for %s: %w", path, err)
		}
		if err := os.WriteFile(path, []byte(files[path]), 0o600); err != nil {
			return fmt.Errorf("mockapi: write %s: %w", path, err)
		}
	}
	return nil
}

func jsonText(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // only maps of plain values are marshalled here
	}
	return string(b) + "\n"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// agentSetup is what AgentEnv builds for one CLI: its environment and
// files, from the mock's URL, the CLI's HOME and the trusted projects.
type agentSetup struct {
	baseURL, home string
	projects      []string
	env           []string
	files         map[string]string
}

// setups holds each CLI's settings (see AgentEnv).
var setups = map[string]func(*agentSetup){
	"claude":   setupClaude,
	"codex":    setupCodex,
	"qwen":     setupQwen,
	"gemini":   setupGemini,
	"opencode": setupOpencode,
	"pi":       setupPi,
	"copilot":  setupCopilot,
	"kilo":     setupKilo,
	"cline":    setupCline,
	"droid":    setupDroid,
}

// setupClaude is AgentEnv for claude.
func setupClaude(a *agentSetup) {
	a.env = append(a.env,
		"ANTHROPIC_BASE_URL="+a.baseURL,
		"ANTHROPIC_API_KEY="+MockAPIKey,
		"DISABLE_AUTOUPDATER=1", // else it installs updates globally
	)
	trusted := map[string]any{}
	for _, p := range a.projects {
		trusted[p] = map[string]any{"hasTrustDialogAccepted": true, "allowedTools": []string{}}
	}
	a.files[filepath.Join(a.home, ".claude.json")] = jsonText(map[string]any{
		// Else: an onboarding whose connectivity check needs the real
		// network (api.anthropic.com), exit 1 offline.
		"hasCompletedOnboarding": true,
		// The user's once-only answer to "Detected a custom API key".
		"customApiKeyResponses": map[string]any{
			"approved": []string{MockAPIKey[len(MockAPIKey)-20:]},
			"rejected": []string{},
		},
		"projects": trusted,
	})
}

// setupCodex is AgentEnv for codex.
func setupCodex(a *agentSetup) {
	codexHome := filepath.Join(a.home, ".codex")
	a.env = append(a.env, "CODEX_HOME="+codexHome, "RUNNER_MOCK_API_KEY="+MockAPIKey)
	var b strings.Builder
	fmt.Fprintf(&b, "model = %s\nmodel_provider = \"mock\"\ncheck_for_update_on_startup = false\n\n", strconv.Quote(MockModel))
	fmt.Fprintf(&b, "[model_providers.mock]\nname = \"Mock\"\nbase_url = %s\nenv_key = \"RUNNER_MOCK_API_KEY\"\nwire_api = \"responses\"\n",
		strconv.Quote(a.baseURL+"/v1"))
	for _, p := range sortedCopy(a.projects) {
		fmt.Fprintf(&b, "\n[projects.%s]\ntrust_level = \"trusted\"\n", strconv.Quote(p))
	}
	a.files[filepath.Join(codexHome, "config.toml")] = b.String()
}

// setupQwen is AgentEnv for qwen.
func setupQwen(a *agentSetup) {
	// Qwen Code (a Gemini CLI fork) talks to an OpenAI-compatible API
	// given by OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL once
	// the auth type "openai" is chosen (else it opens its "Select
	// Authentication Method" dialog whatever the environment says).
	// Its folder trust is off unless security.folderTrust.enabled (it
	// never asks), so projects need nothing.
	a.env = append(a.env,
		"OPENAI_BASE_URL="+a.baseURL+"/v1",
		"OPENAI_API_KEY="+MockAPIKey,
		"OPENAI_MODEL="+MockModel,
	)
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}},
		"model":    map[string]any{"name": MockModel},
		// No update check or usage statistics: no network but the mock.
		"general": map[string]any{"enableAutoUpdate": false},
		"privacy": map[string]any{"usageStatisticsEnabled": false},
	}
	a.files[filepath.Join(a.home, ".qwen", "settings.json")] = jsonText(settings)
}

// setupGemini is AgentEnv for gemini.
func setupGemini(a *agentSetup) {
	a.env = append(a.env,
		"GEMINI_API_KEY="+MockAPIKey,
		// Honoured with the gemini-api-key auth type; setting it also
		// switches the default auth to "gateway", hence selectedType below.
		"GOOGLE_GEMINI_BASE_URL="+a.baseURL,
	)
	a.files[filepath.Join(a.home, ".gemini", "settings.json")] = jsonText(map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
	})
	if len(a.projects) > 0 {
		trusted := map[string]string{}
		for _, p := range a.projects {
			trusted[p] = "TRUST_FOLDER"
		}
		a.files[filepath.Join(a.home, ".gemini", "trustedFolders.json")] = jsonText(trusted)
	}
}

// setupOpencode is AgentEnv for opencode.
func setupOpencode(a *agentSetup) {
	// Its model catalogue (models.dev) is fetched from the mock, which
	// answers an empty one: without this, start-up waits for a network
	// time-out.
	a.env = append(a.env, "OPENCODE_MODELS_URL="+a.baseURL)
	a.files[filepath.Join(a.home, ".config", "opencode", "opencode.json")] = jsonText(map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"model":      "mock/" + MockModel,
		"autoupdate": false,
		"share":      "disabled",
		"permission": map[string]any{"edit": "ask", "bash": "ask"},
		"provider": map[string]any{
			"mock": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Mock",
				"options": map[string]any{"baseURL": a.baseURL + "/v1", "apiKey": MockAPIKey},
				"models":  map[string]any{MockModel: map[string]any{"name": "Mock Model"}},
			},
		},
	})
}

// setupPi is AgentEnv for pi: a provider "mock" in its agent directory's
// models.json (OpenAI chat completions at the mock), made the default in
// settings.json; PI_OFFLINE keeps it off the network. It has no folder
// trust and asks no approvals.
func setupPi(a *agentSetup) {
	dir := filepath.Join(a.home, ".pi", "agent")
	a.env = append(a.env, "PI_CODING_AGENT_DIR="+dir, "PI_OFFLINE=1")
	a.files[filepath.Join(dir, "models.json")] = jsonText(map[string]any{
		"providers": map[string]any{
			"mock": map[string]any{
				"baseUrl": a.baseURL + "/v1",
				"api":     "openai-completions",
				"apiKey":  MockAPIKey,
				"compat":  map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
				"models":  []any{map[string]any{"id": MockModel, "name": "Mock Model"}},
			},
		},
	})
	a.files[filepath.Join(dir, "settings.json")] = jsonText(map[string]any{
		"defaultProvider": "mock", "defaultModel": MockModel,
	})
}

// setupCopilot is AgentEnv for GitHub Copilot CLI: its own-provider mode
// (BYOK) at the mock, offline (no GitHub login, no network). Projects are
// trusted in its config.json, as answering "remember this folder" does.
func setupCopilot(a *agentSetup) {
	home := filepath.Join(a.home, ".copilot")
	a.env = append(a.env,
		"COPILOT_HOME="+home,
		"COPILOT_OFFLINE=true",
		"COPILOT_AUTO_UPDATE=false",
		"COPILOT_PROVIDER_BASE_URL="+a.baseURL+"/v1",
		"COPILOT_PROVIDER_API_KEY="+MockAPIKey,
		"COPILOT_MODEL="+MockModel,
	)
	if len(a.projects) > 0 {
		a.files[filepath.Join(home, "config.json")] = jsonText(map[string]any{"trustedFolders": sortedCopy(a.projects)})
	}
}

// setupDroid is AgentEnv for Factory Droid: its Airgap Mode
// (FACTORY_AIRGAP_ENABLED: no Factory login, no Factory service, only the
// user's own models) with the mock as a custom model (BYOK: customModels
// in ~/.factory/settings.json, Anthropic's Messages API), the key from the
// environment. Projects are trusted in the same file's trustedFolders,
// as answering its "Trust this folder?" does.
func setupDroid(a *agentSetup) {
	a.env = append(a.env,
		"FACTORY_AIRGAP_ENABLED=1",
		"FACTORY_DROID_AUTO_UPDATE_ENABLED=false",
		"RUNNER_MOCK_API_KEY="+MockAPIKey,
	)
	settings := map[string]any{
		"customModels": []any{map[string]any{
			"model":           MockModel,
			"displayName":     "Mock",
			"baseUrl":         a.baseURL,
			"apiKey":          "${RUNNER_MOCK_API_KEY}",
			"provider":        "anthropic",
			"maxOutputTokens": 4096,
		}},
	}
	if len(a.projects) > 0 {
		trusted := map[string]any{}
		for _, p := range a.projects {
			trusted[p] = map[string]any{"trustedAt": "2026-01-01T00:00:00.000Z"}
		}
		settings["trustedFolders"] = trusted
	}
	a.files[filepath.Join(a.home, ".factory", "settings.json")] = jsonText(settings)
}

// setupKilo is AgentEnv for Kilo Code's CLI (an OpenCode fork): the
// mock as an OpenAI-compatible provider in its config
// (~/.config/kilo/kilo.json, OpenCode's keys), its model catalogue
// (models.dev) fetched from the mock (KILO_MODELS_URL), as OpenCode's.
// It has no folder trust; its own default approves edits in the folder
// (--permissions ask sets KILO_PERMISSION).
func setupKilo(a *agentSetup) {
	a.env = append(a.env, "KILO_MODELS_URL="+a.baseURL)
	a.files[filepath.Join(a.home, ".config", "kilo", "kilo.json")] = jsonText(map[string]any{
		"$schema":    "https://app.kilo.ai/config.json",
		"model":      "mock/" + MockModel,
		"autoupdate": false,
		"share":      "disabled",
		"provider": map[string]any{
			"mock": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Mock",
				"options": map[string]any{"baseURL": a.baseURL + "/v1", "apiKey": MockAPIKey},
				"models":  map[string]any{MockModel: map[string]any{"name": "Mock Model"}},
			},
		},
	})
}

// setupCline is AgentEnv for Cline's CLI: the provider settings that
// `cline auth -p openai -k KEY -b URL -m MODEL` writes once
// (~/.cline/data/settings/providers.json, an OpenAI-compatible
// provider at the mock). It has no folder trust.
func setupCline(a *agentSetup) {
	a.files[filepath.Join(a.home, ".cline", "data", "settings", "providers.json")] = jsonText(map[string]any{
		"version":          1,
		"lastUsedProvider": "openai-compatible",
		"modes":            map[string]any{},
		"providers": map[string]any{
			"openai-compatible": map[string]any{
				"settings": map[string]any{
					"provider": "openai-compatible",
					"apiKey":   MockAPIKey,
					"model":    MockModel,
					"baseUrl":  a.baseURL + "/v1",
				},
				// Without it Cline 3.0.65 takes the file for invalid and
				// writes its own default (the cline provider) over it.
				"updatedAt":   "2026-01-01T00:00:00.000Z",
				"tokenSource": "manual",
			},
		},
	})
}
