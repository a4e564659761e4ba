"""The Python package host/python/memtopo (docs/python.md) against the memtopo executable:
the same values from the TOML and from `memtopo export --format json`, the same rows as
`memtopo export --format csv`, clear errors. With --pandas, only the frames: exit 77 (skipped)
when pandas is not installed."""

import argparse
import csv
import io
import math
import os
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
        self.assertEqual(memtopo.unit_of_key("throughput.l2_read_bytes_per_second"), "B/s")
        self.assertEqual(memtopo.unit_of_key("throughput.dram_read_fraction_of_theoretical"), "fraction")
        self.assertEqual(memtopo.unit_of_key("l1d.size_carveout_percent"), "%")
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


class Hostile(unittest.TestCase):
    """load() refuses what the C++ reader refuses, with ValueError (issue 50, item 7)."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.d = Path(self.dir.name)

    def tearDown(self):
        self.dir.cleanup()

    def refused(self, path, pattern):
        with self.assertRaisesRegex(ValueError, pattern):
            memtopo.load(path)

    def test_not_a_regular_file(self):
        fifo = self.d / "fifo.toml"
        os.mkfifo(fifo)
        self.refused(fifo, "a FIFO")  # no writer: an open would block forever
        self.refused(self.d, "a folder")
        self.refused("/dev/null", "a device")
        link = self.d / "zero.toml"
        link.symlink_to("/dev/zero")
        self.refused(link, "a device")  # never read until memory runs out
        self.refused(self.d / "missing.toml", "cannot read")

    def test_too_large(self):
        big = self.d / "big.toml"
        with open(big, "wb") as f:
            f.truncate(memtopo.MAX_FILE_BYTES + 1)
        self.refused(big, "over the")

    def test_non_tables_name_the_key_path(self):
        cases = {"a.json": ("[1,2]", "the document: a list"), "b.json": ("null", "the document: a null"),
                 "c.toml": ("provenance = 3\n[meta]\nschema_version = 1\n", r"\[provenance\]: a int"),
                 "d.toml": ("[meta]\nschema_version = 1\n[provenance]\nl2 = [1]\n", r"\[provenance.l2\]: a list"),
                 "e.toml": ("[meta]\nschema_version = 1\n[provenance.l2]\nsize_bytes = 'x'\n",
                            r"provenance.l2.size_bytes: a str"),
                 "f.toml": ("meta = 'x'\n", r"\[meta\]: a str"),
                 "g.toml": ("[meta]\n[probes]\n'a/b' = 1\n", r'\[probes."a/b"\]: a int')}
        for name, (text, pattern) in cases.items():
            (self.d / name).write_text(text)
            if name.endswith(".json"):  # JSON by content only from a '{': told so here
                with self.assertRaisesRegex(ValueError, pattern):
                    memtopo.loads(text, "json", name)
                self.refused(self.d / name, "not valid TOML")  # as memtopo reads it
            else:
                self.refused(self.d / name, pattern)

    def test_deep_nesting(self):
        (self.d / "deep.json").write_text('{"x": ' + "[" * 50000 + "]" * 50000 + "}")
        self.refused(self.d / "deep.json", "nest")
        (self.d / "deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
        self.refused(self.d / "deep.toml", "nest")
        (self.d / "tables.toml").write_text("[meta]\n[" + ".".join(["a"] * 2000) + "]\n")
        self.refused(self.d / "tables.toml", "nest")

    def test_not_utf8(self):
        (self.d / "latin.toml").write_bytes(b"[meta]\nname = '\xe9'\n")
        self.refused(self.d / "latin.toml", "not UTF-8")


class Agreement(unittest.TestCase):
    """The Python reader and memtopo judge the shared corpus alike (issue 65): each file under
    reader-corpus/good read by both, each under reader-corpus/bad refused by both."""

    def test_corpus(self):
        corpus = Path(ARGS.source_dir) / "tests" / "python" / "reader-corpus"
        for verdict in ("good", "bad"):
            files = sorted((corpus / verdict).iterdir())
            self.assertGreater(len(files), 4)
            for f in files:
                with self.subTest(file=f.name):
                    try:
                        memtopo.load(f)
                        python_reads = True
                    except ValueError:
                        python_reads = False
                    r = subprocess.run([ARGS.memtopo, "validate", str(f)], capture_output=True, text=True)
                    self.assertEqual(python_reads, verdict == "good", f"Python: {f}")
                    self.assertEqual(r.returncode == 0, verdict == "good", f"memtopo validate {f}: {r.stderr}")

    def test_format_by_content(self):
        self.assertTrue(memtopo.is_json("\ufeff \n{}"))
        self.assertFalse(memtopo.is_json("[meta]\n"))
        with self.assertRaisesRegex(ValueError, "NaN"):
            memtopo.loads('{"meta": {}, "l2": {"size_bytes": NaN}}')
        with self.assertRaisesRegex(ValueError, "/l2/size_bytes: nan is not a finite number"):
            memtopo.loads("[meta]\n[l2]\nsize_bytes = nan\n")


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
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(Hostile))
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(Agreement))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
