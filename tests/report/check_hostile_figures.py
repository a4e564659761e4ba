#!/usr/bin/env python3
"""Hostile figures (issue 50). Names are not matplotlib math: a device, host or series name with
`$` is drawn as written by every script that puts text from the data on a figure
(host/report/figure_text.py), and `memtopo draw -o F.svg`, `memtopo report` and `memtopo fleet
--report` of a device named `GPU $\\frac{a}$ x` succeed; control characters and HTML in a name
reach a figure or a page as escapes, and report reads the JSON form (issue 65). A picture of 20,000 GPCs is of bounded
size and says what it did not draw. Usage: check_hostile_figures.py --memtopo EXE --source-dir
DIR. Exit 77 (skipped) without matplotlib."""

import argparse
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from need_module import need  # noqa: E402

need("matplotlib")

ARGS = None
DOLLARS = "A $100 GPU costs $5 now"
BROKEN_MATH = r"GPU $\frac{a}$ x"
# A line break, a colour, a bell, a carriage return, HTML and a right-to-left override.
CONTROLS = "H100\n-opt 99\x1b[31mRED\x07\r<script>x</script>|pipe\u202eexe"
DRIVER = "580\x1b]0;title\x07<b>bold</b>&"


def svgs_of(html):
    """The text of every SVG a page embeds, inline or as a base64 data URI."""
    out = [html]
    for b64 in re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", html):
        out.append(base64.b64decode(b64).decode("utf-8"))
    return "\n".join(out)


def toml_string(value):
    """A TOML basic string: backslash and quote escaped, control characters as \\uXXXX."""
    body = value.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in body) + '"'


def raw_controls(text):
    """Control characters (but tab, line feed, carriage return as the format's own) and U+202E."""
    return [c for c in text if (ord(c) < 0x20 and c not in "\t\n\r") or ord(c) == 0x7F or c == "\u202e"]


def with_name(text, device=None, host=None):
    """The H100 run with another device name or host (a function as replacement: re.sub would
    read the name's backslashes)."""
    if device is not None:
        text = re.sub(r'(?m)^name = "NVIDIA H100 80GB HBM3"$', lambda _: "name = " + toml_string(device), text, count=1)
    if host is not None:
        text = re.sub(r'(?m)^host = "vm"$', lambda _: "host = " + toml_string(host), text, count=1)
    return text


class Plain(unittest.TestCase):
    def test_escaping_restores_the_text(self):
        from figure_text import plain
        from matplotlib.figure import Figure
        from render import svg_data_uri
        for s in (DOLLARS, BROKEN_MATH, "a\\$b", "$", "no dollars"):
            fig = Figure()
            fig.subplots().set_title(plain(s))
            self.assertIn(s, svgs_of(svg_data_uri(fig)), s)  # literal, dollars kept

    def test_controls_are_shown_as_escapes(self):
        from figure_text import page_text, plain, visible
        self.assertEqual(visible("a\nb\x1b\x07\r\u202ec\x9b"), "a\\x0ab\\x1b\\x07\\x0d\\u202ec\\u009b")
        self.assertEqual(plain("$\x1b"), "\\$\\x1b")
        self.assertEqual(page_text("<b>\x07</b>&"), "&lt;b&gt;\\x07&lt;/b&gt;&amp;")

    def test_long_series_sampled(self):
        """A raw series past series.MAX_ROWS rows is read as at most that many evenly spaced
        rows, the total kept for the caption (issue 65: 3 M rows took 2 GB)."""
        import series
        most = series.MAX_ROWS
        series.MAX_ROWS = 100_000  # the rule at a tenth of the size, for a quick test
        self.addCleanup(setattr, series, "MAX_ROWS", most)
        with tempfile.TemporaryDirectory() as d:
            folder = os.path.join(d, "p__q")
            os.mkdir(folder)
            path = os.path.join(folder, "long.csv")
            with open(path, "w", encoding="utf-8") as f:
                f.write("x,y\n" + "".join(f"{i},{2 * i}\n" for i in range(250_000)))
            s = series.read(path, d)
            self.assertEqual(s.total_rows, 250_000)
            self.assertLessEqual(len(s.rows), series.MAX_ROWS)
            self.assertGreater(len(s.rows), series.MAX_ROWS // 2)
            self.assertEqual(s.rows[1][0] - s.rows[0][0], 3.0)  # every third row
            self.assertTrue(s.plottable())
            self.assertEqual(len(s.text_rows), series.TEXT_ROWS)

    def test_fleet_plot_names(self):
        import fleet_page
        fleet = {"gpus": [{"host": DOLLARS, "device": BROKEN_MATH, "findings": []}]}
        html = fleet_page.series_plot(fleet, {"members": [0]}, {"key": "l2.$x$", "values": [1.0], "median": 1.0})
        text = svgs_of(html)
        self.assertIn(f"{DOLLARS} {BROKEN_MATH}", text)
        self.assertIn("l2.$x$", text)


class Commands(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="memtopo-figure-text-")
        src = os.path.join(ARGS.source_dir, "tests", "report", "inputs", "h100", "topology.toml")
        with open(src, encoding="utf-8") as f:
            self.h100 = f.read()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def memtopo(self, *args):
        r = subprocess.run([ARGS.memtopo, *args], capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 0, f"memtopo {' '.join(args)}: {r.stderr}")
        return r

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_draw_and_report(self):
        for device in (DOLLARS, BROKEN_MATH):
            topo = self.write("t.toml", with_name(self.h100, device=device))
            svg = os.path.join(self.dir, "gpu.svg")
            self.memtopo("draw", topo, "-o", svg)
            with open(svg, encoding="utf-8") as f:
                self.assertIn(device, f.read())
            page = os.path.join(self.dir, "page.html")
            self.memtopo("report", topo, "-o", page)
            with open(page, encoding="utf-8") as f:
                self.assertIn(device, svgs_of(f.read()))

    def test_controls_in_names(self):
        """A device name and a driver string with control characters and HTML (issue 65): the
        SVG stays well-formed XML and the pages carry them as escapes, never raw."""
        from xml.dom import minidom
        text = with_name(self.h100, device=CONTROLS, host=CONTROLS)
        text = text.replace("[device]\n", "[meta.gpu_state]\nsource = \"nvml\"\nnvidia_driver_version = " +
                            toml_string(DRIVER) + "\n\n[device]\n", 1)
        topo = self.write("t.toml", text)
        svg = os.path.join(self.dir, "gpu.svg")
        self.memtopo("draw", topo, "-o", svg)
        with open(svg, encoding="utf-8") as f:
            picture = f.read()
        minidom.parseString(picture)  # raises on a character XML does not allow
        self.assertEqual(raw_controls(picture), [])
        self.assertIn("\\x1b[31mRED", picture)
        page = os.path.join(self.dir, "page.html")
        self.memtopo("report", topo, "-o", page)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertEqual(raw_controls(svgs_of(html)), [])
        self.assertNotIn("<script>x", html)
        self.assertNotIn("<b>bold", html)
        fleet = os.path.join(self.dir, "fleet")
        os.mkdir(fleet)
        self.write(os.path.join("fleet", "a.toml"), text)
        self.write(os.path.join("fleet", "b.toml"), self.h100.replace("GPU-", "GPU-1", 1))
        page = os.path.join(self.dir, "fleet.html")
        r = subprocess.run([ARGS.memtopo, "fleet", "--report", "-o", page, fleet], capture_output=True, text=True,
                           timeout=600)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertEqual(raw_controls(svgs_of(html)), [])
        self.assertNotIn("<script>x", html)

    def test_report_of_json_form(self):
        """report reads a topology's JSON form, told apart by content as every command does
        (issue 65: "TOML syntax error at line 1"), under any name."""
        topo = self.write("h100.toml", self.h100)
        as_json = os.path.join(self.dir, "h100.JSON")
        self.memtopo("export", "--format", "json", "-o", as_json, topo)
        page = os.path.join(self.dir, "page.html")
        self.memtopo("report", as_json, "-o", page)
        with open(page, encoding="utf-8") as f:
            self.assertIn("NVIDIA H100 80GB HBM3", f.read())

    def test_bad_series_are_boxes(self):
        """An empty and a ragged CSV under --raw-dir: the page is written with a box saying why
        for each, the good series plotted, and memtopo report exits 1 (issue 65)."""
        topo = self.write("h100.toml", self.h100)
        raw = os.path.join(self.dir, "raw", "data-cache__l2-size")
        os.makedirs(raw)
        self.write(os.path.join(raw, "good.csv"), "footprint_bytes,cycles\n1,2\n2,3\n3,5\n4,8\n")
        self.write(os.path.join(raw, "empty.csv"), "")
        self.write(os.path.join(raw, "ragged.csv"), "a,b\n1,2\n2\n3,5,7\n")
        page = os.path.join(self.dir, "page.html")
        r = subprocess.run([ARGS.memtopo, "report", topo, "--raw-dir", os.path.join(self.dir, "raw"), "-o", page],
                           capture_output=True, text=True, timeout=600)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("2 not shown", r.stdout + r.stderr)
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertIn("empty file", html)
        self.assertIn("rows with a different number of cells than the header", html)
        self.assertIn("good", html)

    def test_draw_h100_picture_holds_the_levels(self):
        """memtopo draw -o F.svg / F.png of the H100 run (issue 53, item 4): one SRAM with its
        paths, the L2 per partition and in all, rates, the ladder in ns, TLB, loads in flight,
        the SMs one by one, identity and a legend."""
        topo = self.write("h100.toml", self.h100)
        svg, png = os.path.join(self.dir, "h100.svg"), os.path.join(self.dir, "h100.png")
        self.memtopo("draw", topo, "-o", svg)
        self.memtopo("draw", topo, "-o", png)
        with open(svg, encoding="utf-8") as f:
            picture = f.read()
        for text in ("SRAM", "one storage: L1 data, texture, read-only and shared memory", "carveout 9 settings",
                     "2 partitions, API 50 MiB in all", "partition 0", "25 MiB, 66 SMs near",
                     "29.45 TB/s in all", "read 12.33 TB/s", "95 % of 3.35 TB/s", "32.0 cyc = 16.2 ns",
                     "280.4 cyc = 141.6 ns", "576.5 cyc = 291.2 ns", "reach 65.2 GiB", "loads in flight",
                     "L2 partition", "GPC 7: 18 SMs", "UUID GPU-2de06feb-a3d5-24a0-88a9-70e856c87a05",
                     "CUDA driver 13.0", "legend", "a path into it", "DSMEM"):
            self.assertIn(text, picture)
        # Every SM a box of its own, in its GPC (tests/report/check_picture_nesting.py checks where).
        self.assertEqual(len(set(re.findall(r'<g id="sm-(\d+)">', picture))), 132)
        self.assertIn("bandwidths", picture)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_draw_20000_gpcs(self):
        counts = ", ".join(["1"] * 20000)
        text = re.sub(r"(?s)\n\[gpc\]\n.*?\n\[", f"\n[gpc]\ncount = 20000\nsm_counts = [{counts}]\n\n[", self.h100, count=1)
        topo = self.write("gpcs.toml", text)
        svg = os.path.join(self.dir, "gpcs.svg")
        self.memtopo("draw", topo, "-o", svg)
        self.assertLess(os.path.getsize(svg), 400_000)  # 12 MB before; the H100's picture is ~60 KB
        with open(svg, encoding="utf-8") as f:
            picture = f.read()
        self.assertIn("more GPCs, not drawn", picture)
        self.assertIn("(20000 in all)", picture)

    def test_fleet_report(self):
        fleet = os.path.join(self.dir, "fleet")
        os.mkdir(fleet)
        for k, host in enumerate((DOLLARS, BROKEN_MATH)):
            text = with_name(self.h100, device=BROKEN_MATH, host=host)
            self.write(os.path.join("fleet", f"gpu{k}.toml"), text.replace("GPU-", f"GPU-{k}", 1))
        page = os.path.join(self.dir, "fleet.html")
        r = subprocess.run([ARGS.memtopo, "fleet", "--report", "-o", page, fleet], capture_output=True, text=True,
                           timeout=600)
        self.assertIn(r.returncode, (0, 1), r.stderr)  # 1: a GPU flagged, still a page
        with open(page, encoding="utf-8") as f:
            self.assertIn("memtopo fleet", f.read())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--memtopo", required=True)
    parser.add_argument("--source-dir", required=True)
    ARGS, rest = parser.parse_known_args()
    sys.path.insert(0, os.path.join(ARGS.source_dir, "host", "report"))
    suite = unittest.TestSuite()
    for case in (Plain, Commands):
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(case))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(0 if result.wasSuccessful() else 1)
