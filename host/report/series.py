"""The raw series of a run: DIR/<plugin>__<probe>/<series>.csv, first row the column names,
then numeric rows (docs/host.md, "Raw series")."""

import csv
import io
import math
import os
from dataclasses import dataclass, field

import topology

# Rows of one series the report reads at most (evenly spaced over a longer file): the slice
# map's grid of 132 SMs x 2048 lines whole; rows kept as text for a table: its first few.
MAX_ROWS = 1_000_000
TEXT_ROWS = 64


@dataclass
class Series:
    folder: str              # "plugin__probe"
    name: str                # "l1d-size-sweep" (file name without .csv)
    path: str
    columns: list = field(default_factory=list)
    rows: list = field(default_factory=list)     # lists of float (None where not a number)
    text_rows: list = field(default_factory=list)  # the first TEXT_ROWS rows' cells as written
    problem: str = ""        # why it cannot be read, if it cannot
    total_rows: int = 0      # rows in the file; more than len(rows) where a long series was sampled

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
    text = data.decode("utf-8", errors="replace")
    # A long series keeps every k-th row (MAX_ROWS at most): a 3-million-row file would take
    # gigabytes as lists of cells, and a plot shows no more.
    stride = max(1, math.ceil(text.count("\n") / MAX_ROWS))
    header, kept, ragged = None, [], False
    try:
        for row in csv.reader(io.StringIO(text, newline="")):
            if not row:
                continue
            if header is None:
                header = row
                continue
            ragged = ragged or len(row) != len(header)
            if series.total_rows % stride == 0:
                kept.append([_number(c) for c in row])
                if len(series.text_rows) < TEXT_ROWS:
                    series.text_rows.append(row)
            series.total_rows += 1
    except csv.Error as e:
        series.problem = f"not a CSV file: {e}"
        return series
    if header is None:
        series.problem = "empty file"
        return series
    series.columns = [c.strip() for c in header]
    series.rows = kept
    if ragged:
        series.problem = "rows with a different number of cells than the header"
    return series


def _number(cell):
    try:
        v = float(cell)
    except ValueError:
        return None
    return v if math.isfinite(v) else None
