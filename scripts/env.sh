# Sourced by the scripts: where bootstrap keeps what it installs outside the
# clone (cmake/tracegraph_cache.cmake has the same rule), and the venv's Python.
TRACEGRAPH_CACHE="${TRACEGRAPH_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/tracegraph}"
TRACEGRAPH_VENV="$TRACEGRAPH_CACHE/venv"
# The Python with the pinned torch (scripts/python-requirements.txt).
TRACEGRAPH_PYTHON="$TRACEGRAPH_VENV/bin/python3"
# Debian's torch 1.13, which makes the old-format TorchScript files.
TRACEGRAPH_OLD_PYTHON=/usr/bin/python3
export NODE_PATH=/usr/share/nodejs  # Emscripten 3.1.6 needs it
