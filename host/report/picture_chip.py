"""The SMs nested in what they share, as lstopo nests cores in caches: DRAM holds the L2, the L2
its partitions, a partition the GPCs whose SMs are near it, a GPC its SMs, one box each with its
number and a tooltip (its GPC, near partition, constant L1.5 group and L2 slice class). Where
GPCs span partitions, the GPCs sit in the L2 and each SM is filled with its partition's colour.
The other levels every SM shares (TLB, constant L1.5) sit inside DRAM beside the L2."""

import math

from picture_canvas import COLOURS, LINE_IN, MAX_BOXES, MAX_CELLS, lighter, palette, wrapped

CELL_W, CELL_H, GAP, PAD = 0.22, 0.19, 0.03, 0.07
GPC_MIN_W, PARTITION_MIN_W, LEVEL_MIN_W = 1.05, 2.3, 3.0
MAX_SMS_IN_BOX = 128    # SMs drawn in one GPC or partition; the rest counted
# The L2 slice classes as greys under the SMs' numbers: apart from the GPCs' and partitions' colours.
SLICE_SHADES = ("#333333", "#c0c0c0", "#7a7a7a", "#e6e6e6")
MAPS = ("GPC", "L2 partition", "L1.5 group", "L2 slice class")


class Box:
    """A container (its label and values on top, its children in rows below) or an SM's cell."""

    def __init__(self, label, parts=(), colour=COLOURS["group"], edge="#555555", gid=None, title=None, children=(),
                 min_w=GPC_MIN_W, cell=False, rows=None, bar=None):
        self.label, self.parts, self.colour, self.edge = label, list(parts), colour, edge
        self.gid, self.title, self.children, self.min_w = gid, title, list(children), min_w
        self.cell, self.rows, self.bar = cell, rows, bar

    def layout_rows(self, w):
        """The children in rows: as given, else as many a row as fit at their least width, the
        rows filled evenly."""
        if self.rows is not None:
            return [r for r in self.rows if r]
        if not self.children:
            return []
        room = w - 2 * PAD + GAP
        least = CELL_W if self.children[0].cell else self.children[0].min_w
        per_row = max(1, min(len(self.children), int(room / (least + GAP))))
        rows = math.ceil(len(self.children) / per_row)
        per_row = math.ceil(len(self.children) / rows)
        return [self.children[i:i + per_row] for i in range(0, len(self.children), per_row)]

    def head_lines(self, w):
        return wrapped(self.parts, w - 0.16) if self.parts else []

    def height(self, w):
        if self.cell:
            return CELL_H
        h = 0.06 + LINE_IN * (1 + len(self.head_lines(w)))
        for row in self.layout_rows(w):
            cw = self._child_width(row, w)
            h += max(child.height(cw) for child in row) + GAP
        return h + PAD

    def _child_width(self, row, w):
        if row[0].cell:
            return CELL_W
        return (w - 2 * PAD - GAP * (len(row) - 1)) / len(row)

    def draw(self, c, x, y, w, h=None):
        h = h or self.height(w)
        c.box(x, y, w, h, self.colour, edge=self.edge, gid=self.gid, title=self.title, width=0.5 if self.cell else 0.8)
        if self.cell:
            if self.bar is not None:
                c.box(x + 0.02, y + h - 0.05, w - 0.04, 0.035, self.bar, edge=self.bar, width=0.2)
            c.text(x + w / 2, y + 0.045, self.label, size=5.5, ha="center")
            return h
        c.text(x + 0.07, y + 0.04, self.label, weight="bold", size=7.5)
        for k, line in enumerate(self.head_lines(w)):
            c.text(x + 0.07, y + 0.04 + LINE_IN * (k + 1), line, size=7.5)
        cy = y + 0.06 + LINE_IN * (1 + len(self.head_lines(w)))
        for row in self.layout_rows(w):
            cw = self._child_width(row, w)
            rh = max(child.height(cw) for child in row)
            for k, child in enumerate(row):
                child.draw(c, x + PAD + k * (cw + GAP), cy, cw, rh if not child.cell else None)
            cy += rh + GAP
        return h


def sm_maps(model):
    """Per map (GPC, L2 partition, L1.5 group, L2 slice class) the index of each SM, -1 unknown;
    and the number of SMs drawn."""
    strips = {s["label"]: s["cells"] for s in model.get("strips", [])}
    n = model.get("sm_count") or max((len(v) for v in strips.values()), default=0)
    n = min(int(n), MAX_CELLS)
    maps = {}
    for name in MAPS:
        cells = strips.get(name, [])
        maps[name] = [cells[k] if k < len(cells) else -1 for k in range(n)]
    return maps, n


def _nested(inner, outer):
    """Whether every known group of `inner` lies in one group of `outer`."""
    home = {}
    for i, o in zip(inner, outer):
        if i >= 0 and o >= 0 and home.setdefault(i, o) != o:
            return False
    return bool(home)


def _tooltip(k, maps):
    names = {"GPC": "GPC", "L2 partition": "near L2 partition", "L1.5 group": "constant L1.5 group",
             "L2 slice class": "L2 slice class"}
    said = [f"{names[m]} {maps[m][k]}" for m in MAPS if maps[m][k] >= 0]
    return f"SM {k}" + (": " + ", ".join(said) if said else "")


def _capped(boxes, what):
    if len(boxes) <= MAX_BOXES:
        return boxes
    rest = len(boxes) - MAX_BOXES + 1
    return boxes[:MAX_BOXES - 1] + [Box(f"+{rest} more {what}, not drawn", [], COLOURS["unknown"])]


def _cells(sms, maps, partition_fill):
    shown = sms[:MAX_SMS_IN_BOX]
    cells = []
    for k in shown:
        part, cls = maps["L2 partition"][k], maps["L2 slice class"][k]
        fill = lighter(palette(part), 0.45) if partition_fill and part >= 0 else COLOURS["sm_cell"]
        bar = SLICE_SHADES[cls % len(SLICE_SHADES)] if cls >= 0 else None
        cells.append(Box(str(k), colour=fill, edge="#5b7fa8", gid=f"sm-{k}", title=_tooltip(k, maps), cell=True,
                         bar=bar))
    if len(sms) > len(shown):
        cells.append(Box(f"+{len(sms) - len(shown)}", colour=COLOURS["unknown"], cell=True,
                         title=f"{len(sms) - len(shown)} more SMs, not drawn"))
    return cells


def _group(sms, index):
    groups = {}
    for k in sms:
        groups.setdefault(index[k], []).append(k)
    return sorted(groups.items(), key=lambda kv: (kv[0] < 0, kv[0]))


def _gpc_boxes(sms, maps, partition_fill):
    boxes = []
    l15_is_gpc = _nested(maps["L1.5 group"], maps["GPC"]) and _nested(maps["GPC"], maps["L1.5 group"])
    for g, members in _group(sms, maps["GPC"]):
        name = (f"GPC {g}" if g >= 0 else "GPC unknown") + f": {len(members)} SMs"
        title = name + (", one constant L1.5 group" if l15_is_gpc and g >= 0 else "")
        boxes.append(Box(name, [], lighter(palette(g), 0.8) if g >= 0 else COLOURS["unknown"],
                         edge=palette(g) if g >= 0 else "#777777", gid=f"gpc-{g}" if g >= 0 else "gpc-unknown",
                         title=title, children=_cells(members, maps, partition_fill), min_w=GPC_MIN_W))
    return _capped(boxes, "GPCs")


def _partition_boxes(sms, maps, instances, with_gpcs):
    boxes = []
    for p, members in _group(sms, maps["L2 partition"]):
        inst = instances[p] if 0 <= p < len(instances) else None
        name = inst["label"] if inst else (f"partition {p}" if p >= 0 else "partition unknown")
        parts = inst["parts"] if inst else [f"{len(members)} SMs near"]
        children = _gpc_boxes(members, maps, False) if with_gpcs else _cells(members, maps, False)
        boxes.append(Box(name, parts, COLOURS["partition"], edge="#6a9a5b",
                         gid=f"l2-partition-{p}" if p >= 0 else "l2-partition-unknown",
                         title=f"L2 {name}: the SMs near it", children=children, min_w=PARTITION_MIN_W))
    return _capped(boxes, "partitions")


def _counted_gpcs(counts, inside):
    """GPCs known by their SM counts only (no map): a box each, the SMs apart."""
    gpcs = _capped([Box(f"GPC {g}", [f"{n} SMs"], lighter(palette(g), 0.8), edge=palette(g), gid=f"gpc-{g}",
                        title=f"GPC {g}: {n} SMs, which ones not measured") for g, n in enumerate(counts)], "GPCs")
    return [Box("GPCs", ["SMs per GPC measured, which SMs not"], COLOURS["partition"], children=gpcs,
                min_w=LEVEL_MIN_W),
            Box("SMs", ["their GPCs not measured"], COLOURS["partition"], children=inside, min_w=LEVEL_MIN_W)]


def chip_tree(model):
    """The nested boxes of the SMs and what they share, or None without SMs to draw."""
    maps, n = sm_maps(model)
    if n <= 0:
        return None, ""
    sms = list(range(n))
    has_gpc = any(g >= 0 for g in maps["GPC"])
    has_part = any(p >= 0 for p in maps["L2 partition"])
    shared = model.get("chip_wide", [])
    l2 = next((s for s in shared if s["label"] == "L2"), None)
    instances = l2.get("children", []) if l2 else []
    note = ""
    if has_part and has_gpc and _nested(maps["GPC"], maps["L2 partition"]):
        inside_l2 = _partition_boxes(sms, maps, instances, True)
    elif has_gpc:
        inside_l2 = _gpc_boxes(sms, maps, has_part)
        if has_part:
            note = "GPCs span L2 partitions: an SM's colour is its near partition's"
    elif has_part:
        inside_l2 = _partition_boxes(sms, maps, instances, False)
    else:
        inside_l2 = _cells(sms, maps, False)
    if not has_gpc and model.get("gpc_sm_counts"):
        inside_l2 = _counted_gpcs(model["gpc_sm_counts"], inside_l2)
    if any(v >= 0 for v in maps["L2 slice class"]):
        note += ("; " if note else "") + "the grey bar under an SM's number: its L2 slice class"
    known = [m for m in MAPS if any(v >= 0 for v in maps[m])]
    if known:
        note += ("; " if note else "") + "an SM's tooltip names its " + ", ".join(known)
    l2_box = Box("L2" if l2 else "the SMs", l2["parts"] if l2 else [f"{n} SMs"], COLOURS["shared_level"], edge="#6a9a5b",
                 gid="l2-cache", title="L2: shared by every SM", children=inside_l2, min_w=LEVEL_MIN_W)
    others = [Box(s["label"], s["parts"], COLOURS["chip_wide"], edge="#6a9a5b", gid=_gid(s["label"]),
                  title=f"{s['label']}: shared by every SM", min_w=LEVEL_MIN_W)
              for s in shared if s["label"] != "L2" and s["kind"] != "memory"]
    dram = next((s for s in shared if s["kind"] == "memory"), None)
    rows = [[l2_box]] + [others[i:i + 2] for i in range(0, len(others), 2)]
    outer = Box(dram["label"] if dram else "GPU", dram["parts"] if dram else [], COLOURS["memory"], edge="#b08a4a",
                gid="device-memory" if dram else "gpu", title="DRAM: behind the L2, shared by every SM", rows=rows,
                min_w=LEVEL_MIN_W)
    return outer, note


def _gid(label):
    return "".join(ch if ch.isalnum() else "-" for ch in label.lower()).strip("-")


def chip(c, model, x, w):
    """Draws the nested SMs at c.y; moves c.y below them."""
    tree, note = chip_tree(model)
    if tree is None:
        return
    c.y += tree.draw(c, x, c.y, w) + 0.04
    if note:
        c.text(x, c.y, note, size=7)
        c.y += LINE_IN
    c.y += 0.04
