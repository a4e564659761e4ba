"""Each raw series as the page shows it: a plot (an SVG image), a small table (one row, or cells
that are not numbers), or the reason it could not be plotted."""

import sys
import traceback
from dataclasses import dataclass

import plot_generic
import plot_special
from figure_text import page_text
from render import svg_data_uri

TABLE_ROWS = 12


@dataclass
class Item:
    series: object
    kind: str          # "plot" | "table" | "error"
    html: str
    markers: int = 0


def render(series, topo):
    if series.plottable():
        try:
            return _plot_item(series, topo)
        except Exception as e:  # one bad series must not lose the rest of the report
            print(f"memtopo report: {series.path}: cannot plot: {e}", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)
            return Item(series, "error", _error_html(series, f"cannot plot: {e}"))
    if series.problem:
        print(f"memtopo report: {series.path}: {series.problem}", file=sys.stderr)
        return Item(series, "error", _error_html(series, series.problem))
    return Item(series, "table", _table_html(series))


def _plot_item(series, topo):
    draw = plot_special.special_plot(series) or plot_generic.plot
    fig, markers = draw(series, topo)
    uri = svg_data_uri(fig)
    path = page_text(series.relative_path)
    rows = (f"{len(series.rows)} of {series.total_rows} rows (evenly spaced)" if series.total_rows > len(series.rows)
            else f"{len(series.rows)} rows")
    marks = f"; {markers} marker{'s' if markers != 1 else ''} at the probe's results" if markers else ""
    alt = page_text(f"plot of {series.relative_path}: {', '.join(series.columns)}")
    wide = ' class="wide"' if plot_special.is_wide(draw) else ""
    body = (f'<figure id="{_anchor(series)}"{wide}><img class="plot" data-series="{path}" alt="{alt}" src="{uri}">'
            f"<figcaption><code>{path}</code>: {rows}, columns {page_text(', '.join(series.columns))}"
            f"{marks}</figcaption></figure>")
    return Item(series, "plot", body, markers)


def _table_html(series):
    path = page_text(series.relative_path)
    if not series.rows and not series.text_rows:  # a header only: a line, not an empty table
        return (f'<figure id="{_anchor(series)}" class="small-table" data-table-series="{path}"><figcaption>'
                f"<code>{path}</code>: no rows (columns {page_text(', '.join(series.columns))})</figcaption></figure>")
    head = "".join(f"<th>{page_text(c)}</th>" for c in series.columns)
    body = "".join("<tr>" + "".join(f'<td class="num">{page_text(c)}</td>' for c in row) + "</tr>"
                   for row in series.text_rows[:TABLE_ROWS])
    more = series.total_rows - TABLE_ROWS
    tail = f"<p class='sub'>... {more} more rows</p>" if more > 0 else ""
    why = "one row" if len(series.rows) == 1 else "cells that are not numbers"
    return (f'<figure id="{_anchor(series)}" class="small-table" data-table-series="{path}"><table><tr>{head}</tr>'
            f"{body}</table>{tail}<figcaption><code>{path}</code>: a table ({why})</figcaption></figure>")


def _error_html(series, why):
    path = page_text(series.relative_path)
    return (f'<figure id="{_anchor(series)}" data-error-series="{path}"><div class="box error">'
            f"<code>{path}</code>: {page_text(why)}</div></figure>")


def _anchor(series):
    return "series-" + "".join(c if c.isalnum() else "-" for c in series.relative_path)
