#!/usr/bin/env bash
# release.sh — build a release of runner from the commit at HEAD:
#
#   scripts/release.sh [--snapshot] [VERSION] [OUTDIR]
#
#   VERSION     e.g. v1.2.3 (a leading v is dropped in every name); default:
#               the tag at HEAD. With --snapshot there is none to give: the
#               version is the next patch after the last vX.Y.Z tag (0.0.0
#               without one) with the commit's day and hash, e.g.
#               0.0.0-git20261128.abcdef1 (.deb: 0.0.0~git20261128.abcdef1).
#   OUTDIR      default dist; it must be empty or missing.
#   RUNNER_RELEASE_URL      where the archives will be downloaded from, for
#               the Homebrew formula (default: the GitHub release vVERSION).
#   RUNNER_DEB_MAINTAINER   the .deb's Maintainer field.
#
# OUTDIR then holds:
#   runner_VERSION_OS_ARCH.tar.gz   for linux/amd64, linux/arm64, darwin/amd64,
#       darwin/arm64, freebsd/amd64: one folder with the binary, README.md,
#       LICENSE if there is one, man/*.1 and completions/ (runner.bash,
#       _runner for zsh, runner.fish)
#   runner_DEBVERSION_amd64.deb, runner_DEBVERSION_arm64.deb
#       Depends: tmux, git; Recommends: bubblewrap
#   runner.rb          the Homebrew formula (packaging/homebrew/runner.rb.tmpl)
#   checksums.txt      sha256 of all the above (sha256sum -c checksums.txt)
#
# A plain script, not goreleaser: goreleaser would pull hundreds of modules
# into CI for what go build, tar, gzip, sha256sum and dpkg-deb do here. The
# script needs nothing else a fresh Debian machine lacks (git, coreutils and
# sed aside).
#
# The release is the commit, not the working tree (git archive of HEAD:
# uncommitted changes are left out), and it is reproducible: version, commit
# and the commit's time (git log -1 --format=%cI, not today) are stamped into
# the binaries with -ldflags -X, the man pages carry that date, and every file
# in the archives and packages has the commit's time as its mtime, owner root.
# scripts/release-check.sh builds a snapshot and checks what it holds.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
command -v go >/dev/null 2>&1 || export PATH="$PATH:/usr/local/go/bin"

platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 freebsd/amd64)
deb_arches=(amd64 arm64) # linux only

die() {
	echo "release: $*" >&2
	exit 1
}
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }

snapshot=false
pos=()
for a in "$@"; do
	case $a in
	--snapshot) snapshot=true ;;
	-h | --help)
		usage
		exit 0
		;;
	-*) die "unknown flag $a (usage: scripts/release.sh [--snapshot] [VERSION] [OUTDIR])" ;;
	*) pos+=("$a") ;;
	esac
done
for tool in go git tar gzip sha256sum dpkg-deb; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is missing: install it (dpkg-deb comes with dpkg; apt-get install golang-go git tar gzip coreutils dpkg)"
done

# HEAD once: others may commit while this runs; everything below is of $commit.
commit=$(git rev-parse HEAD) || die "not in a git checkout"
date=$(git log -1 --format=%cI "$commit") # the commit's time, so a release is reproducible
epoch=$(git log -1 --format=%ct "$commit")

if $snapshot; then
	((${#pos[@]} <= 1)) || die "--snapshot takes no VERSION, only [OUTDIR] (got: ${pos[*]})"
	out=${pos[0]:-dist}
	base=0.0.0
	if last=$(git describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' --exclude '*-*' "$commit" 2>/dev/null) &&
		[[ $last =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)$ ]]; then
		base="${BASH_REMATCH[1]}.${BASH_REMATCH[2]}.$((BASH_REMATCH[3] + 1))"
	fi
	day=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d "$commit")
	ver="$base-git$day.${commit:0:7}"
else
	((${#pos[@]} <= 2)) || die "too many arguments: ${pos[*]} (usage: scripts/release.sh [--snapshot] [VERSION] [OUTDIR])"
	tag=${pos[0]:-}
	if [ -z "$tag" ]; then
		tag=$(git describe --tags --exact-match "$commit" 2>/dev/null) ||
			die "HEAD has no tag: give a VERSION (scripts/release.sh v1.2.3) or build a --snapshot"
	fi
	ver=${tag#v}
	out=${pos[1]:-dist}
fi
[[ $ver =~ ^[0-9][0-9A-Za-z.+-]*$ ]] ||
	die "version '$ver' is not usable: it must start with a digit and hold only letters, digits and . + - (e.g. v1.2.3, v1.3.0-rc.1)"
debver=${ver//-/\~} # Debian: a pre-release sorts before the release with ~
[[ $debver =~ ^[0-9][0-9A-Za-z.+~]*$ ]] || die "version '$debver' is not a valid Debian version"

if [ -e "$out" ] && [ -n "$(ls -A "$out")" ]; then
	die "$out is not empty: remove it (rm -r $out) or give another OUTDIR"
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/runner-release.XXXXXX")
cleanup() {
	local j
	mapfile -t j < <(jobs -p) # the builds still running after a failed one
	((${#j[@]} == 0)) || kill "${j[@]}" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
	echo "release: the working tree has uncommitted changes; they are not in the release (it is built from ${commit:0:12})"
echo "release: runner $ver from ${commit:0:12} ($date) into $out"

# The source, exactly the commit.
mkdir "$tmp/src" "$tmp/stage" "$tmp/common"
git archive --format=tar "$commit" | tar -xf - -C "$tmp/src"

# The binaries, built side by side: a lone go build leaves a core idle
# while it links and between packages.
ldflags="-s -w -X main.version=$ver -X main.commit=$commit -X main.date=$date"
pids=()
for p in "${platforms[@]}"; do
	os=${p%/*} arch=${p#*/}
	name="runner_${ver}_${os}_${arch}"
	mkdir -p "$tmp/stage/$name"
	# runner and runner-ext (serve, mcp, watch, the push sender: what
	# would slow every other command's start), side by side in one folder.
	(cd "$tmp/src" && CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOAMD64=v1 GOARM64=v8.0 \
		go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$tmp/stage/$name/" ./cmd/runner ./cmd/runner/runner-ext) >"$tmp/build_${os}_$arch.log" 2>&1 &
	pids+=($!)
done
for i in "${!platforms[@]}"; do
	p=${platforms[$i]}
	wait "${pids[$i]}" || {
		cat "$tmp/build_${p%/*}_${p#*/}.log" >&2
		die "go build for $p failed (above)"
	}
done
# The man pages' writer is a runner of its own, built with -tags gendocs
# (the runner users run leaves the generators out: their libraries would
# cost every command's start-up).
hostbin="$tmp/runner-host"
(cd "$tmp/src" && CGO_ENABLED=0 go build -tags gendocs -trimpath -buildvcs=false -ldflags "$ldflags" -o "$hostbin" ./cmd/runner) ||
	die "go build -tags gendocs for this machine failed (see above)"

# Man pages and completions, from the command tree (the same on every
# platform). Outside any sandboxed task's door, whatever the environment.
mkdir "$tmp/common/man" "$tmp/common/completions"
host() { env -u RUNNER_DOOR -u RUNNER_CONFINED "$hostbin" "$@"; }
host gen-man "$tmp/common/man" || die "runner gen-man failed"
host completion bash >"$tmp/common/completions/runner.bash"
host completion zsh >"$tmp/common/completions/_runner"
host completion fish >"$tmp/common/completions/runner.fish"
ls "$tmp/common/man"/runner.1 >/dev/null || die "runner gen-man wrote no runner.1"
licenses=()
for f in LICENSE LICENSE.md LICENSE.txt COPYING; do
	[ -f "$tmp/src/$f" ] && licenses+=("$tmp/src/$f")
done

# tar with fixed order, owner and times; gzip without a name or time.
reprotar() { # DIR NAME: tar.gz of DIR/NAME on stdout
	tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu -C "$1" -cf - "$2" | gzip -9n
}

# The archives.
for p in "${platforms[@]}"; do
	os=${p%/*} arch=${p#*/}
	name="runner_${ver}_${os}_${arch}"
	d="$tmp/stage/$name"
	cp -R "$tmp/common/man" "$tmp/common/completions" "$d/"
	cp "$tmp/src/README.md" ${licenses[@]+"${licenses[@]}"} "$d/"
	find "$d" -type d -exec chmod 0755 {} + && find "$d" -type f -exec chmod 0644 {} + && chmod 0755 "$d/runner" "$d/runner-ext"
	reprotar "$tmp/stage" "$name" >"$out/$name.tar.gz"
done

# The Debian packages.
maintainer=${RUNNER_DEB_MAINTAINER:-runner maintainers <runner-cli@users.noreply.github.com>}
for arch in "${deb_arches[@]}"; do
	r="$tmp/deb_$arch"
	install -D -m 0755 "$tmp/stage/runner_${ver}_linux_${arch}/runner" "$r/usr/bin/runner"
	install -D -m 0755 "$tmp/stage/runner_${ver}_linux_${arch}/runner-ext" "$r/usr/bin/runner-ext"
	install -d -m 0755 "$r/usr/share/man/man1"
	for m in "$tmp/common/man"/*.1; do
		gzip -9n <"$m" >"$r/usr/share/man/man1/${m##*/}.gz"
	done
	install -D -m 0644 "$tmp/common/completions/runner.bash" "$r/usr/share/bash-completion/completions/runner"
	install -D -m 0644 "$tmp/common/completions/_runner" "$r/usr/share/zsh/vendor-completions/_runner"
	install -D -m 0644 "$tmp/common/completions/runner.fish" "$r/usr/share/fish/vendor_completions.d/runner.fish"
	install -D -m 0644 "$tmp/src/README.md" "$r/usr/share/doc/runner/README.md"
	((${#licenses[@]} == 0)) || install -D -m 0644 "${licenses[0]}" "$r/usr/share/doc/runner/copyright"
	find "$r" -type d -exec chmod 0755 {} + && find "$r/usr/share" -type f -exec chmod 0644 {} +
	install -d -m 0755 "$r/DEBIAN"
	cat >"$r/DEBIAN/control" <<EOF
Package: runner
Version: $debver
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --apparent-size "$r/usr" | cut -f1)
Depends: tmux, git
Recommends: bubblewrap
Section: devel
Priority: optional
Homepage: https://github.com/runner-cli/runner
Description: drive CLI coding agents in tmux panes
 runner drives CLI coding agents (Claude Code, Codex, Gemini CLI, OpenCode,
 Aider, or any shell program) inside tmux panes on a private tmux server, so
 many agents can run at once from a terminal, a script or cron. It takes a
 git snapshot before each task, detects when the agent is done and records
 the outcome in a state every agent can see.
EOF
	chmod 0644 "$r/DEBIAN/control"
	find "$r" -exec touch -h -d "@$epoch" {} +
	SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$r" "$out/runner_${debver}_${arch}.deb" >/dev/null ||
		die "dpkg-deb --build for $arch failed (see above)"
done

# The Homebrew formula.
url=${RUNNER_RELEASE_URL:-https://github.com/runner-cli/runner/releases/download/v$ver}
sum() { sha256sum "$1" | cut -d' ' -f1; }
sed -e "s|@VERSION@|$ver|g" \
	-e "s|@URL_DARWIN_ARM64@|$url/runner_${ver}_darwin_arm64.tar.gz|g" \
	-e "s|@SHA256_DARWIN_ARM64@|$(sum "$out/runner_${ver}_darwin_arm64.tar.gz")|g" \
	-e "s|@URL_DARWIN_AMD64@|$url/runner_${ver}_darwin_amd64.tar.gz|g" \
	-e "s|@SHA256_DARWIN_AMD64@|$(sum "$out/runner_${ver}_darwin_amd64.tar.gz")|g" \
	"$tmp/src/packaging/homebrew/runner.rb.tmpl" >"$out/runner.rb"
! grep -n '@[A-Z0-9_]*@' "$out/runner.rb" || die "packaging/homebrew/runner.rb.tmpl has a placeholder the script does not fill (above)"

# The checksums, over every artifact.
(cd "$out" && sha256sum -- *.tar.gz *.deb runner.rb >checksums.txt)
echo "release: done:"
(cd "$out" && ls -l)
