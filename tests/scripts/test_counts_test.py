#!/usr/bin/env python3
"""scripts/test_counts.py on a ctest log and GoogleTest results written here:
a part counts as its cases, a part that wrote no results as failed, a part
ctest failed with all its cases passed (a leak found at exit) as failed, and
any other ctest test as one."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "test_counts.py"

RESULTS = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1" disabled="1" errors="0" name="AllTests">
  <testsuite name="S" tests="4">
    <testcase name="a" status="run" result="completed" classname="S" />
    <testcase name="b" status="run" result="completed" classname="S"><failure message="x" type=""/></testcase>
    <testcase name="c" status="run" result="skipped" classname="S"><skipped message="no GPU"/></testcase>
    <testcase name="DISABLED_d" status="notrun" result="suppressed" classname="S" />
  </testsuite>
</testsuites>
"""
PASSING = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="1"><testsuite name="T"><testcase name="ok" status="run" result="completed" classname="T" /></testsuite></testsuites>
"""
LOG = """Test project /x
      Start  1: S.1of2
 1/5 Test  #1: S.1of2 ...........................***Failed    1.00 sec
 2/5 Test  #2: S.2of2 ...........................***Exception: SegFault  0.50 sec
 3/5 Test  #3: T ................................***Failed    0.50 sec
 4/5 Test  #4: make_models ......................   Passed   10.00 sec
 5/5 Test  #5: other ............................***Skipped   0.10 sec

60% tests passed, 3 tests failed out of 5
"""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        build = pathlib.Path(tmp)
        (build / "gtest-groups").mkdir()
        (build / "gtest-results").mkdir()
        (build / "gtest-results" / "s1.xml").write_text(RESULTS)
        (build / "gtest-results" / "t.xml").write_text(PASSING)
        (build / "gtest-groups" / "x.tsv").write_text(
            f"S.1of2\t{build}/gtest-results/s1.xml\t4\n"
            f"S.2of2\t{build}/gtest-results/s2.xml\t2\n"
            f"T\t{build}/gtest-results/t.xml\t1\n")
        (build / "log").write_text(LOG)
        out = subprocess.run([sys.executable, str(SCRIPT), str(build / "log"), str(build)],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    expected = [
        "3 3 2",  # S.a, T.ok, make_models | S.b, S.2of2, T | S.c, other
        "skipped: S.c",
        "skipped: other",
        "failed: S.b",
        "failed: S.2of2 (2 cases; Exception: SegFault, no results written)",
        "failed: T (Failed)",
    ]
    if out != expected:
        print("expected:\n  " + "\n  ".join(expected) + "\ngot:\n  " + "\n  ".join(out))
        return 1
    print("test_counts.py: counts and names as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
