"""sweep: run a training program many times over a hyperparameter space.

  bazel run //tools:sweep -- --space=SPACE.json --trials=N [--parallel=K]
      [--search=grid|random|tpe] [--seed=S] [--devices=auto|cpu:0,gpu:0,...]
      [--trial_devices=CPU:1|GPU:1] [--trial_cluster=ps=P,workers=W]
      [--metric=loss --mode=min] [--out=DIR] [--resume] -- PROGRAM [ARGS]

Each trial runs PROGRAM ARGS --flag=value ... in OUT/trial_NNN/ (its cwd;
stdout.log, stderr.log) on its own slot of devices, and reports metrics with
SweepReport (training/sweep_report.h). With --trial_cluster each trial is a
local sub-cluster: `launch --ps=P --workers=W --fail_fast -- PROGRAM ARGS`
(//tools:launch), its metrics read from the chief's ("[worker:0] ") lines. Trials behind the others at a rung are
stopped early (ASHA, asha.py). Ctrl-C stops the trials and saves
OUT/sweep_state.json (exit 130); --resume continues from it. At the end:
OUT/results.csv, OUT/results.json, OUT/plot.svg, TensorBoard HParams events
(tensorboard --logdir OUT) and the best trial.
"""

import argparse
import json
import os
import queue
import shutil
import signal
import sys
import threading
import time

from tools.sweep import asha as asha_lib
from tools.sweep import hparams
from tools.sweep import report
from tools.sweep import scheduler
from tools.sweep import search
from tools.sweep import space as space_lib

STATE_FILE = "sweep_state.json"
FINISHED = ("completed", "stopped", "failed")


class UsageError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def make_parser():
    p = Parser(prog="sweep", description=__doc__.split("\n")[0])
    p.add_argument("--space", help="JSON search space (required unless --resume)")
    p.add_argument("--trials", type=int, help="number of trials (required unless --resume)")
    p.add_argument("--parallel", type=int, default=1, help="trials at once (default 1)")
    p.add_argument("--search", default="tpe", help="grid, random or tpe (default tpe)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--devices", default="auto", help="auto or a list: cpu:0,cpu:1,gpu:0")
    p.add_argument("--trial_devices", default="", help="CPU:N or GPU:N per trial "
                   "(default GPU:1 when there is a GPU, else CPU:1)")
    p.add_argument("--metric", default="loss")
    p.add_argument("--mode", default="min", choices=["min", "max"])
    p.add_argument("--out", default="sweep_out")
    p.add_argument("--resume", action="store_true")
    p.add_argument("--early_stop", default="asha", choices=["asha", "none"])
    p.add_argument("--min_resource", type=int, default=100,
                   help="ASHA's first rung, in steps (default 100)")
    p.add_argument("--eta", type=int, default=3, help="ASHA's reduction factor (default 3)")
    p.add_argument("--max_resource", type=int, default=0,
                   help="the trials' last step if known: no rung at or past it")
    p.add_argument("--grace_s", type=float, default=5.0,
                   help="seconds between SIGTERM and SIGKILL when stopping a trial")
    p.add_argument("--trial_dir_flag", default="",
                   help="also pass the trial's directory as --NAME=DIR (e.g. logdir)")
    p.add_argument("--trial_cluster", default="",
                   help="each trial a local sub-cluster of P ps and W worker tasks "
                   "(ps=P,workers=W) through the launcher; --trial_devices=CPU:N is per task")
    p.add_argument("--launcher", default="",
                   help="the launcher binary for --trial_cluster (default: //tools:launch "
                   "beside the sweep, else bazel-bin/tools/launch)")
    p.add_argument("--cluster", default="",
                   help="not supported: trials are not spread over other machines")
    return p


def find_launcher(flag):
    """The launcher's absolute path: --launcher, else the one in the sweep's
    runfiles (a data dependency), else bazel-bin/tools/launch."""
    if flag:
        candidates = [user_path(flag)]
    else:
        here = os.path.dirname(os.path.abspath(__file__))  # .../tools/sweep
        candidates = [os.path.join(os.path.dirname(here), "launch")]
        workspace = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
        if workspace:
            candidates.append(os.path.join(workspace, "bazel-bin", "tools", "launch"))
        candidates.append(user_path(os.path.join("bazel-bin", "tools", "launch")))
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise UsageError("no launcher for --trial_cluster (looked at %s): bazel build //tools:launch "
                     "or pass --launcher=PATH" % ", ".join(candidates))


def user_path(path):
    """A path as the user typed it: relative to where `bazel run` was started."""
    base = os.environ.get("BUILD_WORKING_DIRECTORY")
    if base and not os.path.isabs(path):
        return os.path.join(base, path)
    return os.path.abspath(path)


def resolve_program(argv):
    if not argv:
        raise UsageError("no program: put it after --, e.g. -- bazel-bin/examples/sweep_mlp")
    prog = argv[0]
    if prog.startswith("//"):
        pkg, _, name = prog[2:].partition(":")
        name = name or pkg.rsplit("/", 1)[-1]
        path = user_path(os.path.join("bazel-bin", pkg, name))
        if not os.access(path, os.X_OK):
            raise UsageError("program %s not built (no %s): bazel build %s first"
                             % (prog, path, prog))
        return [path] + argv[1:]
    path = user_path(prog) if "/" in prog else shutil.which(prog)
    if not path or not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise UsageError("program not found or not executable: %s" % prog)
    return [path] + argv[1:]


def split_argv(argv):
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


class Sweep:
    def __init__(self, args, config, trials, out):
        self.args, self.config, self.trials, self.out = args, config, trials, out
        self.space = space_lib.parse_space_json(json.dumps(config["space"]))
        self.searcher = search.make_searcher(config["search"], self.space, config["seed"],
                                             config["mode"])
        self.total = config["trials"]
        if config["search"] == "grid" and self.total > self.searcher.size():
            self.total = self.searcher.size()
        self.asha = None
        if config["early_stop"] == "asha":
            self.asha = asha_lib.Asha(config["min_resource"], config["eta"], config["mode"],
                                      config["max_resource"] or None)
        for t in trials:  # what an earlier run learned (--resume)
            if t["state"] in FINISHED:
                if isinstance(self.searcher, search.TpeSearch):
                    self.searcher.add_finished(t["params"], t["state"], self.value(t))
                for rung, v in t.get("rungs", {}).items():
                    if self.asha:
                        self.asha.record(t["number"], int(rung), v)
            else:
                t.update(state="pending", device=None, step=None, metrics={}, history=[],
                         rungs={})
        self.launcher = None
        if config.get("trial_cluster"):
            self.launcher = find_launcher(args.launcher)
        self.queue = queue.Queue()
        self.running = {}
        self.interrupts = 0
        self.table = report.Table(self.space.names(), config["metric"])

    def value(self, t):
        v = t.get("metrics", {}).get(self.config["metric"])
        return v if isinstance(v, (int, float)) else None

    def save(self):
        report.atomic_write(os.path.join(self.out, STATE_FILE), json.dumps(
            {"version": 1, "config": self.config, "trials": self.trials}, indent=1) + "\n")

    def next_trial(self):
        for t in self.trials:
            if t["state"] == "pending":
                return t
        n = len(self.trials)
        if n >= self.total:
            return None
        params = self.searcher.suggest(n)
        if params is None:
            self.total = n
            return None
        t = {"number": n, "params": params, "state": "pending", "metrics": {}, "history": [],
             "rungs": {}, "step": None, "device": None}
        self.trials.append(t)
        return t

    def trial_argv(self, t, tdir):
        argv = list(self.config["program"])
        argv += ["--%s=%s" % (k, space_lib.flag_value(v)) for k, v in t["params"].items()]
        if self.config.get("trial_dir_flag"):
            argv.append("--%s=%s" % (self.config["trial_dir_flag"], tdir))
        shape = self.config.get("trial_cluster")
        if not shape:
            return argv
        # --fail_fast: a task that dies fails the trial (no restarts); the
        # launcher's grace is half ours, so it tears down before we SIGKILL it.
        return [self.launcher, "--ps=%d" % shape["ps"], "--workers=%d" % shape["workers"],
                "--fail_fast", "--grace_period_s=%g" % (self.config["grace_s"] / 2),
                "--"] + argv

    def launch(self, t, slot):
        tdir = os.path.join(self.out, "trial_%03d" % t["number"])
        argv = self.trial_argv(t, tdir)
        t.update(state="running", device=slot.name(), start=time.time(), end=None,
                 exit_status=None, last_lines=[], step=None, metrics={}, history=[], rungs={})
        t.pop("stop_requested", None)
        try:
            proc = scheduler.TrialProcess(
                t["number"], argv, tdir, slot, self.queue,
                scheduler.CHIEF_PREFIX if self.config.get("trial_cluster") else "")
        except OSError as e:
            self.finish(t, "failed", None, ["cannot start %s: %s" % (argv[0], e)])
            return False
        self.running[t["number"]] = (proc, slot)
        return True

    def finish(self, t, state, rc, lines):
        t.update(state=state, exit_status=rc, end=time.time(), last_lines=lines)
        t["duration_s"] = t["end"] - t.get("start", t["end"])
        self.searcher.tell(t["number"], state, self.value(t))

    def on_report(self, t, rep):
        step = rep["step"]
        metrics = {k: (v if v is not None else float("nan")) for k, v in rep.items()
                   if k != "step" and (isinstance(v, (int, float)) or v is None)}
        t["step"] = step
        t["metrics"].update(metrics)
        t["history"].append([step, metrics, time.time()])
        value = self.value(t)
        self.searcher.report(t["number"], step, value)
        if self.asha and not t.get("stop_requested") and not self.interrupts:
            if self.asha.report(t["number"], step, value):
                t["stop_requested"] = True
                self.stop(t["number"])
            t["rungs"] = {str(r): v for r, v in self.asha.recorded(t["number"]).items()}

    def stop(self, number):
        proc, _ = self.running[number]
        threading.Thread(target=proc.terminate, args=(self.config["grace_s"],),
                         daemon=True).start()

    def on_exit(self, t, rc):
        proc, slot = self.running.pop(t["number"])
        proc.wait_reader()
        if t.get("stop_requested"):
            self.finish(t, "stopped", rc, [])
        elif self.interrupts:
            self.finish(t, "interrupted", rc, [])
        elif rc == 0:
            self.finish(t, "completed", rc, [])
        else:
            lines = scheduler.last_lines(proc.stderr_path)
            if not lines and self.config.get("trial_cluster"):
                lines = scheduler.cluster_last_lines(proc.stdout_path)
            lines = lines or scheduler.last_lines(proc.stdout_path)
            self.finish(t, "failed", rc, lines)
        t.pop("stop_requested", None)
        return slot

    def status_line(self):
        counts = {}
        for t in self.trials:
            counts[t["state"]] = counts.get(t["state"], 0) + 1
        return "%d/%d trials: %s" % (
            sum(counts.get(s, 0) for s in FINISHED), self.total,
            ", ".join("%d %s" % (n, s) for s, n in sorted(counts.items())))

    def run(self, slots):
        free = list(slots)
        last_draw = 0
        while True:
            while free and not self.interrupts:
                t = self.next_trial()
                if t is None:
                    break
                slot = free.pop(0)
                if not self.launch(t, slot):
                    free.insert(0, slot)
            if not self.running:
                break
            events = []
            try:
                events.append(self.queue.get(timeout=0.5))
                while True:
                    events.append(self.queue.get_nowait())
            except queue.Empty:
                pass
            for number, kind, payload in events:
                t = self.trials[number]
                if kind == "report":
                    self.on_report(t, payload)
                else:
                    free.append(self.on_exit(t, payload))
                    self.save()
            if self.interrupts == 1 and not getattr(self, "_stopping_all", False):
                self._stopping_all = True
                for n in list(self.running):
                    self.stop(n)
            if time.time() - last_draw > (0.5 if self.table.tty else 0):
                self.table.update(self.trials, self.status_line())
                last_draw = time.time()
        self.table.update(self.trials, self.status_line())
        self.save()


def load_or_start(args, program_argv, out):
    state_path = os.path.join(out, STATE_FILE)
    if args.resume:
        try:
            with open(state_path) as f:
                state = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise UsageError("--resume: cannot read %s: %s" % (state_path, e))
        return state["config"], state["trials"]
    if os.path.exists(state_path):
        raise UsageError("%s already holds a sweep: pass --resume, or another --out" % out)
    if not args.space:
        raise UsageError("--space=FILE is required")
    if args.trials is None or args.trials < 1:
        raise UsageError("--trials must be at least 1")
    if args.search not in search.SEARCHES:
        raise UsageError("unknown --search=%s (grid, random or tpe)" % args.search)
    sp = space_lib.parse_space(user_path(args.space))
    if args.search == "grid":
        sp.grid()  # raises for ranges
    if args.early_stop == "asha" and (args.min_resource < 1 or args.eta < 2):
        raise UsageError("--min_resource must be >= 1 and --eta >= 2")
    trial_cluster = scheduler.parse_trial_cluster(args.trial_cluster)
    config = {
        "space": sp.to_json(), "trials": args.trials, "search": args.search,
        "seed": args.seed, "metric": args.metric, "mode": args.mode,
        "program": resolve_program(program_argv), "early_stop": args.early_stop,
        "min_resource": args.min_resource, "eta": args.eta,
        "max_resource": args.max_resource, "grace_s": args.grace_s,
        "trial_dir_flag": args.trial_dir_flag, "trial_cluster": trial_cluster,
        "created": time.time(),
    }
    return config, []


def write_outputs(sweep, out, final):
    cfg = sweep.config
    best = report.best_trial(sweep.trials, cfg["metric"], cfg["mode"])
    report.write_results(out, sweep.space.names(), sweep.trials, best, cfg["metric"],
                         cfg["mode"])
    if not final:
        return best
    metric_names = sorted({k for t in sweep.trials for k in t.get("metrics", {})})
    hparams.write_sweep_hparams(out, sweep.space, sweep.trials, metric_names,
                                cfg.get("created", time.time()))
    try:
        report.plot(out)
    except ImportError as e:
        print("sweep: no plot (%s); install python3-matplotlib" % e, file=sys.stderr)
    return best


def main(argv):
    own, program_argv = split_argv(argv)
    try:
        args = make_parser().parse_args(own)
        if args.cluster:
            raise UsageError("--cluster: trials are not spread over other machines (see README, "
                             "Sweep hyperparameters); --trial_cluster=ps=P,workers=W runs each "
                             "trial as a sub-cluster on this one")
        out = user_path(args.out)
        config, trials = load_or_start(args, program_argv, out)
        if args.parallel < 1:
            raise UsageError("--parallel must be at least 1")
        devices = scheduler.parse_devices(args.devices)
        kind_count = scheduler.parse_trial_devices(args.trial_devices, devices)
        shape = config.get("trial_cluster")
        tasks = shape["ps"] + shape["workers"] if shape else 1
        slots = scheduler.make_slots(devices, kind_count, args.parallel, tasks)
        os.makedirs(out, exist_ok=True)
        sweep = Sweep(args, config, trials, out)
    except (UsageError, space_lib.SpaceError, search.SearchError,
            scheduler.DeviceError) as e:
        print("sweep: error: %s" % e, file=sys.stderr)
        return 1
    if len(slots) < args.parallel:
        print("sweep: %d slot(s) of %s:%d%s on --devices=%s; running %d at a time"
              % (len(slots), kind_count[0].upper(), kind_count[1],
                 " per task x %d tasks" % tasks if tasks > 1 else "", args.devices, len(slots)))
    print("sweep: %d trials (%s search), %d at a time on %s; writing %s"
          % (sweep.total, config["search"], len(slots),
             " ".join(s.name() for s in slots), out))
    if shape:
        print("sweep: each trial a sub-cluster of %d ps and %d worker task(s) on 127.0.0.1, "
              "%s thread(s) per task, through %s"
              % (shape["ps"], shape["workers"], slots[0].env().get("SLUICE_NUM_THREADS", "all"),
                 sweep.launcher))
    sweep.save()

    def on_sigint(signum, frame):
        sweep.interrupts += 1
        if sweep.interrupts > 1:  # a second Ctrl-C: no more grace
            for proc, _ in list(sweep.running.values()):
                try:
                    os.killpg(proc.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    signal.signal(signal.SIGINT, on_sigint)
    signal.signal(signal.SIGTERM, on_sigint)
    start = time.time()
    sweep.run(slots)
    if sweep.interrupts:
        write_outputs(sweep, out, final=False)
        print("sweep: interrupted; state saved in %s. Continue with: --out=%s --resume"
              % (os.path.join(out, STATE_FILE), args.out))
        return 130
    best = write_outputs(sweep, out, final=True)
    for t in sweep.trials:
        if t["state"] == "failed":
            last = t.get("last_lines") or ["(no output)"]
            print("sweep: trial %03d failed (exit status %s): %s"
                  % (t["number"], t.get("exit_status"), last[-1]))
    print("sweep: done in %.1f s: %s" % (time.time() - start, sweep.status_line()))
    print("sweep: wrote %s/results.csv, results.json, plot.svg, TensorBoard hparams "
          "(tensorboard --logdir %s)" % (out, out))
    if best is None:
        print("sweep: no trial finished with a value of %s" % config["metric"])
        return 1
    m = " ".join("%s=%s" % (k, report.fmt(v)) for k, v in sorted(best["metrics"].items()))
    p = " ".join("--%s=%s" % (k, space_lib.flag_value(v)) for k, v in best["params"].items())
    print("best: trial %03d (%s): %s  [%s]" % (best["number"], best["state"], m, p))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
