"""Where the next trial's hyperparameters come from: grid, random or TPE.

  searcher = make_searcher("tpe", space, seed=1, mode="min")
  params = searcher.suggest(number)      # None once a grid is used up
  searcher.report(number, step, value)   # intermediate metric values
  searcher.tell(number, "completed", value)

Grid walks the product of the lists in order; random draws each trial's
values from its own seeded generator (trial i has the same values whatever
ran before it, so a resumed sweep gets the same ones). TPE is Optuna's
TPESampler (Tree-structured Parzen Estimator, seeded): a well-kept,
well-tested adaptive sampler we use instead of writing our own; Optuna is a
Debian package (python3-optuna). Early stopping is not Optuna's: see asha.py.
"""

import random
import warnings

SEARCHES = ("grid", "random", "tpe")


class SearchError(Exception):
    pass


class GridSearch:
    def __init__(self, space):
        self.points = space.grid()

    def size(self):
        return len(self.points)

    def suggest(self, number):
        return dict(self.points[number]) if number < len(self.points) else None

    def report(self, number, step, value):
        pass

    def tell(self, number, state, value):
        pass


class RandomSearch:
    def __init__(self, space, seed):
        self.space, self.seed = space, seed

    def size(self):
        return None

    def suggest(self, number):
        rng = random.Random("sluice-sweep/%d/%d" % (self.seed, number))
        return {p.name: p.sample(rng) for p in self.space.params}

    def report(self, number, step, value):
        pass

    def tell(self, number, state, value):
        pass


class TpeSearch:
    """Optuna's TPE through its ask-and-tell interface (we run the trials)."""

    def __init__(self, space, seed, mode):
        import optuna
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        self.optuna = optuna
        d = optuna.distributions
        self.dists = {}
        for p in space.params:
            if p.kind == "choice":
                self.dists[p.name] = d.CategoricalDistribution(p.values)
            elif p.kind == "int":
                self.dists[p.name] = d.IntDistribution(p.low, p.high)
            else:
                self.dists[p.name] = d.FloatDistribution(
                    p.low, p.high, log=p.kind == "loguniform")
        # constant_liar: trials still running count as bad guesses, so
        # parallel slots do not all try the same point.
        sampler = optuna.samplers.TPESampler(seed=seed, constant_liar=True)
        self.study = optuna.create_study(
            sampler=sampler, direction="minimize" if mode == "min" else "maximize")
        self.trials = {}

    def size(self):
        return None

    def add_finished(self, params, state, value):
        """A trial of an earlier run of this sweep (for --resume)."""
        ts = self.optuna.trial.TrialState
        st, v = self._state(state, value, ts)
        self.study.add_trial(self.optuna.trial.create_trial(
            params=params, distributions=self.dists, value=v, state=st))

    def suggest(self, number):
        trial = self.study.ask(self.dists)
        self.trials[number] = trial
        return dict(trial.params)

    def report(self, number, step, value):
        trial = self.trials.get(number)
        if trial is not None and value is not None:
            try:
                trial.report(value, step)
            except Exception:  # a repeated step: keep the first
                pass

    def tell(self, number, state, value):
        trial = self.trials.pop(number, None)
        if trial is None:
            return
        st, v = self._state(state, value, self.optuna.trial.TrialState)
        self.study.tell(trial, v, state=st)

    @staticmethod
    def _state(state, value, ts):
        if state == "completed" and value is not None:
            return ts.COMPLETE, value
        if state == "stopped":
            return ts.PRUNED, None
        return ts.FAIL, None


def make_searcher(kind, space, seed=0, mode="min"):
    """Raises SearchError for an unknown kind, SpaceError for a grid over ranges."""
    if kind == "grid":
        return GridSearch(space)
    if kind == "random":
        return RandomSearch(space, seed)
    if kind == "tpe":
        return TpeSearch(space, seed, mode)
    raise SearchError("unknown --search=%s (grid, random or tpe)" % kind)
