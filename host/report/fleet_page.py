"""The fleet page (memtopo fleet --report): the table of every GPU, OK or the keys that differ,
and per model a plot of every key whose values spread over its GPUs, the flagged ones marked
(docs/fleet.md). It reads the JSON `memtopo fleet --format json` writes."""

import json

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from axes import set_axis
from figure_text import page_text, plain
from page_style import CSS, SCRIPT
from render import svg_data_uri

E = page_text


class FleetInputError(Exception):
    """A fleet file the page cannot use: exit 2 with the message."""


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            fleet = json.load(f)
    except (OSError, ValueError) as e:
        raise FleetInputError(f"{path}: not a fleet summary ({e}); memtopo fleet --format json writes one")
    if not isinstance(fleet, dict) or "gpus" not in fleet or "groups" not in fleet:
        raise FleetInputError(f"{path}: not a fleet summary (no gpus, no groups)")
    return fleet


def value_text(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return json.dumps(v) if not isinstance(v, str) else v


def finding_html(f):
    # A list judged by its worst element shows that element (fleet.json's "element").
    if f.get("element") is not None:
        text = (f"{f['key']}[{f['element']}]: {value_text(f['element_value'])} "
                f"(expected {value_text(f['element_expected'])}")
    else:
        text = f"{f['key']}: {value_text(f['value'])} (expected {value_text(f['expected'])}"
    if f.get("deviation_percent") is not None:
        text += f", {f['deviation_percent']:+.1f} %"
    if f["against"] == "reference":
        text += ", vs reference"
    if not f["flagged"]:
        text += f", {f.get('not_flagged') or 'varies'}: not flagged"
    css = "" if f["flagged"] else " class='varies'"
    return f"<div{css}>{E(text)})</div>"


def gpu_table(fleet):
    rows = []
    for g in fleet["gpus"]:
        findings = g["findings"]
        result = "FLAGGED" if g["flagged"] else "ok"
        cells = [E(g["host"]), E(g["device"]), E(g["uuid"]), f"<b>{result}</b>" if g["flagged"] else result]
        detail = "".join(finding_html(f) for f in findings)
        detail += "".join(f"<div class='state'>state: {E(w)}</div>" for w in g.get("state_warnings", []))
        rows.append("<tr" + (" class='flagged'" if g["flagged"] else "") + ">" +
                    "".join(f"<td>{c}</td>" for c in cells) + f"<td>{detail}</td></tr>")
    head = "".join(f"<th>{h}</th>" for h in ("host", "device", "uuid", "result", "keys that differ"))
    return f"<table class='fleet'><tr>{head}</tr>{''.join(rows)}</table>"


def series_plot(fleet, group, series):
    """Every GPU of the group on one axis, the median as a line, flagged GPUs in red."""
    members = group["members"]
    gpus = fleet["gpus"]
    flagged_here = {i for i in members if any(f["key"] == series["key"] and f["flagged"] for f in gpus[i]["findings"])}
    xs, ys, colours = [], [], []
    for x, (member, value) in enumerate(zip(members, series["values"])):
        if isinstance(value, (int, float)):
            xs.append(x)
            ys.append(value)
            colours.append("#c0392b" if member in flagged_here else "#2c6fbb")
    fig = Figure(figsize=(7.2, 2.6))
    ax = fig.subplots()
    ax.scatter(xs, ys, c=colours, s=22, zorder=3)
    ax.axhline(series["median"], color="#555", linewidth=1, linestyle="--", label="median")
    ax.set_title(plain(series["key"]))
    # The key's last part names its unit: the y axis in GB/s, KiB or cycles, never 1e11.
    set_axis(ax, "y", series["key"].rsplit(".", 1)[-1], ys + [series["median"]], log_ratio=float("inf"))
    ax.set_xlabel("GPU (in the table's order)")
    labels = [plain(f"{gpus[m]['host']} {gpus[m]['device']}") for m in members]
    if len(labels) <= 24:
        ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=7)
    else:
        ax.xaxis.set_major_locator(MaxNLocator(nbins=10, integer=True))
    ax.legend(loc="best", fontsize=7)
    return f"<figure><img class='plot' alt='{E(series['key'])}' src='{svg_data_uri(fig)}'></figure>"


def page(fleet, source):
    title = (f"memtopo fleet: {fleet['gpus_total']} GPUs, {fleet['flagged']} flagged "
             f"(tolerance {fleet['tolerance_percent']:g} %, spread factor {fleet['spread_factor']:g})")
    sections = []
    for group in fleet["groups"]:
        plots = "".join(series_plot(fleet, group, s) for s in group["series"])
        note = "" if plots else "<p class='sub'>no key spreads over these GPUs</p>"
        sections.append(f"<h2>{E(group['name'])}</h2><p class='sub'>{len(group['members'])} GPUs, "
                        f"{group['keys_compared']} keys compared</p>{note}<div class='plots'>{plots}</div>")
    style = CSS + "tr.flagged td { background: #fdecea; } .varies { color: #777; } .state { color: #8a5a00; }"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{E(title)}</title>'
            f"<style>{style}</style><script>{SCRIPT}</script></head><body><h1>{E(title)}</h1>"
            f"{gpu_table(fleet)}{''.join(sections)}</body></html>\n")
