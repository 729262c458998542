"""Devices, slots and trial processes.

parse_devices("auto" | "cpu:0,cpu:1,gpu:0") lists the machine's devices;
make_slots(devices, "GPU:1") packs them into slots, one running trial per
slot. A GPU trial sees only its own GPUs (CUDA_VISIBLE_DEVICES); a CPU trial
sees no GPU and is told its share of cores through SLUICE_NUM_THREADS,
OMP_NUM_THREADS and OPENBLAS_NUM_THREADS (no pinning).

A sub-cluster trial (parse_trial_cluster("ps=1,workers=2")) is one launcher
process (//tools:launch) starting P + W task processes on 127.0.0.1; its
slot holds CPU:N per task (N from --trial_devices, default 1), and every task
is told N threads. With --trial_devices=GPU:N the trial's N GPUs are visible
to all its tasks (the launcher does not split them between tasks).

TrialProcess runs one trial: PROGRAM ARGS --flag=value ... in its own
directory and process group, stdout and stderr logged there, SLUICE_SWEEP
lines passed to a queue by a reader thread. For a sub-cluster only the
chief's lines count: the launcher prefixes each task's output with
"[job:index] ", and report_prefix is "[worker:0] ".
"""

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time

REPORT_PREFIX = "SLUICE_SWEEP "
CHIEF_PREFIX = "[worker:0] "  # the launcher's prefix of the chief's lines
MAX_CLUSTER_TASKS = 64


class DeviceError(Exception):
    pass


def _detect_gpus():
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [i for i in visible.split(",") if i.strip() not in ("", "-1")]
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [m.group(1) for m in re.finditer(r"^GPU (\d+):", out, re.M)]


def parse_devices(spec):
    """A list of (kind, id) with kind "cpu" or "gpu"; DeviceError if malformed."""
    if spec == "auto":
        return ([("gpu", g) for g in _detect_gpus()] +
                [("cpu", str(i)) for i in range(os.cpu_count() or 1)])
    devices = []
    for item in spec.split(","):
        m = re.fullmatch(r"\s*(cpu|gpu):(\d+)\s*", item, re.I)
        if not m:
            raise DeviceError("bad --devices entry %r (want cpu:N or gpu:N)" % item)
        d = (m.group(1).lower(), m.group(2))
        if d in devices:
            raise DeviceError("--devices lists %s:%s twice" % d)
        devices.append(d)
    return devices


def parse_trial_devices(spec, devices):
    """("cpu"|"gpu", count) from "CPU:1"/"GPU:2"; default GPU:1 when there is a GPU."""
    if not spec:
        return ("gpu", 1) if any(k == "gpu" for k, _ in devices) else ("cpu", 1)
    m = re.fullmatch(r"(cpu|gpu):(\d+)", spec.strip(), re.I)
    if not m or int(m.group(2)) < 1:
        raise DeviceError("bad --trial_devices=%s (want CPU:N or GPU:N, N >= 1)" % spec)
    return m.group(1).lower(), int(m.group(2))


def parse_trial_cluster(spec):
    """{"ps": P, "workers": W} from "ps=1,workers=2" ("workers=2": no ps);
    None for ""; DeviceError if malformed."""
    if not spec:
        return None
    shape = {}
    for item in spec.split(","):
        m = re.fullmatch(r"\s*(ps|workers)=(\d+)\s*", item)
        if not m:
            raise DeviceError("bad --trial_cluster entry %r (want ps=P,workers=W)" % item)
        if m.group(1) in shape:
            raise DeviceError("--trial_cluster gives %s twice" % m.group(1))
        shape[m.group(1)] = int(m.group(2))
    shape.setdefault("ps", 0)
    if "workers" not in shape or shape["workers"] < 1:
        raise DeviceError("--trial_cluster=%s needs workers=W with W >= 1" % spec)
    if shape["ps"] + shape["workers"] > MAX_CLUSTER_TASKS:
        raise DeviceError("--trial_cluster=%s: at most %d tasks per trial"
                          % (spec, MAX_CLUSTER_TASKS))
    return {"ps": shape["ps"], "workers": shape["workers"]}


class Slot:
    """Devices for one running trial; `tasks` processes share them (a
    sub-cluster's tasks split the CPU cores evenly)."""

    def __init__(self, kind, ids, tasks=1):
        self.kind, self.ids, self.tasks = kind, ids, tasks

    def name(self):
        return "%s:%s" % (self.kind, ",".join(self.ids))

    def env(self):
        if self.kind == "gpu":
            return {"CUDA_VISIBLE_DEVICES": ",".join(self.ids)}
        n = str(max(1, len(self.ids) // self.tasks))
        return {"CUDA_VISIBLE_DEVICES": "", "SLUICE_NUM_THREADS": n,
                "OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n}


def make_slots(devices, trial_devices, parallel, tasks=1):
    """At most `parallel` slots of trial_devices[1] devices of its kind each;
    CPU devices are counted per task, so a trial of `tasks` processes takes
    tasks * N of them."""
    kind, count = trial_devices
    per_trial = count * tasks if kind == "cpu" else count
    ids = [i for k, i in devices if k == kind]
    if len(ids) < per_trial:
        if tasks > 1:
            raise DeviceError(
                "a trial of %d tasks needs %d CPU device(s) (%s:%d per task) but --devices has "
                "%d; list more, e.g. --devices=cpu:0,...,cpu:%d (no pinning: more than the "
                "machine's cores share them)" % (tasks, per_trial, kind.upper(), count, len(ids),
                                                 per_trial - 1) if kind == "cpu" else
                "--trial_devices=GPU:%d but --devices has %d GPU device(s)" % (count, len(ids)))
        raise DeviceError("--trial_devices=%s:%d but --devices has %d %s device(s)"
                          % (kind.upper(), count, len(ids), kind.upper()))
    slots = [Slot(kind, ids[i:i + per_trial], tasks)
             for i in range(0, len(ids) - per_trial + 1, per_trial)]
    return slots[:parallel]


def parse_report(line, report_prefix=""):
    """The metrics of a SLUICE_SWEEP line as a dict with "step", else None.
    The line must start with report_prefix (e.g. "[worker:0] ") first."""
    prefix = report_prefix + REPORT_PREFIX
    if not line.startswith(prefix):
        return None
    try:
        doc = json.loads(line[len(prefix):])
    except json.JSONDecodeError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("step"), int):
        return None
    return doc


class TrialProcess:
    """One running trial. Events go to `queue` as (number, kind, payload):
    ("report", dict) per SLUICE_SWEEP line and ("exit", returncode) once."""

    def __init__(self, number, argv, trial_dir, slot, queue, report_prefix=""):
        self.number, self.slot = number, slot
        self.report_prefix = report_prefix
        self.start = time.time()
        env = dict(os.environ)
        if report_prefix:
            # A launcher under `bazel run` starts its tasks in the user's
            # directory; a sub-cluster trial's tasks run in the trial's own.
            env.pop("BUILD_WORKING_DIRECTORY", None)
            env.pop("BUILD_WORKSPACE_DIRECTORY", None)
        env.update(slot.env())
        env["SLUICE_SWEEP_TRIAL"] = str(number)
        env["SLUICE_SWEEP_DIR"] = trial_dir
        os.makedirs(trial_dir, exist_ok=True)
        self.stdout_path = os.path.join(trial_dir, "stdout.log")
        self.stderr_path = os.path.join(trial_dir, "stderr.log")
        self._stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(
            argv, cwd=trial_dir, env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=self._stderr, text=True, bufsize=1,
            start_new_session=True)  # Ctrl-C reaches the driver, which stops us
        self._queue = queue
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        with open(self.stdout_path, "w") as log:
            for line in self.proc.stdout:
                log.write(line)
                log.flush()
                report = parse_report(line.rstrip("\n"), self.report_prefix)
                if report is not None:
                    self._queue.put((self.number, "report", report))
        rc = self.proc.wait()
        self._stderr.close()
        self._queue.put((self.number, "exit", rc))

    def terminate(self, grace_s):
        """SIGTERM to the trial's process group, SIGKILL after grace_s."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.proc.wait(timeout=grace_s)
                return
            except subprocess.TimeoutExpired:
                continue

    def wait_reader(self, timeout=10):
        self._reader.join(timeout)


def last_lines(path, n=10):
    try:
        with open(path, errors="replace") as f:
            return [l.rstrip("\n") for l in f.readlines()[-n:]]
    except OSError:
        return []


def cluster_last_lines(path, n=10):
    """What explains a failed sub-cluster trial, from the launcher's log: the
    launcher's line on the task that failed (the one it names under
    --fail_fast, else the chief), then that task's last output lines other
    than SLUICE_SWEEP reports."""
    lines = last_lines(path, n=100000)
    task = "worker:0"
    for l in lines:
        m = re.match(r"\[launch\] (\S+) failed \(--fail_fast\)", l)
        if m:
            task = m.group(1)
            break
    own = "[%s] " % task
    exits = [l for l in lines if l.startswith("[launch] %s exited " % task) or
             l.startswith("[launch] %s killed " % task)]
    output = [l for l in lines if l.startswith(own) and
              not l[len(own):].startswith(REPORT_PREFIX)]
    return exits[:1] + output[-(n - 1):]
