"""The page: header with the device and the run, a table of contents, one section per element
(values, provenance, probes that could not settle a value, the plots of their series), the
probes, and the series no element claims."""

import json
import re
from datetime import datetime

import value_matrix
from figure_text import page_text
from page_style import CSS, SCRIPT
from topology import probe_elements
from units import exact_text, short_number, shown_value

BOUND_SIGN = {"at_least": "≥", "at_most": "≤", "exact": "="}
E = page_text


def page(topo, items, elapsed_note="", picture=""):
    placed, other = place_items(topo, items)
    sections = [element_section(topo, e, placed.get(e, []), items) for e in topo.elements]
    sections.append(probes_section(topo, items))
    if other:
        sections.append(other_section(other))
    title = f"memtopo report: {topo.device_value('name', 'unknown device')}"
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{E(title)}</title>'
            f"<style>{CSS}</style><script>{SCRIPT}</script></head><body>"
            f"{header(topo, items, elapsed_note, picture_block(picture))}{toc(topo, bool(other))}"
            f"{''.join(sections)}</body></html>\n")


def picture_block(svg):
    """The GPU at a glance, as `memtopo draw -o gpu.svg` draws it, before any table."""
    return f'<div class="picture" id="picture">{svg}</div>' if svg else ""


def headline_table(summary):
    """The run's summary lines ("l2    size 25 MiB  hit 277.1 cyc  ...") as a table: the element,
    then its values, two spaces apart in the line, one cell each."""
    rows = []
    for line in summary.splitlines():
        element, _, rest = line.strip().partition(" ")
        # "+14 more": the rest is below, every value with its provenance.
        values = [v for v in rest.strip().split("  ") if v.strip() and not re.fullmatch(r"\s*\+\d+ more", v)]
        if element and values:
            cells = "".join(f"<span class='hv'>{E(v.strip())}</span>" for v in values)
            rows.append(f"<tr><th>{E(element)}</th><td>{cells}</td></tr>")
    if not rows:
        return ""
    return f"<table class='headline' id='headline'><caption>Headline values</caption>{''.join(rows)}</table>"


def place_items(topo, items):
    """Each series under the element its probe gave most keys (or is named after); else "other"."""
    placed, other = {}, []
    for item in items:
        elements = probe_elements(topo, item.series.probe) if item.series.folder else []
        if elements:
            placed.setdefault(elements[0], []).append(item)
        else:
            other.append(item)
    return placed, other


def header(topo, items, elapsed_note, picture=""):
    meta = topo.meta
    created = meta.get("created_utc", "")
    if isinstance(created, datetime):
        created = created.strftime("%Y-%m-%d %H:%M:%S UTC")
    facts = [("device", topo.device_value("name", "?")), ("backend", meta.get("backend", "?")),
             ("device spec", meta.get("device_spec", "")), ("tool version", meta.get("tool_version", "?")),
             ("commit", meta.get("git_commit", "?")), ("measured", created), ("host", meta.get("host", "")),
             ("driver / runtime", " / ".join(str(meta[k]) for k in ("driver_version", "runtime_version") if k in meta)),
             ("topology file", topo.path)]
    rows = "".join(f"<tr><th>{E(k)}</th><td>{E(str(v))}</td></tr>" for k, v in facts if v != "")
    counts = count_items(items)
    return (f"<h1>{E(str(topo.device_value('name', 'memtopo report')))}</h1>{banners(topo, items)}"
            f"<p class='sub'>memtopo topology report: {counts}{E(elapsed_note)}</p>"
            f"<p class='tally'>{status_tally(topo)}</p>{picture}<table>{rows}</table>")


def banners(topo, items):
    """What a reader must know before any value: a simulated device, a report without plots."""
    out = []
    if topo.meta.get("backend") == "sim":
        spec = str(topo.meta.get("device_spec", "sim"))
        out.append(f"<p class='banner'>Simulated GPU ({E(spec)}): these values were measured on memtopo's "
                   "simulated device, not on hardware.</p>")
    if not items:
        out.append("<p class='banner'>No raw series: this report has no plots. Give the folder the run wrote "
                   "with <code>--raw-dir</code>: <code>memtopo report topo.toml --raw-dir raw/</code> "
                   "(and <code>memtopo run --raw-dir raw/</code> to write one).</p>")
    return "".join(out)


def status_tally(topo):
    """The probes by status, linked to the probe table: "41 ok, 6 not determinable, 8 skipped"."""
    order = ["ok", "not_determinable", "skipped", "failed"]
    counts = {}
    for p in topo.probes.values():
        counts[p.status] = counts.get(p.status, 0) + 1
    parts = [f"<span class='status-{E(s)}'>{counts[s]} {E(s.replace('_', ' '))}</span>"
             for s in order + sorted(set(counts) - set(order)) if counts.get(s)]
    return f"<a href='#probes'>probes</a>: {', '.join(parts) if parts else 'none recorded'}"


def count_items(items):
    plots = sum(1 for i in items if i.kind == "plot")
    tables = sum(1 for i in items if i.kind == "table")
    errors = sum(1 for i in items if i.kind == "error")
    text = f"{len(items)} raw series: {plots} plots, {tables} tables"
    return text + (f", {errors} that could not be shown" if errors else "")


def toc(topo, has_other):
    links = [f'<li><a href="#el-{E(e)}">{E(e)}</a> ({len(keys)} values)</li>' for e, keys in topo.elements.items()]
    links.append('<li><a href="#probes">probes</a></li>')
    if has_other:
        links.append('<li><a href="#other-series">other series</a></li>')
    return f"<h2>Contents</h2><ul class='toc'>{''.join(links)}</ul>"


def element_section(topo, element, placed, items):
    keys = topo.elements[element]
    related = related_probes(topo, element)
    matrix = value_matrix.table_html(keys.values())
    values = value_table(keys.values())
    if matrix:  # the full table stays one click away
        values = (f"{matrix}<details><summary>every value with its provenance ({len(keys)})</summary>"
                  f"{values}</details>")
    parts = [f'<section id="el-{E(element)}" data-element="{E(element)}"><h2>[{E(element)}]</h2>',
             values, unsettled_box(topo, related), elsewhere_note(element, related, items, topo)]
    if placed:
        parts.append(f"<h3>Raw series ({len(placed)})</h3>{series_blocks(placed)}")
    parts.append("</section>")
    return "".join(parts)


def related_probes(topo, element):
    """Probes that gave this element keys or are named after it, in file order."""
    return [n for n in topo.probes if element in probe_elements(topo, n)] + \
           [n for n in topo.keys_by_probe if n not in topo.probes and element in probe_elements(topo, n)]


def value_table(infos):
    rows = []
    previous_note = None
    for k in infos:
        sign = BOUND_SIGN.get(k.bound, "")
        conf = short_number(float(k.confidence), 3) if isinstance(k.confidence, (int, float)) else ""
        cls = "arr" if isinstance(k.value, list) else "num"
        note = "<span class='sub'>(as above)</span>" if k.note and k.note == previous_note else E(k.note)
        previous_note = k.note
        rows.append(f"<tr><td><code>{E(k.key)}</code></td><td class='{cls}' title='{E(exact_text(k.value))}'>"
                    f"{E(shown_value(k.full_name, k.value))}</td><td>{E(sign)}</td><td>{E(conf)}</td>"
                    f"<td class='probe'><code>{E(k.probe)}</code></td><td class='note'>{note}</td></tr>")
    head = "<tr><th>key</th><th>value</th><th>bound</th><th>confidence</th><th>probe</th><th>note</th></tr>"
    return f"<table class='values'>{head}{''.join(rows)}</table>"


def unsettled_box(topo, related):
    """What this element's probes could not determine, failed at, or skipped, with the reasons."""
    lines = []
    for name in related:
        p = topo.probes.get(name)
        if p and p.status in ("not_determinable", "failed", "skipped"):
            what = p.status.replace("_", " ")
            lines.append(f"<li><code>{E(name)}</code>: <span class='status-{E(p.status)}'>{E(what)}</span>"
                         f"{': ' + E(p.reason) if p.reason else ''}</li>")
    return f"<div class='box'>Not settled here:<ul>{''.join(lines)}</ul></div>" if lines else ""


def elsewhere_note(element, related, items, topo):
    """Links to series of this element's probes that are shown under another element."""
    links = []
    for item in items:
        elements = probe_elements(topo, item.series.probe)
        if item.series.probe in related and elements and elements[0] != element:
            anchor = item.html.split('id="', 1)[1].split('"', 1)[0]
            links.append(f"<a href='#{anchor}'>{E(item.series.relative_path)}</a> (under [{E(elements[0])}])")
    return f"<p class='sub'>Also from this element's probes: {', '.join(links)}</p>" if links else ""


def probes_section(topo, items):
    series_count = {}
    for item in items:
        series_count[item.series.probe] = series_count.get(item.series.probe, 0) + 1
    rows = []
    for name, p in topo.probes.items():
        duration = f"{p.duration_s:.3f} s" if isinstance(p.duration_s, (int, float)) else ""
        provided = len(topo.keys_by_probe.get(name, []))
        options = "".join(f"<br><code>{E(k)} = {E(json.dumps(v))}</code>" for k, v in (p.options or {}).items())
        rows.append(f"<tr><td><code>{E(name)}</code>{options}</td><td>{E(p.version)}</td>"
                    f"<td class='status-{E(p.status)}'>{E(p.status)}</td><td class='note'>{E(p.reason)}</td>"
                    f"<td class='num'>{E(duration)}</td><td class='num'>{provided}</td>"
                    f"<td class='num'>{series_count.get(name, 0)}</td></tr>")
    head = ("<tr><th>probe</th><th>version</th><th>status</th><th>reason</th><th>duration</th>"
            "<th>values</th><th>series</th></tr>")
    return f"<section id='probes'><h2>Probes</h2><table>{head}{''.join(rows)}</table></section>"


def other_section(other):
    return (f"<section id='other-series'><h2>Other series ({len(other)})</h2>"
            "<p class='sub'>Series whose probe provided no element's values in this topology file.</p>"
            f"{series_blocks(other)}</section>")


def series_blocks(items):
    """Plots in a grid, then the small tables side by side."""
    plots = "".join(i.html for i in items if i.kind != "table")
    tables = "".join(i.html for i in items if i.kind == "table")
    return (f"<div class='plots'>{plots}</div>" if plots else "") + \
           (f"<div class='tables'>{tables}</div>" if tables else "")
