"""The hand-written TensorBoard encoding: CRC32C, TFRecord framing, varints
and the hparams summaries' layout."""

import os
import shutil
import struct
import tempfile
import unittest

from tools.sweep import hparams as h
from tools.sweep import space


class HparamsTest(unittest.TestCase):
    def test_crc32c_check_value(self):
        self.assertEqual(h.crc32c(b"123456789"), 0xE3069283)  # RFC 3720 check value

    def test_varints(self):
        self.assertEqual(h._varint(1), b"\x01")
        self.assertEqual(h._varint(300), b"\xac\x02")
        self.assertEqual(len(h._varint(-1)), 10)

    def test_null_tensor_is_an_empty_float_vector(self):
        # dtype DT_FLOAT (1), shape { dim { size 0 } }: 6 bytes, as TensorBoard writes it.
        self.assertEqual(h.NULL_TENSOR, b"\x08\x01\x12\x02\x12\x00")

    def test_event_files_are_framed_records(self):
        tmp = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        try:
            sp = space.parse_space_json('{"lr": {"loguniform": [0.001, 0.1]}, "opt": ["a", "b"]}')
            trials = [{"number": 0, "params": {"lr": 0.01, "opt": "a"}, "state": "completed",
                       "start": 1.0, "end": 2.0, "step": 2,
                       "history": [[1, {"loss": 0.5}, 1.5], [2, {"loss": 0.25}, 2.0]]}]
            h.write_sweep_hparams(tmp, sp, trials, ["loss"], 1.0)
            h.write_sweep_hparams(tmp, sp, trials, ["loss"], 1.0)  # replaces, not adds
            for d, count, tag in ((tmp, 2, b"_hparams_/experiment"),
                                  (os.path.join(tmp, "trial_000"), 5,
                                   b"_hparams_/session_end_info")):
                files = [f for f in os.listdir(d) if f.startswith("events.out.tfevents.")]
                self.assertEqual(len(files), 1)
                data = open(os.path.join(d, files[0]), "rb").read()
                records, i = [], 0
                while i < len(data):
                    (n,) = struct.unpack("<Q", data[i:i + 8])
                    self.assertEqual(struct.unpack("<I", data[i + 8:i + 12])[0],
                                     h.masked_crc(data[i:i + 8]))
                    rec = data[i + 12:i + 12 + n]
                    self.assertEqual(struct.unpack("<I", data[i + 12 + n:i + 16 + n])[0],
                                     h.masked_crc(rec))
                    records.append(rec)
                    i += 16 + n
                self.assertEqual(len(records), count)
                self.assertIn(b"brain.Event:2", records[0])
                self.assertIn(tag, records[-1])
                self.assertIn(b"hparams", records[-1])
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
