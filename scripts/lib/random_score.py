"""Scores a measured topology against the truth of its random device (random_device.py).

Verdicts per key: "recovered" (exact and within the check's tolerance), "bound" (a bound that
holds the true value), "absent" (no value: not determinable, or the probe skipped), "wrong"
(an exact value outside the tolerance, or a bound that excludes the truth) and "above model"
(a rate more than 1 % above what the description allows). "confident" marks a wrong value
reported with confidence 0.8 or more.
"""

import tomllib

VERDICTS = ("recovered", "bound", "absent", "wrong", "above model")


def load(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def _lookup(doc, key):
    node = doc
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _close(check, truth, got, entry):
    if isinstance(truth, list):
        return isinstance(got, list) and len(got) == len(truth) and all(
            _close(check, a, b, entry) for a, b in zip(truth, got))
    if isinstance(truth, str) or isinstance(truth, bool) or check == "exact":
        return got == truth
    if not isinstance(got, (int, float)):
        return False
    if check == "size":
        return abs(got - truth) <= max(entry.get("line", 1), truth / 1024)
    if check == "cycles":
        return abs(got - truth) <= max(0.5, 0.03 * abs(truth))
    if check == "count":
        return abs(got - truth) <= 0.05 * abs(truth) + 1
    if check == "rate":
        return truth * 0.94 <= got <= truth * 1.01
    raise ValueError(check)


def _bound_holds(bound, truth, got):
    if not isinstance(truth, (int, float)) or not isinstance(got, (int, float)):
        return False
    return truth >= got if bound == "at_least" else truth <= got if bound == "at_most" else False


def score(truth, doc):
    out = {}
    for key, entry in sorted(truth.items()):
        want = entry["value"]
        got = _lookup(doc, key)
        table, _, name = key.partition(".")
        prov = _lookup(doc, f"provenance.{table}") or {}
        prov = prov.get(name, {}) if isinstance(prov, dict) else {}
        confidence = prov.get("confidence", 1.0) if isinstance(prov, dict) else 1.0
        bound = prov.get("bound", "exact") if isinstance(prov, dict) else "exact"
        result = {"truth": want, "got": got, "probe": prov.get("probe", "") if isinstance(prov, dict) else ""}
        if got is None:
            result["verdict"] = "absent"
        elif bound != "exact":
            result["verdict"] = "bound" if _bound_holds(bound, want, got) else "wrong"
        elif entry["check"] == "rate" and isinstance(got, (int, float)) and got > want * 1.01:
            result["verdict"] = "above model"
        else:
            result["verdict"] = "recovered" if _close(entry["check"], want, got, entry) else "wrong"
        result["confident"] = result["verdict"] in ("wrong", "above model") and confidence >= 0.8
        result["detail"] = f"truth {_short(want)}, measured {_short(got)} ({bound}, confidence {confidence:.2f}) {result['probe']}"
        out[key] = result
    return out


def _short(v):
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def lines(scores, only_misses=False):
    for key, r in scores.items():
        if only_misses and r["verdict"] == "recovered":
            continue
        yield f"{r['verdict']:<11} {key}: {r['detail']}"


def tally(per_seed):
    """key -> {verdict: seeds}, for the keys any device's truth has."""
    table = {}
    for seed, scores in sorted(per_seed.items()):
        for key, r in scores.items():
            entry = table.setdefault(key, {v: [] for v in VERDICTS})
            entry[r["verdict"]].append(seed)
            if r["confident"]:
                entry.setdefault("confident", []).append(seed)
    return table


def render(table, markdown=False):
    rows = []
    totals = {v: 0 for v in VERDICTS}
    confident = sum(len(c.get("confident", [])) for c in table.values())
    for key, counts in sorted(table.items()):
        n = [len(counts[v]) for v in VERDICTS]
        for v, c in zip(VERDICTS, n):
            totals[v] += c
        wrong = counts["wrong"] + counts["above model"]
        rows.append((key, *n, " ".join(str(s) for s in wrong[:8]) + (" ..." if len(wrong) > 8 else "")))
    head = ("key", "recovered", "bound", "absent", "wrong", "above model", "wrong in seeds")
    # The [device] table is what the device reports, not measured: the figure without it too.
    measured = [r for r in rows if not r[0].startswith("device.")]
    measured_total = sum(sum(r[1:6]) for r in measured)
    measured_ok = sum(r[1] for r in measured)
    total = sum(totals.values())
    summary = (f"{totals['recovered']} of {total} values recovered ({100.0 * totals['recovered'] / max(total, 1):.1f} %), "
               f"{totals['bound']} bounds, {totals['absent']} absent, {totals['wrong']} wrong, "
               f"{totals['above model']} above the model ({confident} of these two reported with confidence 0.8 or more); "
               f"without the [device] table: {measured_ok} of {measured_total} "
               f"({100.0 * measured_ok / max(measured_total, 1):.1f} %)")
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| `" + r[0] + "` | " + " | ".join(str(x) for x in r[1:]) + " |" for r in rows]
        return "\n".join(out) + "\n\n" + summary
    width = max(len(r[0]) for r in rows) if rows else 3
    out = [f"{head[0]:<{width}} {'ok':>4} {'bnd':>4} {'abs':>4} {'bad':>4} {'hi':>4}  wrong in seeds"]
    out += [f"{r[0]:<{width}} {r[1]:>4} {r[2]:>4} {r[3]:>4} {r[4]:>4} {r[5]:>4}  {r[6]}" for r in rows]
    return "\n".join(out) + "\n\n" + summary
