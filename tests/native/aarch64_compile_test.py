"""Our native code paths compile for aarch64 (Linux Arm, Apple silicon under Linux).

Takes the native preset's compile_commands.json and compiles each source of
sdk/, native/ and xnnpack/ again with Debian's aarch64 cross compiler
(g++-aarch64-linux-gnu), as an aarch64 configure of the same preset would:
without the two files built only for x86-64 (table_avx2.cpp,
table_avx512.cpp) and their TRACEGRAPH_WINOGRAD_X86, with the same include
directories (the headers of LibTorch, XNNPACK and cpuinfo are the same on
every architecture). `-fsyntax-only`: an x86 intrinsic or builtin without a
portable path beside it is an error here. There is no aarch64 LibTorch to
link, so nothing links.

The sources that include LibTorch (native/, cli/) are not compiled again: LibTorch's
headers are most of the time such a compile takes (about 135 of 300 CPU
seconds) and are the same on every architecture, and our LibTorch code has no
architecture-specific path, which this test checks instead: a native/ or cli/
source or header that names an architecture (a macro, an intrinsic's header, cpuid)
fails it, and then belongs in the compiled set.

    aarch64_compile_test.py BUILD_DIR SOURCE_DIR
"""

import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

COMPILER = "aarch64-linux-gnu-g++"
X86_ONLY = ("table_avx2.cpp", "table_avx512.cpp")
# Compiled for aarch64; native/ and cli/ (over LibTorch) are only searched for ARCH_MARKERS.
COMPILED = ("sdk", "xnnpack")
SEARCHED = ("native", "cli")
ARCH_MARKERS = re.compile(
    r"__x86_64__|__i386__|__aarch64__|__arm__|__ARM_NEON|__SSE|__AVX|immintrin|x86intrin|arm_neon|"
    r"_mm(256|512)?_|__builtin_ia32|cpuid")


def aarch64_command(entry):
    args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out = [COMPILER]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MT", "-MF"):  # the object and its dependency file stay the x86 build's
            skip = True
            continue
        if a in ("-c", "-MD", "-DTRACEGRAPH_WINOGRAD_X86") or a.startswith(("-m", "-fsanitize")):
            continue
        out.append(a)
    return out + ["-fsyntax-only"]


def main():
    build, source = sys.argv[1], os.path.realpath(sys.argv[2])
    if shutil.which(COMPILER) is None:
        print(f"{COMPILER} not found: scripts/bootstrap.sh installs g++-aarch64-linux-gnu", file=sys.stderr)
        return 1
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    named = []
    for root, _, files in (w for d in SEARCHED for w in os.walk(os.path.join(source, d))):
        for name in files:
            path = os.path.join(root, name)
            if name.endswith((".cpp", ".h")):
                with open(path, encoding="utf-8") as f:
                    if ARCH_MARKERS.search(f.read()):
                        named.append(os.path.relpath(path, source))
    if named:
        print("these native/ or cli/ files name an architecture, so they must be compiled for aarch64 too "
              f"(add them to COMPILED): {', '.join(sorted(named))}", file=sys.stderr)
        return 1
    ours = [os.path.join(source, d) + os.sep for d in COMPILED]
    chosen = []
    for e in entries:
        path = os.path.realpath(os.path.join(e["directory"], e["file"]))
        if any(path.startswith(d) for d in ours) and not path.endswith(X86_ONLY):
            chosen.append((path, e))
    chosen = sorted({p: e for p, e in chosen}.items())
    if len(chosen) < 30:
        print(f"only {len(chosen)} sources of ours in {build}/compile_commands.json", file=sys.stderr)
        return 1

    def compile_one(item):
        path, e = item
        r = subprocess.run(aarch64_command(e), cwd=e["directory"], capture_output=True, text=True)
        return path, r.returncode, r.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for path, rc, err in pool.map(compile_one, chosen):
            rel = os.path.relpath(path, source)
            if rc != 0:
                failed += 1
                print(f"FAIL {rel}\n{err}")
    print(f"aarch64: {len(chosen) - failed} of {len(chosen)} sources compile, {failed} fail")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
