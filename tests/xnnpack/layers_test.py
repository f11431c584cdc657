"""The backend's house rules (docs/design.md, "The backend's layout"):

- each folder of xnnpack/src includes only the folders below it (runtime,
  lower, plan, kernels, platform; backend.cpp at the top), so no two folders
  include each other;
- no function in lower/ is longer than MAX_LINES: a lowering longer than that
  holds several decisions, each of which deserves a name. Data (an
  initializer such as lower/table.cpp's kEntries, the op table) is not a
  function and may be as long as it needs;
- a header holds declarations and one-line bodies, the rest is in .cpp files,
  but for the kernel headers of INLINE_BY_DESIGN.

    layers_test.py XNNPACK_DIR
"""

import os
import re
import sys

# Lowest first.
LAYERS = ["platform", "kernels", "plan", "lower", "runtime", ""]
RANK = {folder: rank for rank, folder in enumerate(LAYERS)}
MAX_LINES = 120
# Headers whose bodies are inlined on purpose: each is compiled into one
# translation unit per instruction set (kernels/conv/kernel_table.cpp for 4
# lanes, table_avx2.cpp, table_avx512.cpp), where its bodies must be inlined
# into the kernels' inner loops with that file's instructions.
INLINE_BY_DESIGN = re.compile(r"^kernels/(simd\.h|conv/(lanes|kernel_table|\w+_kernels)\.h)$")
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
FUNCTION_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_:]*)\s*\(")


def top_folder(relpath):
    parts = relpath.replace(os.sep, "/").split("/")
    return parts[0] if len(parts) > 1 else ""


def without_literals(line):
    line = re.sub(r"//.*", "", line)
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    return re.sub(r"'(\\.|[^'\\])*'", "''", line)


def long_functions(path):
    """(name, first line, lines) of each function body past MAX_LINES: a brace
    block opened outside any other block but namespaces, not a type's and not
    a variable's initializer ("= {")."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    stack, start, found = [], None, []
    for i, line in enumerate(lines):
        code = without_literals(line)
        for ch in code:
            if ch == "{":
                is_namespace = bool(re.search(r'\bnamespace\b|extern "C"', code))
                if start is None and not is_namespace and all(stack):
                    start = i
                stack.append(is_namespace)
            elif ch == "}" and stack:
                stack.pop()
                if start is not None and all(stack):
                    head = " ".join(without_literals(l) for l in lines[max(0, start - 2):start + 1])
                    names = FUNCTION_NAME.findall(head)
                    is_type = re.search(r"\b(struct|class|enum|union)\b[^(]*$", head)
                    is_data = re.search(r"=\s*\{\s*$", head)
                    name = names[-1].split("::")[-1] if names else "?"
                    if i - start + 1 > MAX_LINES and not is_type and not is_data:
                        found.append((name, start + 1, i - start + 1))
                    start = None
    return found


def header_bodies(path):
    """(name, first line, lines) of each function body in a header that spans
    more than one line: a brace block opened where only namespaces and types
    enclose it, not a namespace's, a type's or an initializer's ("= {")."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    stack, found = [], []  # stack: (kind, line) of each open block
    for i, line in enumerate(lines):
        code = without_literals(line)
        for col, ch in enumerate(code):
            if ch == "{":
                if any(kind not in ("namespace", "type") for kind, _ in stack):
                    stack.append(("inner", i))
                    continue
                head = " ".join(without_literals(l) for l in lines[max(0, i - 3):i]) + " " + code[:col]
                head = re.split(r"[;{}]", head)[-1]
                if re.search(r'\bnamespace\b|extern "C"', head):
                    kind = "namespace"
                elif re.search(r"\b(struct|class|enum|union)\b[^()]*$", head):
                    kind = "type"
                elif re.search(r"=\s*$", head):
                    kind = "data"
                else:
                    kind = "function"
                stack.append((kind, i))
            elif ch == "}" and stack:
                kind, start = stack.pop()
                if kind == "function" and i > start:
                    head = " ".join(without_literals(l) for l in lines[max(0, start - 2):start + 1])
                    names = FUNCTION_NAME.findall(head)
                    found.append((names[-1].split("::")[-1] if names else "?", start + 1, i - start + 1))
    return found


def main():
    src = os.path.join(sys.argv[1], "src")
    problems, count = [], 0
    for root, _, files in os.walk(src):
        for name in sorted(files):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            here = top_folder(rel)
            count += 1
            if here not in RANK:
                problems.append(f"xnnpack/src/{rel}: not in a layer folder (a new folder needs its place in LAYERS here "
                                "and in docs/design.md)")
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                there = top_folder(inc)
                if there in RANK and there != here and RANK[there] > RANK[here] \
                        and os.path.exists(os.path.join(src, inc)):
                    problems.append(f'xnnpack/src/{rel} ({here}/) includes "{inc}" ({there}/), which is above it')
            if name.endswith(".h") and not INLINE_BY_DESIGN.match(rel.replace(os.sep, "/")):
                for fn, line, length in header_bodies(path):
                    problems.append(f"xnnpack/src/{rel}:{line}: {fn}() has a body of {length} lines in a header (bodies past one line go in a .cpp)")
            if here == "lower" and name.endswith(".cpp"):
                for fn, line, length in long_functions(path):
                    problems.append(f"xnnpack/src/{rel}:{line}: {fn}() is {length} lines (at most {MAX_LINES} in lower/)")
    for p in problems:
        print(p)
    print(f"{count} files of xnnpack/src in {len(LAYERS) - 1} layer folders: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
