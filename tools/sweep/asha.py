"""Asynchronous successive halving (ASHA, Li et al. 2018) as a stopping rule.

Rungs sit at min_resource * eta**k steps (k = 0, 1, ...), below max_resource
when that is known. The first report of a trial at or past a rung records
its metric there; the trial is stopped when it is not among the best
max(1, n // eta) of the n trials that have reached that rung so far. Early
trials compare against fewer peers, which is what makes it asynchronous:
no trial waits for a rung to fill.

  asha = Asha(min_resource=100, eta=3, mode="min")
  if asha.report(trial=4, step=120, value=0.7): stop trial 4

Not thread-safe; the sweep's one loop calls it.
"""


class Asha:
    def __init__(self, min_resource, eta=3, mode="min", max_resource=None):
        if min_resource < 1 or eta < 2:
            raise ValueError("ASHA needs min_resource >= 1 and eta >= 2")
        self.min_resource, self.eta, self.mode = min_resource, eta, mode
        self.max_resource = max_resource
        self.rungs = {}  # rung step -> {trial: value}

    def rung_steps(self, up_to):
        r = self.min_resource
        while r <= up_to and (self.max_resource is None or r < self.max_resource):
            yield r
            r *= self.eta

    def record(self, trial, rung, value):
        """A value recorded before (for --resume); no decision."""
        self.rungs.setdefault(rung, {})[trial] = value

    def report(self, trial, step, value):
        """True when `trial` should stop at the rung this report reaches."""
        if value is None:
            return False
        stop = False
        for rung in self.rung_steps(step):
            seen = self.rungs.setdefault(rung, {})
            if trial in seen:
                continue
            seen[trial] = value
            stop = stop or not self._in_top(trial, seen)
        return stop

    def recorded(self, trial):
        return {r: v[trial] for r, v in self.rungs.items() if trial in v}

    def _in_top(self, trial, seen):
        sign = 1 if self.mode == "min" else -1
        # Ties go to the trial that got there first (lower rank).
        order = sorted(seen, key=lambda t: sign * seen[t])
        keep = max(1, len(seen) // self.eta)
        return order.index(trial) < keep
