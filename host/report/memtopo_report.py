#!/usr/bin/env python3
"""memtopo report: one self-contained HTML page of a topology file and the raw series behind it
(docs/report.md). `memtopo report` runs this script; it can also run alone:

    python3 memtopo_report.py TOPOLOGY [--raw-dir DIR] -o report.html

Exit status: 0 written; 3 written, with a box in place of each series that could not be read
or plotted (memtopo then replaces its output and exits 1); 1 another error, nothing written; 2
bad input (topology unreadable, --raw-dir not a folder, output folder missing). The page is
written to a temporary file beside the output and renamed over it: never half a report."""

import argparse
import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree or the install
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE, EXIT_WITH_BOXES = 0, 1, 2, 3


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="memtopo report", description=__doc__.split("\n")[0])
    parser.add_argument("topology", nargs="?", default="", help="topology TOML written by memtopo run")
    parser.add_argument("--fleet", default="", help="draw the fleet page of this memtopo fleet --format json file")
    parser.add_argument("--raw-dir", default="", help="the --raw-dir of that run (CSV series)")
    parser.add_argument("-o", "--output", required=True, help="HTML file to write")
    # Used by `memtopo report`, which writes the page to its real output itself.
    parser.add_argument("--shown-as", default="", help=argparse.SUPPRESS)
    parser.add_argument("--summary-file", default="", help=argparse.SUPPRESS)
    parser.add_argument("--picture-model", default="",
                        help="the drawing model memtopo draws the GPU from (memtopo report passes it)")
    parser.add_argument("--values-file", default="", help=argparse.SUPPRESS)
    parser.add_argument("--headline-file", default="",
                        help="the run's summary lines, one per element (memtopo report passes them)")
    return parser.parse_args(argv)


def check_paths(args):
    """The reason the paths cannot be used, or ""."""
    if args.raw_dir and not os.path.isdir(args.raw_dir):
        return f"--raw-dir {args.raw_dir}: not a folder; name the folder `memtopo run --raw-dir` wrote"
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):
        return f"-o {args.output}: the folder {out_dir} does not exist; create it or write elsewhere"
    return ""


def write_atomically(path, text):
    """Writes beside `path` and renames: a reader never sees a partial page."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def build(args):
    import html_page
    import items as items_mod
    import raw_identity
    import series as series_mod
    import topology

    topo = topology.load(args.topology)
    if args.raw_dir and (problem := raw_identity.mismatch(args.raw_dir, topo)):
        raise topology.InputError(problem)
    if args.values_file:
        import json
        import units
        with open(args.values_file, encoding="utf-8") as f:
            units.use_host_texts(json.load(f))
    found = series_mod.discover(args.raw_dir) if args.raw_dir else []
    start = time.monotonic()
    rendered = [items_mod.render(s, topo) for s in found]
    note = f" (plotted in {time.monotonic() - start:.1f} s)" if found else ""
    if not args.raw_dir:
        note += "; no --raw-dir given: values only"
    elif not raw_identity.named(args.raw_dir):
        note += "; the raw folder does not name the run that wrote it (no run.toml): its series are taken as this one's"
    return html_page.page(topo, rendered, note, picture(args) + headline(args)), rendered


def picture(args):
    """The GPU at a glance (the SVG of `memtopo draw`), or "" without a model."""
    if not args.picture_model:
        return ""
    import json
    import gpu_picture
    with open(args.picture_model, encoding="utf-8") as f:
        return gpu_picture.svg_element(json.load(f))


def headline(args):
    """The headline values: the summary `memtopo run` prints, an element a row, or ""."""
    if not args.headline_file:
        return ""
    import html_page
    with open(args.headline_file, encoding="utf-8") as f:
        return html_page.headline_table(f.read())


def fleet_main(args):
    import fleet_page
    try:
        fleet = fleet_page.load(args.fleet)
    except fleet_page.FleetInputError as e:
        print(f"memtopo fleet: {e}", file=sys.stderr)
        return EXIT_USAGE
    text = fleet_page.page(fleet, args.shown_as or args.output)
    plots = sum(len(g["series"]) for g in fleet["groups"])
    if not write_page(args, text):
        return EXIT_INCOMPLETE
    say(args, f"memtopo fleet: wrote {args.shown_as or args.output}: {fleet['gpus_total']} GPUs, {plots} plots")
    return EXIT_OK


def write_page(args, text):
    try:
        write_atomically(args.output, text)
        return True
    except OSError as e:
        print(f"memtopo report: cannot write {args.output}: {e.strerror}", file=sys.stderr)
        return False


def say(args, summary):
    """The one-line summary: to the file memtopo reads back, or to stdout when run alone."""
    if args.summary_file:
        with open(args.summary_file, "w", encoding="utf-8") as f:
            f.write(summary + "\n")
    else:
        print(summary)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    problem = check_paths(args)
    if problem:
        print(f"memtopo report: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if args.fleet:
        return fleet_main(args)
    if not args.topology:
        print("memtopo report: name the topology file (or --fleet FILE)", file=sys.stderr)
        return EXIT_USAGE
    import topology  # after the path checks: matplotlib is imported with the plots
    try:
        text, rendered = build(args)
    except topology.InputError as e:
        print(f"memtopo report: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not write_page(args, text):
        return EXIT_INCOMPLETE
    plots = sum(1 for i in rendered if i.kind == "plot")
    tables = sum(1 for i in rendered if i.kind == "table")
    errors = sum(1 for i in rendered if i.kind == "error")
    summary = (f"memtopo report: wrote {args.shown_as or args.output}: {len(rendered)} series, {plots} plots, "
               f"{tables} tables" + (f", {errors} not shown (see above)" if errors else ""))
    if not args.raw_dir:
        summary += " (no --raw-dir: values only, no plots)"
    say(args, summary)
    return EXIT_WITH_BOXES if errors else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
