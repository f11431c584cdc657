"""The core's layer rule (docs/design.md, "The core's layers"): each folder of
sdk/src includes only the folders below it.

A private header is named by its folder ("support/json_util.h"); a public
header (sdk/include/tracegraph/X.h) belongs to the folder of the source that
implements it (X.cpp), or to the one HEADER_ONLY names. A subfolder may
include its parent (formats/torchscript/ reads formats/storage.h), never the
other way round. The public headers are checked by the same rule.

    layers_test.py SDK_DIR
"""

import os
import re
import sys

# Lowest first; the folders of one row do not include each other.
LAYERS = [["support"], ["graph"], ["transforms"], ["analysis", "formats", "backend"], ["tracing"]]
RANK = {folder: rank for rank, row in enumerate(LAYERS) for folder in row}
# Public headers with no source of their own.
HEADER_ONLY = {"load_limits": "formats"}
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def folder_of(path, src):
    """The folder of sdk/src a file is in: "formats/torchscript"; "" directly in sdk/src."""
    return os.path.dirname(os.path.relpath(path, src)).replace(os.sep, "/")


def may_include(here, there):
    if here == there or here.startswith(there + "/"):
        return True
    a, b = RANK.get(here.split("/")[0]), RANK.get(there.split("/")[0])
    return a is not None and b is not None and b < a


def main():
    sdk = sys.argv[1]
    src, include = os.path.join(sdk, "src"), os.path.join(sdk, "include")
    problems = []
    implemented = {}
    sources = []
    for root, _, files in os.walk(src):
        for name in sorted(files):
            path = os.path.join(root, name)
            sources.append(path)
            here = folder_of(path, src)
            if here == "" or here.split("/")[0] not in RANK:
                problems.append(f"{os.path.relpath(path, sdk)}: not in a layer folder ({', '.join(RANK)}; "
                                "a new folder needs its place in LAYERS here and in docs/design.md)")
            if name.endswith(".cpp"):
                implemented[name[:-4]] = here

    def layer_of(inc, where):
        if inc.startswith("tracegraph/transforms/"):
            return "transforms"
        if inc.startswith("tracegraph/"):
            stem = os.path.splitext(os.path.basename(inc))[0]
            if stem in HEADER_ONLY:
                return HEADER_ONLY[stem]
            if stem not in implemented:
                problems.append(f"{where}: {inc} has no source of its own: name its layer in HEADER_ONLY")
                return None
            return implemented[stem]
        return os.path.dirname(inc)

    def check(path, here):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        where = os.path.relpath(path, sdk)
        for inc in INCLUDE.findall(text):
            if "/" not in inc and not inc.startswith("tracegraph/"):
                # A bare name is the including file's own folder.
                continue
            there = layer_of(inc, where)
            if there is not None and not may_include(here, there):
                problems.append(f'{where} ({here}/) includes "{inc}" ({there}/), which is not below it')

    for path in sources:
        check(path, folder_of(path, src))
    for root, _, files in os.walk(include):
        for name in sorted(files):
            path = os.path.join(root, name)
            inc = os.path.relpath(path, include).replace(os.sep, "/")
            here = layer_of(inc, os.path.relpath(path, sdk))
            if here is not None:
                check(path, here)

    for p in problems:
        print(p)
    print(f"{len(sources)} files of sdk/src in {len(RANK)} layer folders: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
