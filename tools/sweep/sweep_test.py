"""The sweep end to end, with testdata/fake_trial.py as the program: results
files, early stopping, a failing trial, Ctrl-C and --resume, GPU packing and
the command-line errors."""

import json
import os
import shutil
import signal
import subprocess
import time
import unittest

from tools.sweep import sweep_testutil

FAKE = sweep_testutil.runfile("tools/sweep/testdata/fake_trial.py")


class SweepTest(sweep_testutil.SweepTestCase):
    def command(self, flags, program=None):
        return super().command(flags, program if program is not None else [FAKE])

    def sweep(self, flags, program=None):
        return super().sweep(flags, program if program is not None else [FAKE])

    def test_grid_sweep_writes_results_and_best(self):
        r = self.sweep(["--space=" + self.space({"x": [3, 1, 2]}), "--trials=10",
                        "--search=grid", "--parallel=2", "--devices=cpu:0,cpu:1",
                        "--early_stop=none"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("best: trial 001", r.stdout)
        trials = self.results()
        self.assertEqual([t["params"]["x"] for t in trials], [3, 1, 2])  # capped at the grid
        for t in trials:
            self.assertEqual(t["state"], "completed")
            self.assertEqual(t["step"], 10)
            self.assertAlmostEqual(t["metrics"]["loss"], t["params"]["x"] + 0.1)
            self.assertIn(t["device"], ("cpu:0", "cpu:1"))
            self.assertGreater(t["duration_s"], 0)
            self.assertEqual(t["exit_status"], 0)
            self.assertTrue(os.path.exists(os.path.join(self.out, t["dir"], "stdout.log")))
        with open(os.path.join(self.out, "results.csv")) as f:
            lines = f.read().splitlines()
        self.assertEqual(lines[0], "trial,x,accuracy,loss,state,device,step,duration_s,exit_status")
        self.assertEqual(len(lines), 4)
        self.assertTrue(os.path.getsize(os.path.join(self.out, "plot.svg")) > 1000)
        events = [f for f in os.listdir(os.path.join(self.out, "trial_000"))
                  if f.startswith("events.out.tfevents.")]
        self.assertEqual(len(events), 1)

    def test_quiet_trials_report_each_step_once(self):
        # Silence longer than the driver's 0.5 s poll, before and between reports.
        r = self.sweep(["--space=" + self.space({"x": [1]}), "--trials=1", "--search=grid",
                        "--devices=cpu:0", "--early_stop=none"],
                       [FAKE, "--start_delay=1.2", "--sleep=0.7", "--steps=3"])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.out, "sweep_state.json")) as f:
            history = json.load(f)["trials"][0]["history"]
        self.assertEqual([h[0] for h in history], [1, 2, 3])

    def test_random_and_tpe_sweeps_run(self):
        sp = self.space({"x": {"uniform": [0, 4]}, "steps": {"int": [3, 5]}})
        for kind in ("random", "tpe"):
            shutil.rmtree(self.out, ignore_errors=True)
            r = self.sweep(["--space=" + sp, "--trials=4", "--search=" + kind, "--seed=2",
                            "--devices=cpu:0,cpu:1", "--parallel=2", "--early_stop=none"])
            self.assertEqual(r.returncode, 0, r.stderr)
            trials = self.results()
            self.assertEqual(len(trials), 4)
            for t in trials:
                self.assertEqual(t["state"], "completed")
                self.assertEqual(t["step"], t["params"]["steps"])

    def test_asha_stops_the_worst_trial_at_a_rung(self):
        # One slot: x=1 reaches the rung at step 2 first; x=5 then is worse.
        r = self.sweep(["--space=" + self.space({"x": [1, 5]}), "--trials=2",
                        "--search=grid", "--devices=cpu:0", "--min_resource=2", "--eta=2",
                        "--max_resource=20"], [FAKE, "--steps=20", "--sleep=0.1"])
        self.assertEqual(r.returncode, 0, r.stderr)
        good, bad = self.results()
        self.assertEqual(good["state"], "completed")
        self.assertEqual(good["step"], 20)
        self.assertEqual(bad["state"], "stopped")
        self.assertLess(bad["step"], 20)
        self.assertIn("trial 001 stopped", r.stdout)

    def test_a_failing_trial_is_recorded_and_the_sweep_goes_on(self):
        r = self.sweep(["--space=" + self.space({"x": [1, 2, 3]}), "--trials=3",
                        "--search=grid", "--devices=cpu:0", "--early_stop=none"],
                       [FAKE, "--fail_x=2"])
        self.assertEqual(r.returncode, 0, r.stderr)
        states = [(t["state"], t["exit_status"]) for t in self.results()]
        self.assertEqual(states, [("completed", 0), ("failed", 3), ("completed", 0)])
        failed = self.results()[1]
        self.assertEqual(failed["last_lines"], ["fake_trial: out of cheese at x=2"])
        self.assertIn("exit=3", r.stdout)

    def test_interrupt_then_resume_does_not_rerun_finished_trials(self):
        runs_log = os.path.join(self.tmp, "runs.log")
        marker = os.path.join(self.tmp, "go_fast")
        argv, env = self.command(
            ["--space=" + self.space({"x": [1, 2, 3]}), "--trials=3", "--search=grid",
             "--devices=cpu:0", "--early_stop=none", "--grace_s=2"],
            [FAKE, "--runs_log=" + runs_log, "--slow_x=2", "--slow_unless=" + marker])
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        state_path = os.path.join(self.out, "sweep_state.json")
        deadline = time.time() + 60
        while time.time() < deadline:  # until trial 0 is done and trial 1 runs
            try:
                with open(state_path) as f:
                    trials = json.load(f)["trials"]
                if [t["state"] for t in trials[:2]] == ["completed", "running"]:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 130, out + err)
        self.assertIn("--resume", out)
        with open(state_path) as f:
            trials = json.load(f)["trials"]
        self.assertEqual([t["state"] for t in trials], ["completed", "interrupted"])

        open(marker, "w").close()
        r = self.sweep(["--resume", "--devices=cpu:0"])  # the program comes from the state
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual([t["state"] for t in self.results()], ["completed"] * 3)
        with open(runs_log) as f:
            self.assertEqual(f.read().split(), ["x=1", "x=2", "x=2", "x=3"])

    def test_gpu_trials_each_see_only_their_gpu(self):
        r = self.sweep(["--space=" + self.space({"x": [1, 2]}), "--trials=2",
                        "--search=grid", "--devices=gpu:0,gpu:1,cpu:0", "--parallel=2",
                        "--trial_devices=GPU:1", "--early_stop=none"],
                       [FAKE, "--sleep=0.2"])
        self.assertEqual(r.returncode, 0, r.stderr)
        seen = []
        for t in self.results():
            with open(os.path.join(self.out, t["dir"], "stdout.log")) as f:
                env_line = f.readline().strip()
            seen.append((t["device"], env_line))
        self.assertEqual(sorted(seen), [("gpu:0", "ENV CUDA_VISIBLE_DEVICES=0"),
                                        ("gpu:1", "ENV CUDA_VISIBLE_DEVICES=1")])

    def test_cpu_trials_see_no_gpu_and_their_thread_count(self):
        r = self.sweep(["--space=" + self.space({"x": [1]}), "--trials=1",
                        "--devices=gpu:0,cpu:0,cpu:1", "--trial_devices=CPU:2",
                        "--search=grid", "--early_stop=none"])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.out, "trial_000", "stdout.log")) as f:
            self.assertEqual(f.read().splitlines()[:2],
                             ["ENV CUDA_VISIBLE_DEVICES=", "ENV SLUICE_NUM_THREADS=2"])
        self.assertEqual(self.results()[0]["device"], "cpu:0,1")

    def test_bad_inputs_exit_1_with_one_error_line(self):
        good = self.space({"x": [1]})
        bad_range = os.path.join(self.tmp, "bad.json")
        with open(bad_range, "w") as f:
            f.write('{"x": {"uniform": [2, 1]}}')
        cases = [
            (["--space=/nonexistent.json", "--trials=2"], None, "cannot read space file"),
            (["--space=" + bad_range, "--trials=2"], None, "low < high"),
            (["--space=" + good, "--trials=2", "--search=bayes"], None, "unknown --search"),
            (["--space=" + good, "--trials=0"], None, "--trials must be at least 1"),
            (["--space=" + good, "--trials=2"], ["/nonexistent/prog"], "program not found"),
            (["--space=" + good, "--trials=2"], [], "no program"),
            (["--trials=2"], None, "--space=FILE is required"),
            (["--space=" + good, "--trials=2", "--devices=tpu:0"], None, "bad --devices"),
            (["--space=" + good, "--trials=2", "--bogus"], None, "unrecognized arguments"),
            (["--resume"], None, "cannot read"),
            (["--space=" + good, "--trials=2", "--trial_cluster=ps=1"], None,
             "needs workers=W with W >= 1"),
            (["--space=" + good, "--trials=2", "--trial_cluster=ps=1,workers=0"], None,
             "needs workers=W with W >= 1"),
            (["--space=" + good, "--trials=2", "--trial_cluster=ps=1,gpus=2"], None,
             "bad --trial_cluster entry 'gpus=2'"),
            (["--space=" + good, "--trials=2", "--trial_cluster=workers=1,workers=2"], None,
             "gives workers twice"),
            (["--space=" + good, "--trials=2", "--trial_cluster=ps=1,workers=2",
              "--devices=cpu:0,cpu:1"], None, "a trial of 3 tasks needs 3 CPU device(s)"),
            (["--space=" + good, "--trials=2", "--trial_cluster=workers=1",
              "--launcher=/nonexistent/launch", "--devices=cpu:0"], None, "no launcher"),
            (["--space=" + good, "--trials=2", "--cluster=hosts.json"], None,
             "not spread over other machines"),
        ]
        for flags, program, message in cases:
            r = self.sweep(flags, program)
            self.assertEqual(r.returncode, 1, (flags, r.stdout, r.stderr))
            lines = r.stderr.strip().splitlines()
            self.assertEqual(len(lines), 1, (flags, r.stderr))
            self.assertTrue(lines[0].startswith("sweep: error: "), lines)
            self.assertIn(message, lines[0])


if __name__ == "__main__":
    unittest.main()
