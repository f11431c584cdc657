#!/usr/bin/env bash
# Makes a fresh Debian 12 machine ready to build and test tracegraph, and is
# quick when everything is already there. Both README commands run it.
#   - Debian packages, by name (only those missing are installed);
#   - XNNPACK and pthreadpool source tarballs from Debian's archive pool
#     (pinned versions, checked against their SHA-256), cached outside the clone;
#   - the npm packages of the web side (when web-demo/package.json exists).
# Nothing else is downloaded.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[bootstrap] %s\n' "$*"; }

PACKAGES=(
  cmake ninja-build g++ pkg-config curl ca-certificates xz-utils
  libtorch-dev python3-torch python3-torchvision
  nlohmann-json3-dev libgtest-dev googletest
  emscripten clang-14 libclang-rt-14-dev
  libcpuinfo-dev libfxdiv-dev
  chromium
)
# Node (18 or newer) and npm: Debian's, unless the machine already has its own.
command -v node >/dev/null 2>&1 || PACKAGES+=(nodejs)
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  say "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
else
  say "Debian packages: all ${#PACKAGES[@]} present"
fi

# XNNPACK and pthreadpool sources for the XNNPACK backend (native and wasm).
# bookworm's source tarballs answer 404; trixie's are in the pool.
CACHE="${TRACEGRAPH_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracegraph}"
mkdir -p "$CACHE/sources"
POOL="http://deb.debian.org/debian/pool/main"
fetch_source() {  # path-in-pool sha256
  local file="$CACHE/sources/$(basename "$1")"
  if [[ -f "$file" ]] && echo "$2  $file" | sha256sum -c --status; then
    say "source $(basename "$1"): cached"
    return
  fi
  say "downloading $POOL/$1"
  curl -fsS --retry 3 -o "$file.part" "$POOL/$1"
  if ! echo "$2  $file.part" | sha256sum -c --status; then
    rm -f "$file.part"
    say "checksum mismatch for $(basename "$1")" >&2
    exit 1
  fi
  mv "$file.part" "$file"
}
fetch_source x/xnnpack/xnnpack_0.0~git20241108.4ea82e5.orig.tar.xz 90bde2caef0f880f627bab0dc805a86c4b8070cd98e3243db3046ab3f3be1a99
fetch_source p/pthreadpool/pthreadpool_0.0~git20240616.560c60d.orig.tar.xz 4cc3cbd933b28131d2a34edc54f76af9fb41bc490af5eae1a5bd3cd07ea90708

if [[ -f web-demo/package.json ]]; then
  if [[ ! -d web-demo/node_modules ]] || [[ web-demo/package-lock.json -nt web-demo/node_modules ]]; then
    say "installing the web side's npm packages"
    (cd web-demo && npm ci --no-audit --no-fund)
  else
    say "npm packages: present"
  fi
fi
say "ready"
