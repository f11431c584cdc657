"""fixture_cache.py: a generator runs once per key, its files are copied into
place, a failed generator leaves no entry, and an entry is whole."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.path.join(HERE, "fixture_cache.py")

# Counts its runs in RUNS, writes two files (one in a folder) into its out folder, or fails when told.
GENERATOR = """
import os, sys
out = sys.argv[1]
with open(os.environ["RUNS"], "a") as f:
    f.write("run\\n")
if "--fail" in sys.argv:
    open(os.path.join(out, "partial.bin"), "w").write("half")
    sys.exit(3)
os.makedirs(os.path.join(out, "sub"), exist_ok=True)
open(os.path.join(out, "a.txt"), "w").write(" ".join(sys.argv[2:]))
open(os.path.join(out, "sub", "b.txt"), "w").write("b")
"""


class FixtureCacheTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.generator = os.path.join(d, "gen.py")
        with open(self.generator, "w") as f:
            f.write(GENERATOR)
        self.runs = os.path.join(d, "runs")
        self.env = dict(os.environ, TRACEGRAPH_CACHE=os.path.join(d, "cache"), RUNS=self.runs)

    def tearDown(self):
        self.dir.cleanup()

    def run_cache(self, out, *args, env=None):
        return subprocess.run([sys.executable, CACHE, "gen", out, "--", sys.executable, self.generator, "{out}", *args],
                              env=env or self.env, capture_output=True, text=True)

    def count_runs(self):
        return open(self.runs).read().count("run") if os.path.exists(self.runs) else 0

    def test_runs_once_per_key_and_copies_into_place(self):
        out1, out2 = os.path.join(self.dir.name, "out1"), os.path.join(self.dir.name, "out2")
        r = self.run_cache(out1, "x")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 files made", r.stdout)
        r = self.run_cache(out2, "x")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("2 files from the cache", r.stdout)
        self.assertEqual(self.count_runs(), 1)
        for out in (out1, out2):
            self.assertEqual(open(os.path.join(out, "a.txt")).read(), "x")
            self.assertEqual(open(os.path.join(out, "sub", "b.txt")).read(), "b")
        # A copy: writing into a fixture in place does not change the cached one.
        with open(os.path.join(out1, "a.txt"), "w") as f:
            f.write("changed")
        self.run_cache(out1, "x")
        self.assertEqual(open(os.path.join(out1, "a.txt")).read(), "x")
        # Other arguments are another key: the generator runs again.
        r = self.run_cache(out1, "y")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.count_runs(), 2)
        self.assertEqual(open(os.path.join(out1, "a.txt")).read(), "y")

    def test_a_failed_generator_leaves_no_entry(self):
        out = os.path.join(self.dir.name, "out")
        r = self.run_cache(out, "--fail")
        self.assertEqual(r.returncode, 1)
        self.assertIn("the generator failed (3)", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "partial.bin")))
        self.assertEqual(os.listdir(os.path.join(self.dir.name, "cache", "fixtures")), [])
        r = self.run_cache(out, "--fail")
        self.assertEqual(self.count_runs(), 2)  # tried again, never taken from a cache

    def test_switched_off_it_runs_into_out(self):
        out = os.path.join(self.dir.name, "out")
        env = dict(self.env, TRACEGRAPH_FIXTURE_CACHE="0")
        for _ in range(2):
            self.assertEqual(self.run_cache(out, "z", env=env).returncode, 0)
        self.assertEqual(self.count_runs(), 2)
        self.assertFalse(os.path.exists(os.path.join(self.dir.name, "cache")))


if __name__ == "__main__":
    unittest.main()
