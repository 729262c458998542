"""TensorBoard HParams data for a sweep, so the HParams tab compares trials.

Writes, with no TensorFlow or TensorBoard installed, the records the hparams
plugin reads (tensorboard/plugins/hparams/{api,plugin_data}.proto): the
experiment (hyperparameters and metrics) in OUT/, and per trial in
OUT/trial_NNN/ its session start (hyperparameter values), the metric values
as scalar summaries, and its session end (status). `tensorboard --logdir OUT`.

The protos are encoded by hand (a minimal, correct subset of the wire
format; `tensorboard` is not a Debian package, so it is not required); the
files are TFRecord event files like the C++ EventWriter's
(training/summary/event_writer.*). Each write replaces the previous file.
"""

import os
import socket
import struct
import time

# --- protobuf wire format ---------------------------------------------------


def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _key(field, wire):
    return _varint(field << 3 | wire)


def f_varint(field, n):
    return _key(field, 0) + _varint(n)


def f_double(field, x):
    return _key(field, 1) + struct.pack("<d", x)


def f_float(field, x):
    return _key(field, 5) + struct.pack("<f", x)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return _key(field, 2) + _varint(len(b)) + b


# google.protobuf.Value / ListValue
def pb_value(v):
    if isinstance(v, bool):
        return f_varint(4, int(v))
    if isinstance(v, (int, float)):
        return f_double(2, float(v))
    return f_bytes(3, str(v))


def pb_list_value(values):
    return b"".join(f_bytes(1, pb_value(v)) for v in values)


# tensorboard.hparams messages
DATA_TYPE = {"string": 1, "bool": 2, "float": 3}
# A trial stopped early ran as asked (the plugin has no "stopped" status).
STATUS = {"completed": 1, "stopped": 1, "failed": 2, "running": 3}


def hparam_info(name, kind, values=None, low=None, high=None):
    msg = f_bytes(1, name)
    if kind == "choice":
        if all(isinstance(v, bool) for v in values):
            t = "bool"
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            t = "float"
        else:
            t = "string"
            values = [str(v) for v in values]
        return msg + f_varint(4, DATA_TYPE[t]) + f_bytes(5, pb_list_value(values))
    interval = f_double(1, float(low)) + f_double(2, float(high))
    return msg + f_varint(4, DATA_TYPE["float"]) + f_bytes(6, interval)


def experiment(hparams, metrics, time_created):
    metric_infos = b"".join(f_bytes(5, f_bytes(1, f_bytes(1, "") + f_bytes(2, m)))
                            for m in metrics)
    return (f_double(3, time_created) + b"".join(f_bytes(4, h) for h in hparams) +
            metric_infos)


def session_start(params, group, start):
    entries = b"".join(f_bytes(1, f_bytes(1, k) + f_bytes(2, pb_value(v)))
                       for k, v in params.items())
    return entries + f_bytes(4, group) + f_double(5, start)


def session_end(state, end):
    return f_varint(1, STATUS.get(state, 0)) + f_double(2, end)


def plugin_data(which, payload):
    # HParamsPluginData: version 0, then experiment (2), start (3) or end (4).
    field = {"experiment": 2, "start": 3, "end": 4}[which]
    return f_varint(1, 0) + f_bytes(field, payload)


TAGS = {"experiment": "_hparams_/experiment", "start": "_hparams_/session_start_info",
        "end": "_hparams_/session_end_info"}
# An empty float tensor (DT_FLOAT, shape [0]): what the plugin stores as value.
NULL_TENSOR = f_varint(1, 1) + f_bytes(2, f_bytes(2, b""))


def hparams_summary(which, payload):
    metadata = f_bytes(1, f_bytes(1, "hparams") + f_bytes(2, plugin_data(which, payload)))
    value = f_bytes(1, TAGS[which]) + f_bytes(8, NULL_TENSOR) + f_bytes(9, metadata)
    return f_bytes(1, value)


def scalar_summary(tag, x):
    return f_bytes(1, f_bytes(1, tag) + f_float(2, x))


def event(wall_time, step, summary=None, file_version=None):
    msg = f_double(1, wall_time) + f_varint(2, step)
    if file_version is not None:
        msg += f_bytes(3, file_version)
    if summary is not None:
        msg += f_bytes(5, summary)
    return msg


# --- TFRecord framing ---------------------------------------------------------

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data):
    c = crc32c(data)
    return ((((c >> 15) | (c << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(data):
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc(length)) + data +
            struct.pack("<I", masked_crc(data)))


def write_events(directory, events, suffix="hparams"):
    """One events file with a file_version record first; returns its path."""
    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        if old.startswith("events.out.tfevents.") and old.endswith("." + suffix):
            os.remove(os.path.join(directory, old))
    now = time.time()
    path = os.path.join(directory, "events.out.tfevents.%d.%s.%s" %
                        (int(now), socket.gethostname(), suffix))
    with open(path, "wb") as f:
        f.write(tfrecord(event(now, 0, file_version="brain.Event:2")))
        for e in events:
            f.write(tfrecord(e))
    return path


# --- the sweep's data ---------------------------------------------------------


def write_sweep_hparams(out_dir, space, trials, metric_names, created):
    """Experiment in out_dir, each trial's session in its own directory."""
    infos = [hparam_info(p.name, p.kind, p.values, p.low, p.high) for p in space.params]
    write_events(out_dir, [event(created, 0, hparams_summary(
        "experiment", experiment(infos, metric_names, created)))])
    for t in trials:
        if t["state"] in ("pending",):
            continue
        name = "trial_%03d" % t["number"]
        start, end = t.get("start") or created, t.get("end") or time.time()
        evs = [event(start, 0, hparams_summary("start", session_start(t["params"], name, start)))]
        for entry in t.get("history", []):
            step, metrics, when = entry[0], entry[1], entry[2] if len(entry) > 2 else start
            for m in metric_names:
                v = metrics.get(m)
                if isinstance(v, (int, float)):
                    evs.append(event(when, step, scalar_summary(m, v)))
        evs.append(event(end, t.get("step") or 0,
                         hparams_summary("end", session_end(t["state"], end))))
        write_events(os.path.join(out_dir, name), evs)
