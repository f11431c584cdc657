"""The same bytes give the same graph in every process.

Runs tracegraph_read_dump twice, as two processes, over every TorchScript and
.pt2 model in the directories given (the test models, the .pt2 archives, the
zoo where it has been made), and compares what each reader gave for each
file: the hash of its graph's JSON and its node count, or its error's code.
Usage: determinism_test.py READ_DUMP DIR...
"""
import pathlib
import subprocess
import sys


def main() -> int:
    dump, dirs = sys.argv[1], [pathlib.Path(d) for d in sys.argv[2:]]
    files = sorted(str(p) for d in dirs if d.is_dir() for p in d.iterdir() if p.suffix in (".ts", ".pt", ".pt2"))
    if len(files) < 20:
        print(f"determinism_test: only {len(files)} model files in {', '.join(map(str, dirs))}")
        return 1
    runs = [subprocess.run([dump, *files], check=True, capture_output=True, text=True).stdout.splitlines() for _ in range(2)]
    if len(runs[0]) != len(files) or len(runs[1]) != len(files):
        print(f"determinism_test: {len(files)} files, {len(runs[0])} and {len(runs[1])} lines")
        return 1
    differ = [(a, b) for a, b in zip(*runs) if a != b]
    for a, b in differ:
        print(f"differs between two processes:\n  {a}\n  {b}")
    graphs = sum(line.count("=") - line.count("=error:") for line in runs[0])
    print(f"determinism_test: {len(files)} files, {graphs} graphs read, {len(differ)} differ between two processes")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
