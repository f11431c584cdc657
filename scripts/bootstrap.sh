#!/usr/bin/env bash
# Makes a fresh Debian 12 machine ready to build and test tracegraph, and is
# quick when everything is already there. Both README commands run it.
#   - Debian packages, by name (only those missing are installed);
#   - a Python venv outside the clone with the pinned PyPI torch and
#     torchvision (scripts/python-requirements.txt): LibTorch for the native
#     build, and the torch that makes the test models;
#   - XNNPACK, pthreadpool and cpuinfo source tarballs from Debian's archive
#     pool (pinned versions, checked against their SHA-256), cached outside
#     the clone, from the Debian mirror this machine's apt sources name;
#   - the npm packages of the web side (when web-demo/package.json exists).
# pip and npm use the machine's own configuration for their registries.
# Nothing else is downloaded.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh

say() { printf '[bootstrap] %s\n' "$*"; }

PACKAGES=(
  cmake ninja-build ccache g++ pkg-config curl ca-certificates xz-utils
  python3-venv python3-dev python3-torch python3-torchvision
  nlohmann-json3-dev libgtest-dev googletest
  emscripten clang-14 libclang-rt-14-dev
  libfxdiv-dev binutils g++-aarch64-linux-gnu
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

# The venv with the pinned torch: made once, made again when the pins change.
REQUIREMENTS=scripts/python-requirements.txt
if [[ -x "$TRACEGRAPH_PYTHON" ]] && cmp -s "$REQUIREMENTS" "$TRACEGRAPH_VENV/tracegraph-requirements.txt" &&
  "$TRACEGRAPH_PYTHON" -c 'import torch, torchvision' 2>/dev/null; then
  say "torch venv: present ($("$TRACEGRAPH_PYTHON" -c 'import torch; print(torch.__version__)'))"
else
  say "making the torch venv in $TRACEGRAPH_VENV (about 3 GB to download, 5.5 GB on disk)"
  rm -rf "$TRACEGRAPH_VENV"
  /usr/bin/python3 -m venv "$TRACEGRAPH_VENV"
  "$TRACEGRAPH_PYTHON" -m pip install -q --disable-pip-version-check --no-cache-dir -r "$REQUIREMENTS"
  "$TRACEGRAPH_PYTHON" -c 'import torch, torchvision; print("[bootstrap] torch", torch.__version__, "torchvision", torchvision.__version__)'
  cp "$REQUIREMENTS" "$TRACEGRAPH_VENV/tracegraph-requirements.txt"
fi
# PyTorch's OpInfo database (the op sweep, tests/models/make_op_sweep.py)
# imports expecttest, which torch's wheel leaves out: added to the venv as is.
if ! "$TRACEGRAPH_PYTHON" -c 'import expecttest' 2>/dev/null; then
  say "adding expecttest to the torch venv (PyTorch's OpInfo samples need it)"
  "$TRACEGRAPH_PYTHON" -m pip install -q --disable-pip-version-check --no-cache-dir expecttest==0.3.0
fi

# What builds and tests the Python package (python/): nanobind and
# scikit-build-core, pytest, build. Added to the venv beside torch, by pins
# of their own (changing them does not remake the venv).
DEV_REQUIREMENTS=scripts/python-dev-requirements.txt
if ! cmp -s "$DEV_REQUIREMENTS" "$TRACEGRAPH_VENV/tracegraph-dev-requirements.txt"; then
  say "adding the Python package's build and test tools to the torch venv ($DEV_REQUIREMENTS)"
  "$TRACEGRAPH_PYTHON" -m pip install -q --disable-pip-version-check --no-cache-dir -r "$DEV_REQUIREMENTS"
  cp "$DEV_REQUIREMENTS" "$TRACEGRAPH_VENV/tracegraph-dev-requirements.txt"
else
  say "Python package tools: present"
fi

# XNNPACK, pthreadpool and cpuinfo sources for the XNNPACK backend (native and
# wasm; cpuinfo natively). bookworm's source tarballs answer 404; trixie's (for
# cpuinfo, forky's: trixie's has left the pool) are in the pool, which every
# suite of a Debian mirror shares. The mirror is the one apt uses here.
# cpuinfo is built from source, not taken from libcpuinfo-dev: the XNNPACK
# backend links its own static copy, sealed from LibTorch's (docs/design.md).
CACHE="$TRACEGRAPH_CACHE"
mkdir -p "$CACHE/sources"
debian_mirror() {
  # deb822 .sources files ("URIs: ..." with "Suites: bookworm ...") and one-line
  # sources.list entries ("deb [opts] URI bookworm main"); the first URI that
  # serves a plain (not -security) suite.
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    awk '/^URIs:/ {uri=$2} /^Suites:/ {for (i = 2; i <= NF; i++) if ($i !~ /-security$/) ok=1}
         /^$/ {if (ok && uri) {print uri; exit} uri=""; ok=0}
         END {if (ok && uri) print uri}' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [[ -f "$f" ]] || continue
    sed -E 's/\[[^]]*\]//' "$f" | awk '$1 == "deb" && $3 !~ /-security$/ {print $2}'
  done
}
MIRROR=$(debian_mirror | grep -m1 -E '^(https?|file)://' || true)
POOL="${MIRROR%/}/pool/main"
fetch_source() {  # path-in-pool sha256
  local file="$CACHE/sources/$(basename "$1")"
  if [[ -f "$file" ]] && echo "$2  $file" | sha256sum -c --status; then
    say "source $(basename "$1"): cached"
    return
  fi
  if [[ -z "$MIRROR" ]]; then
    say "no Debian mirror in /etc/apt/sources.list{,.d}: cannot fetch $(basename "$1")" >&2
    exit 1
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
fetch_source c/cpuinfo/cpuinfo_0.0~git20250905.877328f.orig.tar.xz 557ca404a3836b9f335a3a06b65ff9fe9dbaaefab7fb5c0185f53d9f33615a10

if [[ -f web-demo/package.json ]]; then
  if [[ ! -d web-demo/node_modules ]] || [[ web-demo/package-lock.json -nt web-demo/node_modules ]]; then
    say "installing the web side's npm packages"
    (cd web-demo && npm ci --no-audit --no-fund)
  else
    say "npm packages: present"
  fi
fi
say "ready"
