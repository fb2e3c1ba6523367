#!/usr/bin/env bash
# release-check.sh — build a snapshot release (scripts/release.sh --snapshot)
# into a temporary directory and check what a user would get from it:
#
#   - the linux/amd64 binaries (the archive's and the .deb's) run 'version'
#     and 'version --json' and print the stamped version, commit and date
#     (the commit's time); every other binary is for its OS and architecture
#     (its ELF or Mach-O header, and file(1)'s word on it when installed);
#   - each archive holds the binary, README.md, the man pages and the three
#     completions (bash, zsh, fish), and they look like what they are;
#   - checksums.txt covers every artifact and verifies (sha256sum -c);
#   - each .deb's control file (Package, a Debian version, Architecture,
#     Depends: tmux, git, Recommends: bubblewrap, …) and its file list;
#   - the Homebrew formula names the darwin archives with their sha256;
#   - the amd64 .deb installs on this machine (dpkg -i), /usr/bin/runner
#     version works, the man page and completions are where they belong, and
#     it is removed again (dpkg -r). A trap removes it whatever happens.
#     This part needs root, tmux and git, and no runner installed in
#     /usr/bin already; without them it is skipped (failed under CI=true).
#
#   scripts/release-check.sh     under a minute with a warm build cache, about 2 min cold
#
# .ci/run runs it. Exit 1 lists every check that failed.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"
start=$(date +%s)

failures=0
fail() {
	echo "release-check: FAIL: $*" >&2
	failures=$((failures + 1))
}
mark=0
ok() { # says ok when no check failed since the last ok
	((failures != mark)) || echo "release-check: ok: $*"
	mark=$failures
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/runner-release-check.XXXXXX")
installed=false # set before dpkg -i: a half-done install is removed too
cleanup() {
	if $installed; then
		dpkg -r runner >/dev/null 2>&1 || echo "release-check: 'dpkg -r runner' failed: remove the package by hand" >&2
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # through the EXIT trap

scripts/release.sh --snapshot "$tmp/dist" >"$tmp/release.log" 2>&1 || {
	cat "$tmp/release.log" >&2
	echo "release-check: FAIL: scripts/release.sh --snapshot failed (above)" >&2
	exit 1
}
dist="$tmp/dist"

# What was built, from the names of the artifacts (HEAD may have moved on).
a=("$dist"/runner_*_linux_amd64.tar.gz)
if [ ${#a[@]} != 1 ] || [ ! -f "${a[0]}" ]; then
	ls -l "$dist" >&2
	echo "release-check: FAIL: not one linux/amd64 archive in the release" >&2
	exit 1
fi
ver=${a[0]##*/runner_}
ver=${ver%_linux_amd64.tar.gz}
debver=${ver//-/\~}
short=${ver##*.}
commit=$(git rev-parse --verify --quiet "$short^{commit}") || {
	echo "release-check: FAIL: version $ver does not end in a commit of this repository" >&2
	exit 1
}
date=$(git log -1 --format=%cI "$commit")
day=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d "$commit")
[[ $ver =~ ^[0-9]+\.[0-9]+\.[0-9]+-git$day\.${commit:0:7}$ ]] || fail "snapshot version $ver is not X.Y.Z-git$day.${commit:0:7}"
echo "release-check: runner $ver from ${commit:0:12} ($date)"

# platform_of FILE: "os/arch" from an executable's ELF or Mach-O header.
platform_of() {
	local h
	h=$(od -An -tx1 -N20 "$1" | tr -d ' \n')
	case $h in
	7f454c460201*) # 64-bit little-endian ELF: OS ABI in byte 7, machine in bytes 18-19
		local os=linux arch="?"
		[ "${h:14:2}" = 09 ] && os=freebsd
		case ${h:36:4} in 3e00) arch=amd64 ;; b700) arch=arm64 ;; esac
		echo "$os/$arch"
		;;
	cffaedfe*) # 64-bit Mach-O: CPU type in bytes 4-7
		case ${h:8:8} in 07000001) echo darwin/amd64 ;; 0c000001) echo darwin/arm64 ;; *) echo "darwin/?" ;; esac
		;;
	*) echo "unknown (${h:0:8})" ;;
	esac
}
# file_says OS/ARCH: what file(1) prints for a binary of that platform.
file_says() {
	case $1 in
	linux/amd64) echo 'ELF 64-bit LSB .*x86-64.*SYSV' ;;
	linux/arm64) echo 'ELF 64-bit LSB .*ARM aarch64.*SYSV' ;;
	freebsd/amd64) echo 'ELF 64-bit LSB .*x86-64.*FreeBSD' ;;
	darwin/amd64) echo 'Mach-O 64-bit x86_64 executable' ;;
	darwin/arm64) echo 'Mach-O 64-bit arm64 executable' ;;
	esac
}
check_binary() { # FILE OS/ARCH
	local got
	got=$(platform_of "$1")
	[ "$got" = "$2" ] || fail "${1#"$tmp"/} is for $got, not $2"
	if command -v file >/dev/null 2>&1; then
		file -b "$1" | grep -Eq "$(file_says "$2")" || fail "file(1) says ${1#"$tmp"/} is: $(file -b "$1")"
	fi
}
# check_runs BIN: version and version --json say what was stamped; serve
# --help runs in runner-ext beside it.
check_runs() {
	local out
	out=$(env -u RUNNER_DOOR -u RUNNER_CONFINED "$1" version 2>&1) || fail "$1 version: $out"
	[[ $out == "runner $ver ${commit:0:12} ($date, "* ]] || fail "$1 version printed: $out (want: runner $ver ${commit:0:12} ($date, …)"
	out=$(env -u RUNNER_DOOR -u RUNNER_CONFINED "$1" version --json 2>&1) || fail "$1 version --json: $out"
	for kv in "\"version\": \"$ver\"" "\"commit\": \"$commit\"" "\"date\": \"$date\"" '"platform": "linux/amd64"'; do
		grep -qF "$kv" <<<"$out" || fail "$1 version --json has no $kv: $out"
	done
	# runner-ext beside it runs serve's (and mcp's, watch's) help, as runner.
	out=$(env -u RUNNER_DOOR -u RUNNER_CONFINED "$1" serve --help 2>&1) || fail "$1 serve --help (runner-ext): $out"
	grep -qF -- "--listen" <<<"$out" || fail "$1 serve --help printed no --listen: $out"
}

# The archives.
for p in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 freebsd/amd64; do
	name="runner_${ver}_${p%/*}_${p#*/}"
	f="$dist/$name.tar.gz"
	[ -f "$f" ] || {
		fail "no archive $name.tar.gz"
		continue
	}
	mkdir "$tmp/$name"
	tar -xzf "$f" -C "$tmp/$name" || {
		fail "$name.tar.gz does not extract"
		continue
	}
	d="$tmp/$name/$name"
	for want in runner runner-ext README.md man/runner.1 man/runner-dispatch.1 man/runner-version.1 \
		completions/runner.bash completions/_runner completions/runner.fish; do
		[ -s "$d/$want" ] || fail "$name.tar.gz has no $name/$want"
	done
	[ -x "$d/runner" ] || fail "$name/runner is not executable"
	[ -x "$d/runner-ext" ] || fail "$name/runner-ext is not executable"
	grep -q '^\.TH "RUNNER" "1" ' "$d/man/runner.1" 2>/dev/null || fail "$name/man/runner.1 has no .TH line for runner(1)"
	! grep -ql 'Auto generated' "$d"/man/*.1 2>/dev/null || fail "$name's man pages say 'Auto generated by spf13/cobra'"
	grep -q 'complete .*runner' "$d/completions/runner.bash" 2>/dev/null || fail "$name/completions/runner.bash completes no runner"
	[ "$(head -n1 "$d/completions/_runner" 2>/dev/null)" = "#compdef runner" ] || fail "$name/completions/_runner does not start with #compdef runner"
	grep -q '^complete -c runner' "$d/completions/runner.fish" 2>/dev/null || fail "$name/completions/runner.fish completes no runner"
	[ -f "$d/runner" ] && check_binary "$d/runner" "$p"
	[ -f "$d/runner-ext" ] && check_binary "$d/runner-ext" "$p"
	[ "$p" = linux/amd64 ] && [ -f "$d/runner" ] && check_runs "$d/runner"
done
ok "archives"

# The checksums: every artifact, and each one right.
(cd "$dist" && sha256sum -c --strict --quiet checksums.txt) || fail "sha256sum -c checksums.txt"
listed=$(awk '{print $2}' "$dist/checksums.txt")
for f in "$dist"/*; do
	[ "${f##*/}" = checksums.txt ] || grep -qxF "${f##*/}" <<<"$listed" || fail "checksums.txt has no ${f##*/}"
done
ok "checksums.txt"

# The Debian packages.
field() { dpkg-deb -f "$deb" "$1"; } # a field of $deb's control file
for arch in amd64 arm64; do
	deb="$dist/runner_${debver}_$arch.deb"
	[ -f "$deb" ] || {
		fail "no ${deb##*/}"
		continue
	}
	[ "$(field Package)" = runner ] || fail "${deb##*/}: Package: $(field Package)"
	[ "$(field Version)" = "$debver" ] || fail "${deb##*/}: Version: $(field Version), want $debver"
	[[ $(field Version) =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || fail "${deb##*/}: Version $(field Version) is not a Debian version"
	[ "$(field Architecture)" = "$arch" ] || fail "${deb##*/}: Architecture: $(field Architecture)"
	[ "$(field Depends)" = "tmux, git" ] || fail "${deb##*/}: Depends: $(field Depends)"
	[ "$(field Recommends)" = bubblewrap ] || fail "${deb##*/}: Recommends: $(field Recommends)"
	for k in Maintainer Description Homepage Installed-Size; do
		[ -n "$(field "$k")" ] || fail "${deb##*/}: no $k"
	done
	list=$(dpkg-deb -c "$deb" | awk '{print $6}')
	for want in ./usr/bin/runner ./usr/bin/runner-ext ./usr/share/man/man1/runner.1.gz ./usr/share/man/man1/runner-dispatch.1.gz \
		./usr/share/bash-completion/completions/runner ./usr/share/zsh/vendor-completions/_runner \
		./usr/share/fish/vendor_completions.d/runner.fish; do
		grep -qxF "$want" <<<"$list" || fail "${deb##*/} has no $want"
	done
	mkdir "$tmp/deb_$arch"
	dpkg-deb -x "$deb" "$tmp/deb_$arch"
	check_binary "$tmp/deb_$arch/usr/bin/runner" "linux/$arch"
	check_binary "$tmp/deb_$arch/usr/bin/runner-ext" "linux/$arch"
	gzip -t "$tmp/deb_$arch/usr/share/man/man1/runner.1.gz" || fail "${deb##*/}: runner.1.gz is not gzip"
done
ok "Debian packages' contents"

# The Homebrew formula.
rb="$dist/runner.rb"
grep -qxF "  version \"$ver\"" "$rb" || fail "runner.rb has no version \"$ver\""
grep -qxF '  depends_on "tmux"' "$rb" || fail "runner.rb does not depend on tmux"
for arch in amd64 arm64; do
	name="runner_${ver}_darwin_$arch.tar.gz"
	grep -q "^ *url \".*/$name\"\$" "$rb" || fail "runner.rb has no url of $name"
	sum=$(awk -v n="$name" '$2 == n {print $1}' "$dist/checksums.txt")
	grep -qxF "      sha256 \"$sum\"" "$rb" || fail "runner.rb has no sha256 \"$sum\" of $name"
done
! grep -n '@[A-Z0-9_]*@' "$rb" || fail "runner.rb has a placeholder left"
grep -q 'runner version' "$rb" || fail "runner.rb's test does not run runner version"
ok "Homebrew formula"

# Install the amd64 .deb here, use it, remove it.
install_skip() {
	if [ "${CI:-}" = true ]; then
		fail "cannot install the .deb: $*"
	else
		echo "release-check: skipped the .deb install: $*" >&2
	fi
}
# check_install DEB: dpkg -i, use, dpkg -r; returns early, saying why, when
# this machine cannot take it.
check_install() {
	local deb=$1 out i f
	[ "$(id -u)" = 0 ] || {
		install_skip "not root"
		return
	}
	[ "$(dpkg --print-architecture)" = amd64 ] || {
		install_skip "this machine is $(dpkg --print-architecture)"
		return
	}
	if ! command -v tmux >/dev/null 2>&1 || ! command -v git >/dev/null 2>&1; then
		install_skip "tmux and git must be installed (the package depends on them)"
		return
	fi
	exec 9>"${TMPDIR:-/tmp}/runner-release-check.lock" # one check at a time installs
	flock -w 120 9 || {
		install_skip "another release-check holds ${TMPDIR:-/tmp}/runner-release-check.lock"
		return
	}
	if dpkg-query -W -f='${db:Status-Status}' runner 2>/dev/null | grep -qv '^not-installed$'; then
		install_skip "a runner package is installed already (dpkg -l runner)"
		return
	fi
	[ ! -e /usr/bin/runner ] || {
		install_skip "/usr/bin/runner exists and is not from a package"
		return
	}

	installed=true
	for i in $(seq 30); do # dpkg's lock may be held by an apt-get for a moment
		if out=$(dpkg -i "$deb" 2>&1); then
			break
		fi
		if ! grep -qi lock <<<"$out" || [ "$i" -ge 30 ]; then
			fail "dpkg -i ${deb##*/}: $out"
			break
		fi
		sleep 1
	done
	if [ -x /usr/bin/runner ]; then
		check_runs /usr/bin/runner
		if grep -rqs '^path-exclude=/usr/share/man' /etc/dpkg/dpkg.cfg.d/; then
			echo "release-check: dpkg excludes /usr/share/man here (/etc/dpkg/dpkg.cfg.d): the man pages are checked in the package only"
		elif command -v man >/dev/null 2>&1; then
			[ "$(man -w runner 2>&1)" = /usr/share/man/man1/runner.1.gz ] || fail "man -w runner: $(man -w runner 2>&1)"
		else
			[ -f /usr/share/man/man1/runner.1.gz ] || fail "no /usr/share/man/man1/runner.1.gz"
		fi
		for f in /usr/share/bash-completion/completions/runner /usr/share/zsh/vendor-completions/_runner \
			/usr/share/fish/vendor_completions.d/runner.fish; do
			[ -f "$f" ] || fail "the .deb installed no $f"
		done
	else
		fail "dpkg -i ${deb##*/} installed no /usr/bin/runner"
	fi
	if out=$(dpkg -r runner 2>&1); then
		installed=false
		[ ! -e /usr/bin/runner ] || fail "dpkg -r runner left /usr/bin/runner"
		[ "$(dpkg-query -W -f='${db:Status-Status}' runner 2>/dev/null || echo not-installed)" = not-installed ] ||
			fail "dpkg -r runner left the package in state $(dpkg-query -W -f='${db:Status-Status}' runner)"
	else
		fail "dpkg -r runner: $out"
	fi
	ok "the amd64 .deb installs, runs and is removed"
}
check_install "$dist/runner_${debver}_amd64.deb"

took=$(($(date +%s) - start))
if ((failures)); then
	echo "release-check: $failures check(s) failed ($took s)" >&2
	exit 1
fi
echo "release-check: all good ($took s)"
