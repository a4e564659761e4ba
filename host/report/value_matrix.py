"""An element whose keys are operations x metrics (`roofline.ffma_peak_ops_per_cycle_per_sm`,
`roofline.ffma_issue_latency_cycles`, `roofline.sfu_peak_ops_per_cycle_per_sm`, ...) as one
table: a row per operation, a column per metric. Found from the names alone: a metric is a key
ending shared by at least three operations, so a new probe's keys of this form get the table;
only where the table is nearly full and holds most of the element's keys."""

from figure_text import page_text
from units import shown_value

MIN_OPS = 3
MIN_METRICS = 2
MIN_CELLS = 12
MIN_FILL = 0.8    # of the operations x metrics cells
MIN_COVER = 0.75  # of the element's keys
BOUND_SIGN = {"at_least": "≥ ", "at_most": "≤ "}
E = page_text


def split(infos):
    """(operations, metrics, {(operation, metric): info}) in file order; empty where the keys
    do not form such a table."""
    keys = [k.key for k in infos]
    endings = {}
    for key in keys:
        tokens = key.split("_")
        for i in range(1, len(tokens)):
            endings["_".join(tokens[i:])] = endings.get("_".join(tokens[i:]), 0) + 1
    cells = {}
    for info in infos:
        tokens = info.key.split("_")
        for i in range(1, len(tokens)):  # the longest ending enough keys share
            ending = "_".join(tokens[i:])
            if endings[ending] >= MIN_OPS:
                cells[("_".join(tokens[:i]), ending)] = info
                break
    metric_ops = {}
    for op, metric in cells:
        metric_ops.setdefault(metric, []).append(op)
    metrics = [m for m in metric_ops if len(metric_ops[m]) >= MIN_OPS]
    op_count = {}
    for op, metric in cells:
        if metric in metrics:
            op_count[op] = op_count.get(op, 0) + 1
    ops = [op for op in dict.fromkeys(op for op, _ in cells) if op_count.get(op, 0) >= MIN_METRICS]
    kept = {c: info for c, info in cells.items() if c[0] in ops and c[1] in metrics}
    # A table of mostly empty cells, or one that leaves most keys out, reads worse than the list.
    if len(kept) < MIN_CELLS or len(kept) < MIN_FILL * len(ops) * len(metrics) or len(kept) < MIN_COVER * len(keys):
        return [], [], {}
    return ops, metrics, kept


def table_html(infos):
    """The operations x metrics table, or "" when the keys are not of that form."""
    ops, metrics, cells = split(list(infos))
    if not cells:
        return ""
    head = "<tr><th>operation</th>" + "".join(f"<th>{E(m.replace('_', ' '))}</th>" for m in metrics) + "</tr>"
    rows = []
    for op in ops:
        tds = []
        for m in metrics:
            info = cells.get((op, m))
            text = BOUND_SIGN.get(info.bound, "") + shown_value(info.full_name, info.value) if info else ""
            tds.append(f"<td class='num'>{E(text)}</td>")
        rows.append(f"<tr><th><code>{E(op)}</code></th>{''.join(tds)}</tr>")
    return (f"<table class='matrix' data-matrix-cells='{len(cells)}'>{head}{''.join(rows)}</table>"
            f"<p class='sub'>{len(cells)} of the values above as operation x metric; every value with its "
            "provenance follows.</p>")
