"""What the sweep's end-to-end tests share: a fresh output directory, a
space file, running `python3 -m tools.sweep.main` on a program, reading its
results, and finding processes a sweep left behind.

  class MyTest(sweep_testutil.SweepTestCase):
      def test_x(self):
          r = self.sweep(["--space=" + self.space({"x": [1]}), "--trials=1"], [PROGRAM])
          self.assertEqual(r.returncode, 0, r.stderr)
          self.assertEqual(self.results()[0]["state"], "completed")
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))  # the runfiles (or source) root


def runfile(path):
    """A file of the test's runfiles, e.g. "examples/sweep_mlp"."""
    return os.path.join(ROOT, path)


def processes_with_env(prefix):
    """Pids of this user's processes with an environment entry that starts
    with `prefix` ("NAME=value...")."""
    want = prefix.encode()
    pids = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                if any(e.startswith(want) for e in f.read().split(b"\0")):
                    pids.append(int(pid))
        except OSError:
            continue  # gone, or not ours
    return pids


class SweepTestCase(unittest.TestCase):
    timeout_s = 120

    def setUp(self):
        self.tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        self.out = os.path.join(self.tmp, "out")

    def tearDown(self):
        for pid in self.leftovers():  # never leave them to the next test
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.tmp, ignore_errors=True)

    def space(self, doc):
        path = os.path.join(self.tmp, "space.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def command(self, flags, program):
        env = dict(os.environ, PYTHONPATH=ROOT)
        env.pop("BUILD_WORKING_DIRECTORY", None)
        return ([sys.executable, "-m", "tools.sweep.main", "--out=" + self.out] + flags +
                ["--"] + program, env)

    def sweep(self, flags, program):
        argv, env = self.command(flags, program)
        return subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=self.timeout_s)

    def results(self):
        with open(os.path.join(self.out, "results.json")) as f:
            return json.load(f)["trials"]

    def trial_dir(self, number):
        return os.path.join(self.out, "trial_%03d" % number)

    def leftovers(self):
        """Processes of any trial of this test's sweep (they inherit
        SLUICE_SWEEP_DIR=OUT/trial_NNN), after up to 2 s for exits in flight."""
        deadline = time.time() + 2
        while True:
            pids = processes_with_env("SLUICE_SWEEP_DIR=" + self.out + os.sep)
            if not pids or time.time() > deadline:
                return pids
            time.sleep(0.1)
