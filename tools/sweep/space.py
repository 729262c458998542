"""The search space of a sweep: one entry per program flag, read from JSON.

  {"learning_rate": {"loguniform": [1e-4, 1e-1]},
   "hidden": ["64", "128,128"],          # a list: grid values (categorical)
   "dropout": {"uniform": [0.0, 0.5]},
   "layers": {"int": [1, 4]}}            # inclusive integer range

parse_space() returns a Space or raises SpaceError with one line saying what
is wrong and where.
"""

import itertools
import json
import math


class SpaceError(Exception):
    pass


class Param:
    """One flag: kind is "choice", "uniform", "loguniform" or "int"."""

    def __init__(self, name, kind, values=None, low=None, high=None):
        self.name, self.kind = name, kind
        self.values, self.low, self.high = values, low, high

    def to_json(self):
        if self.kind == "choice":
            return list(self.values)
        return {self.kind: [self.low, self.high]}

    def sample(self, rng):
        """A value drawn with random.Random `rng`."""
        if self.kind == "choice":
            return self.values[rng.randrange(len(self.values))]
        if self.kind == "uniform":
            return rng.uniform(self.low, self.high)
        if self.kind == "loguniform":
            return math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        return rng.randint(self.low, self.high)


class Space:
    def __init__(self, params):
        self.params = params  # in the file's order

    def names(self):
        return [p.name for p in self.params]

    def grid(self):
        """Every combination of the list values, in order (first flag slowest).

        Raises SpaceError when a flag is a range (a grid needs lists)."""
        ranges = [p.name for p in self.params if p.kind != "choice"]
        if ranges:
            raise SpaceError(
                "grid search needs a list of values for every flag; "
                "%s %s a range (use --search=random or tpe)"
                % (", ".join(ranges), "is" if len(ranges) == 1 else "are"))
        names = self.names()
        return [dict(zip(names, combo))
                for combo in itertools.product(*[p.values for p in self.params])]

    def to_json(self):
        return {p.name: p.to_json() for p in self.params}


def _number(name, v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise SpaceError("flag %r: range bounds must be finite numbers, got %r" % (name, v))
    return v


def _param(name, spec):
    if not name or not isinstance(name, str) or name.startswith("-") or "=" in name:
        raise SpaceError("bad flag name %r (write it without dashes)" % (name,))
    if isinstance(spec, list):
        if not spec:
            raise SpaceError("flag %r: empty list of values" % name)
        for v in spec:
            if not isinstance(v, (str, int, float, bool)):
                raise SpaceError("flag %r: list values must be strings, numbers or "
                                 "booleans, got %r" % (name, v))
        return Param(name, "choice", values=list(spec))
    if not isinstance(spec, dict) or len(spec) != 1:
        raise SpaceError('flag %r: expected a list or one of {"uniform": [a, b]}, '
                         '{"loguniform": [a, b]}, {"int": [a, b]}, got %s'
                         % (name, json.dumps(spec)))
    (kind, bounds), = spec.items()
    if kind not in ("uniform", "loguniform", "int"):
        raise SpaceError("flag %r: unknown range kind %r (uniform, loguniform or int)"
                         % (name, kind))
    if not isinstance(bounds, list) or len(bounds) != 2:
        raise SpaceError("flag %r: %s needs [low, high], got %s"
                         % (name, kind, json.dumps(bounds)))
    low, high = (_number(name, b) for b in bounds)
    if kind == "int" and not all(isinstance(b, int) for b in bounds):
        raise SpaceError("flag %r: int range needs integer bounds, got %s"
                         % (name, json.dumps(bounds)))
    if kind == "loguniform" and low <= 0:
        raise SpaceError("flag %r: loguniform needs 0 < low, got %r" % (name, low))
    if low > high or (kind != "int" and low == high):
        raise SpaceError("flag %r: %s range needs low < high, got [%r, %r]"
                         % (name, kind, low, high))
    return Param(name, kind, low=low, high=high)


def parse_space_json(text, where="space"):
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpaceError("%s: not valid JSON: %s" % (where, e))
    if not isinstance(doc, dict) or not doc:
        raise SpaceError("%s: expected a JSON object with one entry per flag" % where)
    return Space([_param(name, spec) for name, spec in doc.items()])


def parse_space(path):
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        raise SpaceError("cannot read space file %s: %s" % (path, e.strerror))
    return parse_space_json(text, path)


def flag_value(v):
    """How a value is written on the command line (--name=value)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return str(v)
