"""What a sweep shows and writes: the live table, results.csv/json, plot.svg.

Also a small script: `python3 tools/sweep/report.py OUT` redraws
OUT/plot.svg from OUT/results.json (metric against each hyperparameter).
"""

import csv
import json
import math
import os
import sys
import tempfile


def fmt(v):
    if isinstance(v, float):
        return "%.4g" % v
    return str(v)


def atomic_write(path, text):
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


class Table:
    """The live table: redrawn in place on a terminal, else progress lines."""

    def __init__(self, names, metric, stream=sys.stdout):
        self.names, self.metric, self.stream = names, metric, stream
        self.tty = stream.isatty()
        self.drawn = 0
        self.last_state = {}

    def rows(self, trials):
        head = ["trial"] + self.names + ["step", self.metric, "state", "device"]
        rows = [head]
        for t in trials:
            m = t.get("metrics", {}).get(self.metric)
            rows.append(["%03d" % t["number"]] + [fmt(t["params"].get(n, "")) for n in self.names] +
                        [fmt(t.get("step", "")) if t.get("step") is not None else "",
                         fmt(m) if m is not None else "", t["state"], t.get("device") or ""])
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]

    def update(self, trials, status_line):
        if self.tty:
            lines = self.rows(trials) + [status_line]
            out = "\x1b[%dA" % self.drawn if self.drawn else ""
            out += "".join("\x1b[2K" + l + "\n" for l in lines)
            self.stream.write(out)
            self.stream.flush()
            self.drawn = len(lines)
            return
        # Not a terminal: a line per change of state.
        for t in trials:
            key = (t["state"], t.get("device"))
            if self.last_state.get(t["number"]) == key:
                continue
            self.last_state[t["number"]] = key
            m = t.get("metrics", {}).get(self.metric)
            params = " ".join("%s=%s" % (n, fmt(t["params"][n])) for n in self.names)
            extra = ""
            if t["state"] not in ("pending", "running"):
                extra = " step=%s %s=%s" % (t["step"] if t.get("step") is not None else "-",
                                            self.metric,
                                            fmt(m) if m is not None else "-")
            if t["state"] == "failed":
                extra += " exit=%s" % t.get("exit_status")
            self.stream.write("trial %03d %s on %s: %s%s\n" % (
                t["number"], t["state"], t.get("device") or "-", params, extra))
        self.stream.flush()


RESULT_KEYS = ["number", "state", "device", "duration_s", "exit_status", "step"]


def results(trials):
    return [{
        "trial": t["number"], "dir": "trial_%03d" % t["number"], "params": t["params"],
        "state": t["state"], "device": t.get("device"), "step": t.get("step"),
        "metrics": t.get("metrics", {}), "duration_s": t.get("duration_s"),
        "exit_status": t.get("exit_status"), "last_lines": t.get("last_lines", []),
    } for t in trials]


def write_results(out_dir, space_names, trials, best, metric, mode):
    rs = results(trials)
    atomic_write(os.path.join(out_dir, "results.json"), json.dumps(
        {"metric": metric, "mode": mode, "best_trial": best["number"] if best else None,
         "trials": rs}, indent=1) + "\n")
    metric_names = sorted({k for r in rs for k in r["metrics"] if k != "step"})
    head = (["trial"] + space_names + metric_names +
            ["state", "device", "step", "duration_s", "exit_status"])
    path = os.path.join(out_dir, "results.csv")
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(head)
        for r in rs:
            w.writerow([r["trial"]] + [r["params"].get(n, "") for n in space_names] +
                       [r["metrics"].get(m, "") for m in metric_names] +
                       [r["state"], r["device"] or "", r["step"] if r["step"] is not None else "",
                        "%.2f" % r["duration_s"] if r["duration_s"] is not None else "",
                        r["exit_status"] if r["exit_status"] is not None else ""])
    os.replace(path + ".tmp", path)


def best_trial(trials, metric, mode):
    """The best completed trial by its final metric (else the best stopped one)."""
    for states in (("completed",), ("stopped",)):
        done = [t for t in trials if t["state"] in states and
                isinstance(t.get("metrics", {}).get(metric), (int, float)) and
                not math.isnan(t["metrics"][metric])]
        if done:
            key = lambda t: t["metrics"][metric]
            return min(done, key=key) if mode == "min" else max(done, key=key)
    return None


def _category_key(c):
    try:
        return (0, float(c), c)
    except ValueError:
        return (1, 0.0, c)


def plot(out_dir, results_doc=None, filename="plot.svg"):
    """OUT/plot.svg: the final metric against each hyperparameter; returns its path.

    The file type follows filename's extension (svg, png, pdf)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if results_doc is None:
        with open(os.path.join(out_dir, "results.json")) as f:
            results_doc = json.load(f)
    metric, trials = results_doc["metric"], results_doc["trials"]
    names = []
    for t in trials:
        names += [n for n in t["params"] if n not in names]
    colors = {"completed": "tab:blue", "stopped": "tab:orange", "failed": "tab:red",
              "interrupted": "tab:gray"}
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(4 * max(1, len(names)), 3.6),
                             squeeze=False)
    ys = [t["metrics"].get(metric) for t in trials]
    ys = [y for y in ys if isinstance(y, (int, float)) and math.isfinite(y)]
    log_y = ys and min(ys) > 0 and max(ys) / min(ys) > 100
    for ax, name in zip(axes[0], names):
        seen = set()
        xs_all = [t["params"].get(name) for t in trials]
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs_all)
        # A few distinct values (a list in the space) read best as categories.
        numeric = numeric and len(set(xs_all)) > 6
        cats = sorted({str(x) for x in xs_all}, key=_category_key)
        for t in trials:
            y = t["metrics"].get(metric)
            if not isinstance(y, (int, float)):
                continue
            x = t["params"].get(name)
            x = x if numeric else cats.index(str(x))
            label = t["state"] if t["state"] not in seen else None
            seen.add(t["state"])
            ax.scatter([x], [y], color=colors.get(t["state"], "black"), label=label, s=24)
        if numeric and min(xs_all) > 0 and max(xs_all) / min(xs_all) > 50:
            ax.set_xscale("log")
        if not numeric:
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels(cats, rotation=30, ha="right")
            ax.set_xlim(-0.5, len(cats) - 0.5)
        if log_y:
            ax.set_yscale("log")
        ax.set_xlabel(name)
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize="small")
    fig.suptitle("%s (final, per trial) against each hyperparameter" % metric)
    fig.tight_layout()
    path = os.path.join(out_dir, filename)
    fig.savefig(path)
    plt.close(fig)
    return path


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: report.py OUT  (a sweep's output directory)")
    print(plot(sys.argv[1]))
