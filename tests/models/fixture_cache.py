"""Runs a test-model generator once per content, and copies what it made into place.

    fixture_cache.py NAME OUT -- PYTHON SCRIPT ARG... ({out} in the args: OUT)

The generators of tests/models make the same files from the same inputs: their
own code (every file of tests/models), the Python package they import from the
source tree (python/tracegraph), and the interpreter that runs them with the
packages it has (torch, timm, ...). That is the key. The first run for a key
makes the files into a folder of its own under the cache (TRACEGRAPH_CACHE,
as scripts/env.sh has it, then fixtures/NAME-KEY), and every run copies them
into OUT (copies, not links: a test that wrote into a fixture cannot change
the cached one; 2 GB copy in about 2 s). So the sanitize preset takes the files the native preset made in the same run,
and a second run of the test command makes none. A change to any input is a new
key; the older entries of NAME beyond the newest two are removed.

TRACEGRAPH_FIXTURE_CACHE=0 runs the generator into OUT directly, as without
this wrapper.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KEEP = 2  # entries per fixture name


def cache_root() -> str:
    # scripts/env.sh's rule (and cmake/tracegraph_cache.cmake's).
    base = os.environ.get("TRACEGRAPH_CACHE")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.environ.get("HOME") or "/root", ".cache"), "tracegraph")
    return os.path.join(base, "fixtures")


def source_files() -> list[str]:
    files = [os.path.join(HERE, f) for f in os.listdir(HERE)]
    for folder, _, names in os.walk(os.path.join(ROOT, "python", "tracegraph")):
        files += [os.path.join(folder, n) for n in names if n.endswith(".py")]
    return sorted(f for f in files if os.path.isfile(f))


def interpreter_identity(python: str) -> bytes:
    """The interpreter's version and every distribution it can import, with versions."""
    code = ("import sys, importlib.metadata as m; print(sys.version); "
            "print('\\n'.join(sorted(f\"{d.metadata['Name']}=={d.version}\" for d in m.distributions())))")
    return subprocess.run([python, "-c", code], check=True, capture_output=True).stdout


def key_of(name: str, command: list[str]) -> str:
    h = hashlib.sha256()
    # The command as written in any clone: the source tree's own path is not part of it.
    h.update(name.encode() + b"\0" + "\0".join(a.replace(ROOT, "<root>") for a in command).encode() + b"\0")
    for path in source_files():
        h.update(os.path.relpath(path, ROOT).encode() + b"\0")
        with open(path, "rb") as f:
            h.update(hashlib.sha256(f.read()).digest())
    h.update(interpreter_identity(command[0]))
    return h.hexdigest()[:20]


def make_entry(entry: str, command: list[str]) -> None:
    tmp = f"{entry}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        subprocess.run([a.replace("{out}", tmp) for a in command], check=True)
    except subprocess.CalledProcessError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        os.rename(tmp, entry)  # whole or not at all
    except OSError:
        if not os.path.isdir(entry):
            raise
        shutil.rmtree(tmp)  # another run made the same entry meanwhile


def copy_into(entry: str, out: str) -> int:
    count = 0
    for folder, _, names in os.walk(entry):
        target_folder = os.path.join(out, os.path.relpath(folder, entry))
        os.makedirs(target_folder, exist_ok=True)
        for n in names:
            source, target = os.path.join(folder, n), os.path.join(target_folder, n)
            if os.path.lexists(target):
                if os.path.isdir(target) and not os.path.islink(target):
                    shutil.rmtree(target)
                else:
                    os.remove(target)
            shutil.copy2(source, target)
            count += 1
    return count


def prune(root: str, name: str, keep: str) -> None:
    entries = [e for e in os.listdir(root) if e.startswith(name + "-") and len(e) == len(name) + 21]
    entries.sort(key=lambda e: os.path.getmtime(os.path.join(root, e)), reverse=True)
    for e in entries:
        if e != os.path.basename(keep) and entries.index(e) >= KEEP:
            shutil.rmtree(os.path.join(root, e), ignore_errors=True)


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    name, out, command = argv[1], argv[2], argv[4:]
    if os.environ.get("TRACEGRAPH_FIXTURE_CACHE") == "0":
        os.makedirs(out, exist_ok=True)
        return subprocess.run([a.replace("{out}", out) for a in command]).returncode
    root = cache_root()
    os.makedirs(root, exist_ok=True)
    start = time.monotonic()
    entry = os.path.join(root, f"{name}-{key_of(name, command)}")
    made = not os.path.isdir(entry)
    if made:
        try:
            make_entry(entry, command)
        except subprocess.CalledProcessError as e:
            print(f"fixture_cache: {name}: the generator failed ({e.returncode})", file=sys.stderr)
            return 1
    os.utime(entry)  # the newest use, for prune()
    count = copy_into(entry, out)
    prune(root, name, entry)
    print(f"fixture_cache: {name}: {count} files {'made' if made else 'from the cache'} ({entry}), "
          f"copied into {out} in {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
