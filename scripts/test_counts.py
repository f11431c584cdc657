#!/usr/bin/env python3
"""Counts one ctest run's results in test cases (scripts/test.sh's closing line).

Usage: test_counts.py CTEST_LOG BUILD_DIR

A ctest test that runs GoogleTest cases (one suite, or a part of one:
cmake/gtest_groups.cmake) counts as its cases, read from the results file the
part wrote (BUILD_DIR/gtest-groups/*.tsv says which file); any other ctest
test counts as one. Prints "PASSED FAILED SKIPPED" on the first line, then
one line per skipped or failed case ("skipped: NAME", "failed: NAME").
"""
import pathlib
import re
import sys
import xml.etree.ElementTree as ET

RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.*\s*(\*{3}\S.*?|Passed)\s+[\d.]+ sec\s*$")


def read_index(build_dir):
    parts = {}
    for tsv in sorted((build_dir / "gtest-groups").glob("*.tsv")):
        for line in tsv.read_text().splitlines():
            name, results, cases = line.split("\t")
            parts[name] = (pathlib.Path(results), int(cases))
    return parts


def count_cases(results):
    """(passed count, failed names, skipped names) from a GoogleTest XML file,
    or pytest's JUnit XML (a skipped case has a <skipped>, an error an <error>)."""
    passed = 0
    skipped, failed = [], []
    for case in ET.parse(results).getroot().iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        if case.get("status") == "notrun":
            continue
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(name)
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            skipped.append(name)
        else:
            passed += 1
    return passed, failed, skipped


def main():
    log, build_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    parts = read_index(build_dir)
    passed = 0
    skipped, failed = [], []
    for line in log.read_text(errors="replace").splitlines():
        m = RESULT.match(line)
        if not m:
            continue
        name, status = m.group(1), m.group(2)
        if name not in parts:
            if status == "Passed":
                passed += 1
            elif "Skipped" in status:
                skipped.append(name)
            else:
                failed.append(name)
            continue
        results, cases = parts[name]
        if not results.is_file():
            # The part stopped before GoogleTest wrote its results (a crash, a timeout).
            failed.append(f"{name} ({cases} cases; {status.lstrip('*')}, no results written)")
            continue
        p, f, s = count_cases(results)
        if status != "Passed" and not f:
            f = [f"{name} ({status.lstrip('*')})"]
        passed += p
        failed += f
        skipped += s
    print(passed, len(failed), len(skipped))
    for name in skipped:
        print("skipped:", name)
    for name in failed:
        print("failed:", name)


if __name__ == "__main__":
    main()
