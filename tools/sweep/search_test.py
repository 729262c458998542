"""Space parsing, the three searches and ASHA's stopping rule, in process."""

import json
import os
import tempfile
import unittest

from tools.sweep import asha
from tools.sweep import scheduler
from tools.sweep import search
from tools.sweep import space


def parse(doc):
    return space.parse_space_json(json.dumps(doc))


class SpaceTest(unittest.TestCase):
    def test_kinds(self):
        sp = parse({"lr": {"loguniform": [1e-4, 1e-1]}, "hidden": ["64", "128"],
                    "d": {"uniform": [0, 0.5]}, "n": {"int": [1, 4]}})
        self.assertEqual([p.kind for p in sp.params], ["loguniform", "choice", "uniform", "int"])
        self.assertEqual(sp.names(), ["lr", "hidden", "d", "n"])
        self.assertEqual(sp.params[0].low, 1e-4)

    def test_bad_inputs_each_say_what_is_wrong(self):
        cases = {
            "not json": "not valid JSON",
            "[1, 2]": "JSON object",
            "{}": "JSON object",
            '{"x": []}': "empty list",
            '{"x": {"uniform": [1, 0]}}': "low < high",
            '{"x": {"uniform": [1, 1]}}': "low < high",
            '{"x": {"loguniform": [0, 1]}}': "0 < low",
            '{"x": {"int": [1.5, 3]}}': "integer bounds",
            '{"x": {"normal": [0, 1]}}': "unknown range kind",
            '{"x": {"uniform": [0]}}': "needs [low, high]",
            '{"x": {"uniform": ["a", 1]}}': "finite numbers",
            '{"x": 3}': "expected a list",
            '{"--x": [1]}': "without dashes",
            '{"x": [{"a": 1}]}': "list values",
        }
        for text, message in cases.items():
            with self.assertRaises(space.SpaceError, msg=text) as e:
                space.parse_space_json(text)
            self.assertIn(message, str(e.exception), text)
            self.assertNotIn("\n", str(e.exception))

    def test_missing_file(self):
        with self.assertRaises(space.SpaceError) as e:
            space.parse_space("/nonexistent/space.json")
        self.assertIn("cannot read space file", str(e.exception))

    def test_flag_values(self):
        self.assertEqual(space.flag_value(True), "true")
        self.assertEqual(space.flag_value(0.001), "0.001")
        self.assertEqual(space.flag_value("128,128"), "128,128")


class SearchTest(unittest.TestCase):
    def test_grid_enumerates_the_product_in_order(self):
        sp = parse({"a": [1, 2, 3], "b": ["x", "y"]})
        g = search.make_searcher("grid", sp)
        got = [g.suggest(i) for i in range(7)]
        self.assertEqual(got[:6], [{"a": a, "b": b} for a in (1, 2, 3) for b in ("x", "y")])
        self.assertIsNone(got[6])
        self.assertEqual(g.size(), 6)

    def test_grid_refuses_ranges(self):
        with self.assertRaises(space.SpaceError) as e:
            search.make_searcher("grid", parse({"a": [1], "lr": {"uniform": [0, 1]}}))
        self.assertIn("lr is a range", str(e.exception))

    def test_random_is_reproducible_by_seed_and_in_range(self):
        sp = parse({"lr": {"loguniform": [1e-4, 1e-1]}, "n": {"int": [1, 4]},
                    "u": {"uniform": [-1, 1]}, "c": ["a", "b", "c"]})
        first = [search.make_searcher("random", sp, seed=7).suggest(i) for i in range(20)]
        again = [search.make_searcher("random", sp, seed=7).suggest(i) for i in range(20)]
        other = [search.make_searcher("random", sp, seed=8).suggest(i) for i in range(20)]
        self.assertEqual(first, again)
        self.assertNotEqual(first, other)
        for p in first:
            self.assertTrue(1e-4 <= p["lr"] <= 1e-1)
            self.assertIn(p["n"], (1, 2, 3, 4))
            self.assertIsInstance(p["n"], int)
            self.assertTrue(-1 <= p["u"] <= 1)
            self.assertIn(p["c"], ("a", "b", "c"))
        self.assertEqual(len({p["n"] for p in first}), 4)

    def test_tpe_runs_and_moves_towards_the_minimum(self):
        sp = parse({"x": {"uniform": [-10, 10]}, "c": ["good", "bad"]})
        s = search.make_searcher("tpe", sp, seed=3, mode="min")
        values = []
        for i in range(40):
            p = s.suggest(i)
            self.assertTrue(-10 <= p["x"] <= 10)
            v = (p["x"] - 2) ** 2 + (0 if p["c"] == "good" else 25)
            values.append(v)
            s.tell(i, "completed", v)
        # The last 20 guesses (after the 10 random start-up ones) beat the first 10.
        self.assertLess(sorted(values[20:])[10], sorted(values[:10])[5])
        self.assertLess(min(values), 1.0)

    def test_tpe_is_seeded(self):
        sp = parse({"x": {"uniform": [0, 1]}})
        runs = []
        for _ in range(2):
            s = search.make_searcher("tpe", sp, seed=5)
            runs.append([s.suggest(i)["x"] for i in range(3)])
        self.assertEqual(runs[0], runs[1])

    def test_tpe_takes_finished_trials_of_an_earlier_run(self):
        sp = parse({"x": {"uniform": [0, 1]}})
        s = search.make_searcher("tpe", sp, seed=5)
        s.add_finished({"x": 0.5}, "completed", 1.0)
        s.add_finished({"x": 0.25}, "stopped", None)
        s.add_finished({"x": 0.75}, "failed", None)
        self.assertEqual(len(s.study.trials), 3)
        self.assertIn("x", s.suggest(3))

    def test_unknown_search(self):
        with self.assertRaises(search.SearchError):
            search.make_searcher("bayes", parse({"a": [1]}))


class AshaTest(unittest.TestCase):
    def test_rungs(self):
        a = asha.Asha(min_resource=10, eta=3, max_resource=200)
        self.assertEqual(list(a.rung_steps(1000)), [10, 30, 90])

    def test_stops_the_worst_at_a_rung(self):
        a = asha.Asha(min_resource=10, eta=2, mode="min")
        self.assertFalse(a.report(0, 5, 1.0))   # below the first rung
        self.assertFalse(a.report(0, 10, 1.0))  # first at rung 10: continues
        self.assertTrue(a.report(1, 10, 2.0))   # n=2, keeps 1: the worse stops
        self.assertFalse(a.report(2, 12, 0.5))  # n=3, keeps 1: the best continues
        self.assertTrue(a.report(3, 10, 1.5))   # n=4, keeps 2 (0.5 and 1.0)
        self.assertFalse(a.report(4, 10, 0.9))  # n=5, keeps 2 (0.5 and 0.9)
        self.assertEqual(a.recorded(0), {10: 1.0})

    def test_max_mode(self):
        a = asha.Asha(min_resource=1, eta=2, mode="max")
        self.assertFalse(a.report(0, 1, 0.9))
        self.assertTrue(a.report(1, 1, 0.1))
        self.assertFalse(a.report(2, 1, 0.95))

    def test_a_report_past_several_rungs_records_each(self):
        a = asha.Asha(min_resource=2, eta=2)
        self.assertFalse(a.report(0, 9, 1.0))
        self.assertEqual(a.recorded(0), {2: 1.0, 4: 1.0, 8: 1.0})


class ReportLineTest(unittest.TestCase):
    def test_parses_what_sweep_report_prints(self):
        # The format of training/sweep_report_test.cc.
        self.assertEqual(
            scheduler.parse_report('SLUICE_SWEEP {"step": 3, "a\\"b": null, "loss": 0.25}'),
            {"step": 3, 'a"b': None, "loss": 0.25})

    def test_ignores_other_lines(self):
        for line in ("step 3: loss=1", "SLUICE_SWEEP {bad json", 'SLUICE_SWEEP {"loss": 1}',
                     'SLUICE_SWEEP [1]', 'xSLUICE_SWEEP {"step": 1}'):
            self.assertIsNone(scheduler.parse_report(line), line)


if __name__ == "__main__":
    unittest.main()
