"""The raw series of a run: DIR/<plugin>__<probe>/<series>.csv, first row the column names,
then numeric rows (docs/host.md, "Raw series")."""

import csv
import io
import math
import os
from dataclasses import dataclass, field

import topology


@dataclass
class Series:
    folder: str              # "plugin__probe"
    name: str                # "l1d-size-sweep" (file name without .csv)
    path: str
    columns: list = field(default_factory=list)
    rows: list = field(default_factory=list)     # lists of float (None where not a number)
    text_rows: list = field(default_factory=list)  # the cells as written
    problem: str = ""        # why it cannot be read, if it cannot

    @property
    def probe(self):
        """"plugin/probe" of the folder name."""
        return self.folder.replace("__", "/", 1)

    @property
    def relative_path(self):
        return f"{self.folder}/{self.name}.csv"

    def column(self, name):
        i = self.columns.index(name)
        return [r[i] for r in self.rows]

    def numeric(self):
        """Every cell of every row a finite number."""
        return bool(self.rows) and all(v is not None for r in self.rows for v in r)

    def plottable(self):
        """Two or more rows, every cell a number: a plot; anything else is shown as a table."""
        return not self.problem and len(self.rows) >= 2 and self.numeric()

    def varying(self, name):
        values = self.column(name)
        return min(values) != max(values)


def discover(raw_dir):
    """Every CSV under `raw_dir`, in folder and name order (nested folders included)."""
    found = []
    for parent, dirs, files in os.walk(raw_dir):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(".csv"):
                found.append(read(os.path.join(parent, f), raw_dir))
    return found


def read(path, raw_dir):
    rel_folder = os.path.relpath(os.path.dirname(path), raw_dir)
    folder = "" if rel_folder == "." else rel_folder.replace(os.sep, "/")
    series = Series(folder, os.path.basename(path)[:-4], path)
    try:
        data = topology.read_input_bytes(path, "a CSV series")
    except topology.InputError as e:
        series.problem = str(e)
        return series
    try:
        text = data.decode("utf-8", errors="replace")
        table = [row for row in csv.reader(io.StringIO(text, newline="")) if row]
    except csv.Error as e:
        series.problem = f"not a CSV file: {e}"
        return series
    if not table:
        series.problem = "empty file"
        return series
    series.columns = [c.strip() for c in table[0]]
    series.text_rows = table[1:]
    series.rows = [[_number(c) for c in row] for row in table[1:]]
    if any(len(r) != len(series.columns) for r in series.rows):
        series.problem = "rows with a different number of cells than the header"
    return series


def _number(cell):
    try:
        v = float(cell)
    except ValueError:
        return None
    return v if math.isfinite(v) else None
