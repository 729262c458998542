"""Sub-cluster trials (--trial_cluster) through the real launcher: with fake
tasks (testdata/fake_cluster_task.py) the results, the chief-only reports,
each task's share of cores and directory, a task that dies, early stopping,
and that no task outlives the sweep; then a real cluster sweep of
examples/between_graph_mlp."""

import os
import unittest

from tools.sweep import sweep_testutil

TASK = sweep_testutil.runfile("tools/sweep/testdata/fake_cluster_task.py")
BETWEEN_GRAPH = sweep_testutil.runfile("examples/between_graph_mlp")
LAUNCHER = sweep_testutil.runfile("tools/launch")


def cpus(n):
    return "--devices=" + ",".join("cpu:%d" % i for i in range(n))


class SweepClusterTest(sweep_testutil.SweepTestCase):
    def log(self, number):
        with open(os.path.join(self.trial_dir(number), "stdout.log")) as f:
            return f.read().splitlines()

    def test_each_trial_is_a_sub_cluster_reporting_from_its_chief(self):
        r = self.sweep(["--space=" + self.space({"x": [2, 1]}), "--trials=2", "--search=grid",
                        cpus(6), "--parallel=2", "--trial_devices=CPU:1",
                        "--trial_cluster=ps=1,workers=2", "--early_stop=none"],
                       [TASK, "--steps=8"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sub-cluster of 1 ps and 2 worker task(s)", r.stdout)
        self.assertIn("best: trial 001", r.stdout)
        trials = self.results()
        self.assertEqual([(t["state"], t["exit_status"], t["step"]) for t in trials],
                         [("completed", 0, 8), ("completed", 0, 8)])
        for t in trials:
            # The chief's loss; worker 1 reported 1000 on the same steps.
            self.assertAlmostEqual(t["metrics"]["loss"], t["params"]["x"] + 1 / 8)
        self.assertEqual(sorted(t["device"] for t in trials), ["cpu:0,1,2", "cpu:3,4,5"])
        with open(os.path.join(self.out, "results.csv")) as f:
            rows = f.read().splitlines()
        self.assertEqual(len(rows), 3)
        self.assertTrue(rows[1].startswith("0,2,2.125,completed,"), rows)
        log = self.log(0)
        for task in ("ps:0", "worker:0", "worker:1"):  # 1 core each, all in the trial's dir
            self.assertIn("[%s] %s: up, SLUICE_NUM_THREADS=1, cwd=%s"
                          % (task, task, self.trial_dir(0)), log)
        self.assertIn("[launch] started worker:1 (pid", "\n".join(log))
        self.assertEqual(self.leftovers(), [])

    def test_a_dead_task_fails_its_trial_with_its_status(self):
        r = self.sweep(["--space=" + self.space({"x": [1, 2, 3]}), "--trials=3",
                        "--search=grid", cpus(2), "--trial_cluster=ps=1,workers=1",
                        "--early_stop=none"],
                       [TASK, "--steps=200", "--sleep=0.02", "--fail_task=ps:0", "--fail_x=2"])
        self.assertEqual(r.returncode, 0, r.stderr)
        trials = self.results()
        self.assertEqual([(t["state"], t["exit_status"]) for t in trials],
                         [("completed", 0), ("failed", 3), ("completed", 0)])
        failed = trials[1]
        self.assertLess(failed["step"], 200)  # the chief was stopped, not finished
        self.assertEqual(failed["last_lines"][0], "[launch] ps:0 exited with status 3")
        self.assertEqual(failed["last_lines"][-1],
                         "[ps:0] fake_cluster_task: ps:0 lost its disk at x=2")
        self.assertIn("trial 001 failed (exit status 3): [ps:0] fake_cluster_task: ps:0 lost "
                      "its disk", r.stdout)
        self.assertEqual(self.leftovers(), [])

    def test_early_stopping_tears_the_sub_cluster_down(self):
        # One slot: x=1 passes the rung at step 4 first; x=5 is then worse and
        # its launcher gets SIGTERM, which stops ps:0 and both workers.
        r = self.sweep(["--space=" + self.space({"x": [1, 5]}), "--trials=2", "--search=grid",
                        cpus(3), "--trial_cluster=ps=1,workers=2", "--min_resource=4",
                        "--eta=2", "--max_resource=40"],
                       [TASK, "--steps=40", "--sleep=0.05"])
        self.assertEqual(r.returncode, 0, r.stderr)
        good, bad = self.results()
        self.assertEqual((good["state"], good["step"]), ("completed", 40))
        self.assertEqual(bad["state"], "stopped")
        self.assertLess(bad["step"], 40)
        self.assertEqual(bad["exit_status"], 143)  # the launcher's status after SIGTERM
        log = "\n".join(self.log(1))
        self.assertIn("[launch] SIGTERM received; stopping 3 task(s)", log)
        for task in ("ps:0", "worker:0", "worker:1"):
            self.assertIn("[launch] %s stopped" % task, log)
        self.assertEqual(self.leftovers(), [])

    def test_between_graph_mlp_sweep_over_sub_clusters(self):
        r = self.sweep(["--space=" + self.space({"learning_rate": [0.1, 0.001]}),
                        "--trials=2", "--search=grid", cpus(2),
                        "--trial_cluster=ps=1,workers=1", "--early_stop=none",
                        "--metric=accuracy", "--mode=max"],
                       [BETWEEN_GRAPH, "--steps=40", "--report_every=20", "--hidden=16",
                        "--examples=1024", "--held_out=256", "--log_every=20"])
        self.assertEqual(r.returncode, 0, r.stderr + r.stdout)
        trials = self.results()
        self.assertEqual([(t["state"], t["exit_status"]) for t in trials],
                         [("completed", 0), ("completed", 0)])
        for t in trials:  # the chief's last report: the global step it stopped at
            self.assertIn(t["step"], (40, 41))
        self.assertIn("best: trial 000", r.stdout)  # lr 0.1 learns in 40 steps, 0.001 hardly
        self.assertGreater(trials[0]["metrics"]["accuracy"], trials[1]["metrics"]["accuracy"])
        for n in (0, 1):
            train = os.path.join(self.trial_dir(n), "train")  # the chief's --logdir default
            self.assertTrue(os.path.exists(os.path.join(train, "checkpoint")), os.listdir(train))
            self.assertTrue(any(f.startswith("events.out.tfevents.") for f in os.listdir(train)))
        self.assertEqual(self.leftovers(), [])


if __name__ == "__main__":
    unittest.main()
