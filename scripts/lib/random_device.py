"""One random plausible simulated GPU per seed, and what its keys should measure.

make(seed) returns (description TOML text, truth), truth mapping a topology key to
{"value": v, "check": how}: "exact", "size" (within one line, "line" bytes), "cycles"
(3 % or half a cycle), "rate" (at most 1 % above the model, at most 6 % below), "count"
(within 5 %). The space covers what docs/simulator.md models: partitions and their homes,
modulo, XOR and non-linear set indices, set counts that are no power of two, replacement
policies, sectors, page sizes and TLB sets, banks, carveout levels, GPCs of unequal size and
noise families. Only Python's own random module is used: a seed gives the same device
everywhere.
"""

import random

KIB = 1024
MIB = 1024 * 1024


def _pick_sets(rng, lines_hint, allow_mixed):
    """(sets, mapping): a power of two with modulo or the pair hash, or any count on the
    non-linear index."""
    if allow_mixed and rng.random() < 0.3:
        return rng.choice([3, 5, 6, 7, 9, 12]) * rng.choice([8, 16, 32]), "mixed"
    sets = rng.choice([s for s in (16, 32, 64, 128, 256) if s <= lines_hint] or [16])
    return sets, ("hashed" if rng.random() < 0.25 else "modulo")


def _cache(rng, line, sector, sets, ways, mapping, policy, latency):
    return {"size_bytes": sets * ways * line, "line_bytes": line, "fetch_granularity_bytes": sector, "sets": sets,
            "ways": ways, "set_mapping": mapping, "replacement_policy": policy, "latency_cycles": latency}


def _gpcs(rng, sms):
    sizes = []
    while sum(sizes) < sms:
        sizes.append(min(rng.randint(2, 7), sms - sum(sizes)))
    return sizes


def _carveout(rng, l1_bytes):
    """Shared-memory sizes a carveout selects (ascending, from 0), not multiples of 8 KiB but
    at least 8 KiB apart, as a GPU's are (the sweep tells levels a percent or more wide)."""
    top = l1_bytes - rng.choice([16, 32]) * KIB
    out = [0]
    for x in sorted(rng.randrange(1, top // KIB) * KIB for _ in range(rng.randint(3, 7))):
        if x - out[-1] >= 8 * KIB and top - x >= 8 * KIB:
            out.append(x)
    return out + [top]


def _noise(rng):
    kind = rng.choice(["none", "uniform", "geometric"])
    if kind == "none":
        return {}
    sim = {"noise_cycles": rng.choice([2, 4, 6]), "noise_distribution": kind}
    if rng.random() < 0.5:
        sim.update(outlier_probability=0.004, outlier_cycles=rng.choice([800, 2000, 5000]))
    return sim


def make(seed):
    rng = random.Random(seed)
    sms = rng.randint(4, 24)
    gpcs = _gpcs(rng, sms)
    clock_khz = rng.randrange(1000, 2000) * 1000
    cc = rng.choice(["7.0", "8.0", "8.6", "9.0"])

    line = rng.choice([64, 128])
    l1_sets, l1_map = _pick_sets(rng, 256, True)
    l1_ways = rng.choice([4, 6, 8, 12, 16])
    while l1_sets * l1_ways * line > 256 * KIB:
        l1_ways //= 2
    while l1_sets * l1_ways * line < 16 * KIB:  # no GPU has a smaller L1
        l1_sets *= 2
    l1_policy = rng.choice(["lru", "lru", "fifo", "random", "srrip"])
    l1_lat = rng.randint(20, 40)
    l1 = _cache(rng, line, rng.choice([32, line]), l1_sets, l1_ways, l1_map, l1_policy, l1_lat)
    carveout = _carveout(rng, l1["size_bytes"]) if rng.random() < 0.6 and l1["size_bytes"] >= 64 * KIB else None

    tex_storage = rng.choice(["l1d", "l1d", "own"])
    tex = dict(l1, latency_cycles=l1_lat + rng.randint(2, 8))
    if tex_storage == "own":
        s, m = _pick_sets(rng, 64, False)
        tex = _cache(rng, 32, 32, s, rng.choice([4, 8]), m, rng.choice(["lru", "fifo"]), l1_lat + rng.randint(2, 20))
    ro_storage = rng.choice(["texture", "l1d", "own"])
    ro = dict(l1 if ro_storage == "l1d" else tex, latency_cycles=l1_lat + rng.randint(1, 8))
    if ro_storage == "own":
        s, m = _pick_sets(rng, 64, False)
        ro = _cache(rng, 32, 32, s, rng.choice([4, 8]), m, "lru", l1_lat + rng.randint(2, 20))

    c1 = _cache(rng, 64, 64, rng.choice([4, 8, 16]), rng.choice([2, 4, 8]), "modulo", rng.choice(["lru", "lru", "random"]),
                rng.randint(20, 40))
    c15 = _cache(rng, 256, 256, rng.choice([8, 16, 32]), rng.choice([4, 8, 16]), "modulo",
                 rng.choice(["lru", "lru", "random"]), rng.randint(70, 140))
    # A GPU's constant L1.5 is many times its constant L1 (2 KiB in front of 32 to 64 KiB): the
    # L1.5's probes start past four times the L1 (docs/cache-probes.md). Its sets double until it
    # is that large (no further draws, so that every other device stays as it was).
    while c15["size_bytes"] < 4 * c1["size_bytes"]:
        c15["sets"] *= 2
        c15["size_bytes"] *= 2

    parts = rng.choice([1, 2, 2, 4])
    l2_sets_part = rng.choice([128, 256, 512])
    l2_ways = rng.choice([8, 12, 16, 24])
    while parts * l2_sets_part * l2_ways * 128 > 6 * MIB:
        l2_sets_part //= 2
    l2_lat = rng.randint(180, 300)
    l2 = _cache(rng, 128, 32, parts * l2_sets_part, l2_ways, "modulo", rng.choice(["lru", "lru", "random"]), l2_lat)
    l2["partitions"] = parts
    far = l2_lat + (rng.randint(40, 200) if parts > 1 else 0)
    l2["far_latency_cycles"] = far
    interleave = rng.choice(["alternating", "hashed"]) if parts > 1 else "alternating"
    granule = rng.choice([2048, 4096, 8192])
    dram_lat = l2_lat + rng.randint(200, 400)

    tlb_l1_page = rng.choice([64 * KIB, 128 * KIB, 2 * MIB, 2 * MIB])
    tlb = {"page_bytes": 2 * MIB, "l1_page_bytes": tlb_l1_page, "l1_entries": rng.choice([16, 24, 32, 48, 64]),
           "l1_sets": 1, "l1_miss_penalty_cycles": rng.randint(15, 60), "l2_entries": rng.choice([512, 768, 1024, 2048]),
           "l2_miss_penalty_cycles": rng.randint(200, 500)}
    tlb["l2_sets"] = rng.choice([s for s in (16, 24, 32, 64) if tlb["l2_entries"] % s == 0])
    shared = {"latency_cycles": rng.randint(20, 35), "banks": rng.choice([16, 32, 32, 64]),
              "bank_bytes": rng.choice([4, 4, 8]), "conflict_cycles": rng.randint(1, 3)}

    inflight = rng.choice([32, 64, 128, 256])
    l2_cap = sms * inflight * 128 / far  # bytes per cycle the SMs' requests in flight carry
    dram_cap = sms * inflight * 128 / (dram_lat + far - l2_lat) * clock_khz * 1e3
    # A GPU's bytes in flight at its peaks are a small part of the caches that feed them (an
    # H100's L2 reads: 2.8 kB/cycle x 270 cycles, 1.5 % of 50 MiB): the L2's peak needs at most
    # a sixteenth of it in flight, the L1's a quarter of the half the stream reads.
    l2_cap = min(l2_cap, l2["size_bytes"] / 16 / far)
    l1_rates = [r for r in (64, 96, 128) if r * (l1_lat + 8) <= l1["size_bytes"] / 8] or [32]
    memory = {"sm_l2_requests_in_flight": inflight, "sm_dram_requests_in_flight": inflight,
              "l1_read_bytes_per_cycle_per_sm": float(rng.choice(l1_rates)),
              "l2_read_bytes_per_cycle": round(l2_cap * rng.uniform(0.3, 0.6), 1),
              "l2_write_bytes_per_cycle": round(l2_cap * rng.uniform(0.3, 0.6), 1),
              "dram_read_bytes_per_second": round(dram_cap * rng.uniform(0.3, 0.6), -6),
              "dram_write_bytes_per_second": round(dram_cap * rng.uniform(0.3, 0.6), -6)}
    theoretical = max(memory["dram_read_bytes_per_second"], memory["dram_write_bytes_per_second"]) / rng.uniform(0.7, 0.92)
    buses = [b for b in (64, 128, 256, 384, 512, 1024, 2048, 4096) if theoretical / (2 * b / 8) >= 8e8]
    bus_bits = rng.choice(buses[-2:] or [64])
    mem_khz = int(theoretical / (2 * bus_bits / 8) / 1e3)

    shared_total = carveout[-1] if carveout else rng.choice([48, 64, 96]) * KIB
    device = {"name": f"memtopo random GPU {seed}", "compute_capability": cc, "sm_count": sms, "warp_size": 32,
              "sm_clock_khz": clock_khz, "memory_clock_khz": mem_khz, "memory_bus_width_bits": bus_bits,
              "global_memory_bytes": 8 << 30, "l2_bytes": l2["size_bytes"], "shared_per_sm_bytes": shared_total,
              "shared_per_block_bytes": 48 * KIB, "shared_per_block_optin_bytes": shared_total - KIB,
              "constant_memory_bytes": 65536, "registers_per_sm": 65536, "registers_per_block": 65536,
              "max_threads_per_sm": 2048, "max_threads_per_block": 1024, "max_blocks_per_sm": 32}
    sim = {"seed": seed, "timing_overhead_cycles": rng.randint(2, 12), "gpc_of_sm": [g for g, n in enumerate(gpcs) for _ in range(n)]}
    sim.update(_noise(rng))
    if carveout:
        sim.update(l1_shared_total_bytes=l1["size_bytes"], shared_sizes_bytes=carveout)
    subs = {"texture": {"storage": tex_storage}, "readonly": {"storage": ro_storage},
            "l2": {"interleave_bytes": granule, "interleave": interleave},
            "constant_l15": {"group_of_sm": sim["gpc_of_sm"]}, "memory": memory}
    tables = {"device": device, "l1d": l1, "texture": tex, "readonly": ro, "constant_l1": c1, "constant_l15": c15,
              "l2": l2, "tlb": tlb, "shared": shared, "dram": {"latency_cycles": dram_lat}}
    text = _toml(seed, tables, sim, subs)
    truth = _truth(device, l1, tex, ro, tex_storage, ro_storage, c1, c15, l2, interleave, granule, dram_lat, tlb, shared,
                   gpcs, memory, carveout, sim)
    return text, truth


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return repr(v)


def _toml(seed, tables, sim, subs):
    out = [f"# A random plausible GPU (scripts/random-devices make {seed}); keys: docs/simulator.md", ""]
    for name, table in list(tables.items()) + [("sim", sim)] + [("sim." + k, v) for k, v in subs.items()]:
        out.append(f"[{name}]")
        out += [f"{k} = {_value(v)}" for k, v in table.items()]
        out.append("")
    return "\n".join(out)


def _truth(device, l1, tex, ro, tex_storage, ro_storage, c1, c15, l2, interleave, granule, dram_lat, tlb, shared, gpcs,
           memory, carveout, sim):
    t = {}

    def put(key, value, check="exact", **extra):
        t[key] = dict({"value": value, "check": check}, **extra)

    for k, v in device.items():
        put("device." + k, v)
    reported_mapping = {"mixed": "hashed"}
    policy_names = {"srrip": None}
    for name, c in (("l1d", l1), ("texture", tex), ("readonly", ro), ("constant_l1", c1), ("constant_l15", c15),
                    ("l2", l2)):
        put(name + ".size_bytes", c["size_bytes"], "size", line=c["line_bytes"])
        for k in ("line_bytes", "fetch_granularity_bytes", "sets", "ways"):
            put(f"{name}.{k}", c[k])
        put(name + ".latency_cycles", c["latency_cycles"], "cycles")
        put(name + ".set_mapping", reported_mapping.get(c["set_mapping"], c["set_mapping"]))
        policy = policy_names.get(c["replacement_policy"], c["replacement_policy"])
        if policy:
            put(name + ".replacement_policy", policy)
    if l1["replacement_policy"] == "srrip":
        put("l1d.eviction_set_policy", "keeps_reused")
    put("texture.storage", tex_storage)
    put("readonly.storage", {"texture": "texture" if tex_storage == "own" else "l1d"}.get(ro_storage, ro_storage))
    for name in ("l1d", "texture", "readonly"):
        put(name + ".instances_per_sm", 1)
    put("l2.partitions", l2["partitions"])
    put("dram.latency_cycles", dram_lat, "cycles")
    if l2["partitions"] > 1:  # one partition: no far level to report
        put("l2.far_latency_cycles", l2["far_latency_cycles"], "cycles")
        put("l2.partition_granule_bytes", granule)
        put("l2.partition_interleave", interleave)
        put("dram.far_latency_cycles", dram_lat + l2["far_latency_cycles"] - l2["latency_cycles"], "cycles")
    for level in ("l1", "l2"):
        put(f"tlb.{level}_entries", tlb[f"{level}_entries"])
        put(f"tlb.{level}_page_bytes", tlb.get(f"{level}_page_bytes", tlb["page_bytes"]))
        put(f"tlb.{level}_sets", tlb[f"{level}_sets"])
        put(f"tlb.{level}_miss_penalty_cycles", tlb[f"{level}_miss_penalty_cycles"], "cycles")
    put("tlb.level_count", 2)
    for k in ("banks", "bank_bytes"):
        put("shared." + k, shared[k])
    put("shared.latency_cycles", shared["latency_cycles"], "cycles")
    put("shared.conflict_cycles", shared["conflict_cycles"], "cycles")
    if carveout:
        put("shared.carveout_sm_shared_bytes", carveout)
    if device["compute_capability"] == "9.0":  # the GPCs come from clusters (hopper-dsmem)
        put("gpc.count", len(gpcs))
        put("gpc.sm_counts", gpcs)
    put("constant_l15.sm_group_count", len(gpcs))
    put("mlp.sm_l2_loads_in_flight", memory["sm_l2_requests_in_flight"], "count")
    put("mlp.sm_dram_loads_in_flight", memory["sm_dram_requests_in_flight"], "count")
    for k in ("l1_read_bytes_per_cycle_per_sm", "l2_read_bytes_per_cycle", "l2_write_bytes_per_cycle",
              "dram_read_bytes_per_second", "dram_write_bytes_per_second"):
        put("throughput." + k, memory[k], "rate")
    if device["compute_capability"] == "9.0":
        put("dsmem.remote_latency_cycles", 6 * shared["latency_cycles"], "cycles")
    return t
