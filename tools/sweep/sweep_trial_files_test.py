"""Each trial of examples/sweep_mlp keeps its files in its own directory:
logs, the sweep's hparams events, and the program's checkpoints and
TensorBoard scalars under train/; the checkpoint restores to the weights
the trial finished with."""

import json
import os
import struct
import subprocess
import unittest

from tools.sweep import sweep_testutil

SWEEP_MLP = sweep_testutil.runfile("examples/sweep_mlp")
REPORTS = 2  # --steps=40 --report_every=20
METRICS = ("accuracy", "loss", "train_loss")


def tfrecords(path):
    """The records of a TFRecord file (length, CRC, data, CRC; CRCs unchecked)."""
    records = []
    with open(path, "rb") as f:
        while True:
            head = f.read(12)
            if not head:
                return records
            (length,) = struct.unpack("<Q", head[:8])
            records.append(f.read(length))
            f.read(4)


class SweepTrialFilesTest(sweep_testutil.SweepTestCase):
    def test_each_trial_keeps_logs_checkpoints_and_events(self):
        r = self.sweep(["--space=" + self.space({"hidden": ["16", "32"]}), "--trials=2",
                        "--search=grid", "--devices=cpu:0,cpu:1", "--parallel=2",
                        "--early_stop=none"],
                       [SWEEP_MLP, "--steps=40", "--report_every=20", "--checkpoint_steps=20",
                        "--examples=512"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for t in self.results():
            self.assertEqual((t["state"], t["step"]), ("completed", 40))
            tdir = self.trial_dir(t["trial"])
            files = os.listdir(tdir)
            for name in ("stdout.log", "stderr.log", "train"):
                self.assertIn(name, files)
            self.assertEqual(len([f for f in files if f.endswith(".hparams")]), 1, files)
            train = os.path.join(tdir, "train")
            self.assertEqual(sorted(f for f in os.listdir(train) if ".ckpt" in f),
                             ["model.ckpt-20.data-00000-of-00001", "model.ckpt-20.index",
                              "model.ckpt-40.data-00000-of-00001", "model.ckpt-40.index"])
            with open(os.path.join(train, "checkpoint")) as f:
                self.assertIn('model_checkpoint_path: "model.ckpt-40"\n', f.read())
            events = [f for f in os.listdir(train) if f.startswith("events.out.tfevents.")]
            self.assertEqual(len(events), 1, events)
            records = tfrecords(os.path.join(train, events[0]))
            self.assertEqual(len(records), 1 + REPORTS * len(METRICS))  # + the file version
            for tag in METRICS:
                self.assertEqual(sum(tag.encode() in rec for rec in records[1:]),
                                 REPORTS + (tag == "loss") * REPORTS)  # "train_loss" holds "loss"

    def test_the_checkpoint_restores_the_finished_weights(self):
        r = self.sweep(["--space=" + self.space({"learning_rate": [0.05]}), "--trials=1",
                        "--search=grid", "--devices=cpu:0", "--early_stop=none"],
                       [SWEEP_MLP, "--steps=40", "--report_every=20", "--examples=512"])
        self.assertEqual(r.returncode, 0, r.stderr)
        final = self.results()[0]["metrics"]
        # The program again, as the sweep would run it after --resume: it
        # restores step 40 of the same trial and only evaluates.
        env = dict(os.environ, SLUICE_SWEEP_DIR=self.trial_dir(0))
        again = subprocess.run([SWEEP_MLP, "--learning_rate=0.05", "--steps=40",
                                "--report_every=20", "--examples=512"],
                               env=env, capture_output=True, text=True, timeout=60)
        self.assertEqual(again.returncode, 0, again.stderr)
        lines = again.stdout.splitlines()
        self.assertEqual(lines[0], "sweep_mlp: restored %s/train/model.ckpt-40 (step 40)"
                         % self.trial_dir(0))
        report = json.loads(lines[1][len("SLUICE_SWEEP "):])
        self.assertEqual(report["step"], 40)
        self.assertAlmostEqual(report["loss"], final["loss"], places=5)
        self.assertAlmostEqual(report["accuracy"], final["accuracy"], places=6)


if __name__ == "__main__":
    unittest.main()
