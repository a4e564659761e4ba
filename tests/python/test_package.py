"""The Python package host/python/memtopo (docs/python.md) against the memtopo executable:
the same values from the TOML and from `memtopo export --format json`, the same rows as
`memtopo export --format csv`, clear errors. With --pandas, only the frames: exit 77 (skipped)
when pandas is not installed."""

import argparse
import csv
import io
import math
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ARGS = None


def export(fmt: str, topology: Path) -> str:
    r = subprocess.run([ARGS.memtopo, "export", "--format", fmt, str(topology)], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"memtopo export --format {fmt}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(float(a), float(b), rel_tol=0, abs_tol=0) or float(a) == float(b)
    return a == b


class Package(unittest.TestCase):
    def setUp(self):
        self.h100 = Path(ARGS.source_dir) / "tests" / "report" / "inputs" / "h100" / "topology.toml"

    def test_values_provenance_units(self):
        t = memtopo.load(self.h100)
        self.assertEqual(t.meta["schema_version"], 1)
        self.assertIn("l2", t.elements)
        self.assertNotIn("provenance", t.elements)
        self.assertEqual(t["l2.size_bytes"], t.tables["l2"]["size_bytes"])
        self.assertEqual(t.provenance("l2.size_bytes")["probe"], t.tables["provenance"]["l2"]["size_bytes"]["probe"])
        self.assertEqual(t.unit("l2.latency_cycles"), "cycles")
        self.assertEqual(memtopo.unit_of_key("l1d.sets"), "")
        self.assertIsNone(t.value("l2.no_such_key"))
        with self.assertRaises(KeyError):
            t["l2.no_such_key"]

    def test_json_form_has_the_same_values(self):
        t = memtopo.load(self.h100)
        with tempfile.TemporaryDirectory() as d:
            j = Path(d) / "t.json"
            j.write_text(export("json", self.h100))
            u = memtopo.load(j)
        self.assertEqual(t.keys(), u.keys())
        for k in t.keys():
            a, b = t[k], u[k]
            if isinstance(a, list):
                self.assertEqual(len(a), len(b), k)
                self.assertTrue(all(same(x, y) for x, y in zip(a, b)), k)
            else:
                self.assertTrue(same(a, b), k)

    def test_rows_are_the_csv_export(self):
        t = memtopo.load(self.h100)
        table = list(csv.DictReader(io.StringIO(export("csv", self.h100))))
        self.assertEqual(tuple(table[0].keys()), memtopo.ROW_FIELDS)
        rows = t.rows()
        self.assertEqual(len(rows), len(table))
        theirs_by_key = {(r["element"], r["key"]): r for r in table}
        for ours in rows:
            theirs = theirs_by_key[(ours["element"], ours["key"])]
            for f in ("element", "key", "unit", "bound", "probe", "note"):
                self.assertEqual(str(ours[f]), theirs[f], (ours["key"], f))
            value = ours["value"]
            parts = value if isinstance(value, list) else [value]
            text = theirs["value"].split(";") if isinstance(value, list) else [theirs["value"]]
            for p, s in zip(parts, text):
                if isinstance(p, bool):
                    self.assertEqual(s, "true" if p else "false")
                elif isinstance(p, (int, float)):
                    self.assertEqual(float(s), float(p), ours["key"])
                else:
                    self.assertEqual(s.lstrip("'"), str(p), ours["key"])

    def test_not_a_topology(self):
        with self.assertRaisesRegex(ValueError, r"no \[meta\] table"):
            memtopo.load(Path(ARGS.source_dir) / "examples" / "devices" / "kepler-like.toml")
        with tempfile.TemporaryDirectory() as d:
            bad = Path(d) / "bad.toml"
            bad.write_text("[meta\n")
            with self.assertRaisesRegex(ValueError, "not valid TOML"):
                memtopo.load(bad)


class Frames(unittest.TestCase):
    def test_two_topologies_in_one_frame(self):
        h100 = Path(ARGS.source_dir) / "tests" / "report" / "inputs" / "h100" / "topology.toml"
        a = memtopo.load(h100)
        frame = memtopo.to_frame([a, a])
        self.assertEqual(len(frame), 2 * len(a.rows()))
        self.assertEqual(list(frame.columns), ["source", "gpu", "uuid", *memtopo.ROW_FIELDS])
        size = frame[(frame.element == "l2") & (frame.key == "size_bytes")]["value"]
        self.assertEqual(list(size), [a["l2.size_bytes"]] * 2)
        # docs/python.md's side-by-side example, on two runs.
        b = memtopo.load(Path(ARGS.source_dir) / "tests" / "sim" / "measured" / "h100-sxm.toml")
        wide = memtopo.to_frame([a, b]).pivot(index=["element", "key"], columns="source", values="value")
        self.assertEqual(wide.loc[("l2", "size_bytes"), str(h100)], a["l2.size_bytes"])
        self.assertEqual(wide.loc[("l2", "size_bytes"), b.source], b["l2.size_bytes"])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--memtopo", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--pandas", action="store_true")
    ARGS, rest = parser.parse_known_args()
    sys.path.insert(0, str(Path(ARGS.source_dir) / "host" / "python"))
    import memtopo  # noqa: E402  (from the checkout, not an installed copy)

    if ARGS.pandas:
        try:
            import pandas  # noqa: F401
        except ImportError:
            print("SKIPPED: pandas is not installed (pip install 'memtopo[pandas]')")
            sys.exit(77)
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Frames)
    else:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(Package)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
