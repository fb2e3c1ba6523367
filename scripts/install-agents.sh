#!/usr/bin/env bash
# install-agents.sh — install the real agent CLIs (Claude Code, Codex, Gemini CLI,
# opencode, Qwen Code, pi, GitHub Copilot CLI) from npm into a LOCAL prefix, never globally, for the
# realagents tests.
#
#   scripts/install-agents.sh [PACKAGE...]
#
# Prefix: $RUNNER_AGENTS_PREFIX (default ~/.cache/runner/agents). Idempotent: a
# package that is installed (at the exact version, when PACKAGE@VERSION is
# given) is not reinstalled. Prints the bin directory (PREFIX/bin) as its last line of stdout;
# add it to PATH. Set RUNNER_AGENTS_FORCE=1 to reinstall everything.
set -euo pipefail

prefix="${RUNNER_AGENTS_PREFIX:-$HOME/.cache/runner/agents}"
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(@anthropic-ai/claude-code @openai/codex @google/gemini-cli opencode-ai @qwen-code/qwen-code @mariozechner/pi-coding-agent @github/copilot)
fi

command -v npm >/dev/null 2>&1 || {
	echo "install-agents: npm not found in PATH (install Node.js >= 20, e.g. 'apt-get install nodejs npm')" >&2
	exit 1
}

# Claude Code updates itself (globally) unless told not to; keep npm quiet and local.
export DISABLE_AUTOUPDATER=1
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

mkdir -p "$prefix"
installed_version() { # name -> version or empty
	local pj="$prefix/lib/node_modules/$1/package.json"
	[ -f "$pj" ] && node -e 'process.stdout.write(require(process.argv[1]).version)' "$pj" 2>/dev/null || true
}

# split SPEC: sets name and version ("" when SPEC names no version).
split() {
	local spec=$1 rest
	name=$spec version=""
	if [[ $spec == @* ]]; then
		rest=${spec#@}
		if [[ $rest == *@* ]]; then name="@${rest%@*}" version=${rest##*@}; fi
	elif [[ $spec == *@* ]]; then
		name=${spec%@*} version=${spec##*@}
	fi
}

todo=()
for p in "${pkgs[@]}"; do
	split "$p"
	v="$(installed_version "$name")"
	# Up to date: installed, and either no version asked for or exactly that
	# version (a tag or range such as "latest" or "^1" is always reinstalled).
	if [ -n "$v" ] && [ "${RUNNER_AGENTS_FORCE:-0}" != 1 ] && { [ -z "$version" ] || [ "$version" = "$v" ]; }; then
		echo "install-agents: $name $v already installed in $prefix" >&2
		continue
	fi
	todo+=("$p")
done

if [ ${#todo[@]} -gt 0 ]; then
	echo "install-agents: installing ${todo[*]} into $prefix" >&2
	# --prefix with -g installs into PREFIX/lib/node_modules and links PREFIX/bin,
	# never into the system prefix.
	if ! npm install -g --prefix "$prefix" --no-audit --no-fund "${todo[@]}" >&2; then
		echo "install-agents: npm install failed for ${todo[*]} (is the npm registry reachable? see npm's log above)" >&2
		exit 1
	fi
fi

for p in "${pkgs[@]}"; do
	split "$p"
	echo "install-agents: $name $(installed_version "$name")" >&2
done
echo "$prefix/bin"
