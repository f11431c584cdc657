#!/usr/bin/env python3
"""scripts/test_counts.py on a ctest log and GoogleTest and pytest (JUnit)
results written here: a part counts as its cases, a part that wrote no results as failed, a part
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
PYTEST = """<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="0" skipped="1" tests="3">
<testcase classname="test_a" name="test_ok" time="0.1" />
<testcase classname="test_a" name="test_torch" time="0.0"><skipped type="pytest.skip" message="needs torch">x</skipped></testcase>
<testcase classname="test_a" name="test_fixture" time="0.0"><error message="failed on setup">x</error></testcase>
</testsuite></testsuites>
"""
LOG = """Test project /x
      Start  1: S.1of2
 1/5 Test  #1: S.1of2 ...........................***Failed    1.00 sec
 2/5 Test  #2: S.2of2 ...........................***Exception: SegFault  0.50 sec
 3/5 Test  #3: T ................................***Failed    0.50 sec
 4/5 Test  #4: make_models ......................   Passed   10.00 sec
 5/6 Test  #5: other ............................***Skipped   0.10 sec
 6/6 Test  #6: python_tests .....................***Failed    3.00 sec

50% tests passed, 4 tests failed out of 6
"""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        build = pathlib.Path(tmp)
        (build / "gtest-groups").mkdir()
        (build / "gtest-results").mkdir()
        (build / "gtest-results" / "s1.xml").write_text(RESULTS)
        (build / "gtest-results" / "t.xml").write_text(PASSING)
        (build / "gtest-results" / "p.xml").write_text(PYTEST)
        (build / "gtest-groups" / "x.tsv").write_text(
            f"S.1of2\t{build}/gtest-results/s1.xml\t4\n"
            f"S.2of2\t{build}/gtest-results/s2.xml\t2\n"
            f"T\t{build}/gtest-results/t.xml\t1\n"
            f"python_tests\t{build}/gtest-results/p.xml\t0\n")
        (build / "log").write_text(LOG)
        out = subprocess.run([sys.executable, str(SCRIPT), str(build / "log"), str(build)],
                             check=True, capture_output=True, text=True).stdout.splitlines()
    expected = [
        "4 4 3",  # S.a, T.ok, make_models, test_ok | S.b, S.2of2, T, test_fixture | S.c, other, test_torch
        "skipped: S.c",
        "skipped: other",
        "skipped: test_a.test_torch",
        "failed: S.b",
        "failed: S.2of2 (2 cases; Exception: SegFault, no results written)",
        "failed: T (Failed)",
        "failed: test_a.test_fixture",
    ]
    if out != expected:
        print("expected:\n  " + "\n  ".join(expected) + "\ngot:\n  " + "\n  ".join(out))
        return 1
    print("test_counts.py: counts and names as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
