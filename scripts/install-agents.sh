#!/usr/bin/env bash
# install-agents.sh — install the real agent CLIs (Claude Code, Codex, Gemini CLI,
# opencode) from npm into a LOCAL prefix, never globally, for the realagents tests.
#
#   scripts/install-agents.sh [PACKAGE...]
#
# Prefix: $RUNNER_AGENTS_PREFIX (default ~/.cache/runner/agents). Idempotent: a
# package whose installed version already satisfies the requested spec is not
# reinstalled. Prints the bin directory (PREFIX/bin) as its last line of stdout;
# add it to PATH. Set RUNNER_AGENTS_FORCE=1 to reinstall everything.
set -euo pipefail

prefix="${RUNNER_AGENTS_PREFIX:-$HOME/.cache/runner/agents}"
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(@anthropic-ai/claude-code @openai/codex @google/gemini-cli opencode-ai)
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

todo=()
for p in "${pkgs[@]}"; do
	name="${p%@*}"
	[ -z "$name" ] && name="$p" # scoped name without a version: "@scope/x"
	case "$p" in @*/*@*) name="${p%@*}" ;; @*) name="$p" ;; esac
	v="$(installed_version "$name")"
	if [ -n "$v" ] && [ "${RUNNER_AGENTS_FORCE:-0}" != 1 ]; then
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
	case "$p" in @*/*@*) name="${p%@*}" ;; @*) name="$p" ;; *) name="${p%@*}" ;; esac
	echo "install-agents: $name $(installed_version "$name")" >&2
done
echo "$prefix/bin"
