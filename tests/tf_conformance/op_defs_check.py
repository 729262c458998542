"""Compares Sluice's OpDefs (an OpList that dump_op_defs wrote) with
TensorFlow's for every op both have, and prints a JSON list of the
differences a TensorFlow-written graph would trip on:

  - an attr TensorFlow has that Sluice lacks (a graph that sets it fails);
  - an attr with a default in TensorFlow but none in Sluice, or another
    default (graphs TensorFlow writes leave out attrs equal to their
    defaults: stripped_default_attrs);
  - an attr only Sluice has, without a default (TensorFlow never sets it);
  - other input or output names (function bodies name outputs:
    "node:activations:0").

Run under a Python that has TensorFlow:  python3 op_defs_check.py OPS.pb
"""
import json
import sys

from tensorflow.core.framework import op_def_pb2
from tensorflow.python.framework import op_def_registry


def differences(sluice_ops):
    found = []
    for s in sluice_ops.op:
        t = op_def_registry.get(s.name)
        if t is None:
            continue  # Sluice's own op (_Send, _FusedMatMul's kin, ...)
        ours = {a.name: a for a in s.attr}
        theirs = {a.name: a for a in t.attr}
        for name, a in theirs.items():
            if name not in ours:
                found.append([s.name, name, "missing attr"])
            elif a.HasField("default_value") and not ours[name].HasField("default_value"):
                found.append([s.name, name, "no default"])
            elif a.HasField("default_value") and ours[name].default_value != a.default_value:
                found.append([s.name, name, "other default"])
        for name, a in ours.items():
            if name not in theirs and not a.HasField("default_value"):
                found.append([s.name, name, "own attr without default"])
        for kind in ("input_arg", "output_arg"):
            mine = [x.name for x in getattr(s, kind)]
            tf_names = [x.name for x in getattr(t, kind)]
            if mine != tf_names:
                found.append([s.name, kind, "%s, TensorFlow: %s" % (mine, tf_names)])
    return found


def main():
    ops = op_def_pb2.OpList()
    with open(sys.argv[1], "rb") as f:
        ops.ParseFromString(f.read())
    shared = sum(1 for s in ops.op if op_def_registry.get(s.name) is not None)
    json.dump(dict(shared=shared, differences=differences(ops)), sys.stdout)


if __name__ == "__main__":
    main()
