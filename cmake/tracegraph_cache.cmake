# Where scripts/bootstrap.sh keeps what it installs outside the clone (the
# torch venv, XNNPACK's builds, source tarballs): the same rule as
# scripts/env.sh, so that CMake and the scripts agree.
if(DEFINED ENV{TRACEGRAPH_CACHE})
  set(TRACEGRAPH_CACHE_DIR "$ENV{TRACEGRAPH_CACHE}")
elseif(DEFINED ENV{XDG_CACHE_HOME})
  set(TRACEGRAPH_CACHE_DIR "$ENV{XDG_CACHE_HOME}/tracegraph")
elseif(DEFINED ENV{HOME})
  set(TRACEGRAPH_CACHE_DIR "$ENV{HOME}/.cache/tracegraph")
else()
  set(TRACEGRAPH_CACHE_DIR "/root/.cache/tracegraph")
endif()
