"""The papers' figures of `canopy exp`, drawn with matplotlib from NAME.json.

canopy runs this script (embedded in the binary, experiments/CMakeLists.txt) after an experiment:
    python3 figures.py OUT/NAME.json OUT
and for `canopy sweep --plot Q ...`:
    python3 figures.py --sweep OUT/sweep.json OUT Q ...    (OUT/sweep.Q.svg and .png)
After an experiment it writes OUT/NAME.<figure>.svg and .png for each figure of the experiment, one line per file on
stdout. Simulated values are bars or lines; published values are black marks beside them: a
diamond for a value, a bar from end to end for a range, a triangle for a bound (pointing the way
the paper's statement goes). Rows a figure needs and the run did not make (--quick, --workload)
are left out; an experiment without figures writes none.
"""
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

plt.rcParams.update({
    "svg.fonttype": "none",  # text stays text in the SVG
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.axisbelow": True,
    "legend.fontsize": 8,
    "figure.dpi": 110,
    "svg.hashsalt": "canopy",  # the same SVG for the same rows
})
SIM = ["#2a7ab0", "#e67e22", "#27ae60", "#8e44ad", "#c0392b"]


def published_of(row):
    """(value, lo, hi) of a row's published value or range; None when nothing is published."""
    if row is None:
        return None
    rng = row.get("published_range")
    if rng:
        lo = -math.inf if rng[0] is None else rng[0]
        hi = math.inf if rng[1] is None else rng[1]
        return (row.get("published"), lo, hi)
    if row.get("published") is None:
        return None
    p = row["published"]
    return (p, p, p)


class Marks:
    """Draws published values as marks and keeps one legend entry per kind."""

    def __init__(self):
        self.seen = set()

    def label(self, kind):
        if kind in self.seen:
            return None
        self.seen.add(kind)
        return kind

    def mark(self, ax, x, row, scale=1.0):
        pub = published_of(row)
        if pub is None:
            return
        value, lo, hi = pub
        if lo == hi:
            ax.plot([x], [value * scale], "D", mfc="none", mec="black", ms=7, mew=1.5,
                    label=self.label("published"), zorder=5)
        elif math.isinf(hi):
            ax.plot([x], [lo * scale], "^", color="black", ms=7,
                    label=self.label("published bound (at least)"), zorder=5)
        elif math.isinf(lo) or lo == 0:
            ax.plot([x], [hi * scale], "v", color="black", ms=7,
                    label=self.label("published bound (at most)"), zorder=5)
        else:
            ax.errorbar([x], [(lo + hi) / 2 * scale], yerr=[[(hi - lo) / 2 * scale]],
                        fmt="none", ecolor="black", elinewidth=2, capsize=5,
                        label=self.label("published range"), zorder=5)


def save(fig, out, name, figure):
    fig.tight_layout()
    for ext in ("svg", "png"):
        path = os.path.join(out, "%s.%s.%s" % (name, figure, ext))
        fig.savefig(path, metadata={"Date": None} if ext == "svg" else None)
        print(path)
    plt.close(fig)


def grouped_bars(ax, groups, series, rows, ylabel, log=False, scale=1.0):
    """Bars of `series` [(label, id template)] per group [(label, key)]: the row id is the
    template formatted with the group's key; published marks beside each bar."""
    marks = Marks()
    n = len(series)
    width = 0.8 / n
    values = []  # what is drawn, bars and marks, for the axis' range
    for i, (label, template) in enumerate(series):
        xs, ys, ids = [], [], []
        for g, (_, key) in enumerate(groups):
            rid = template.format(key)
            if rid in rows:
                xs.append(g + (i - (n - 1) / 2) * width)
                ys.append(rows[rid]["simulated"] * scale)
                ids.append(rid)
        ax.bar(xs, ys, width * 0.9, label=label + " (simulated)", color=SIM[i % len(SIM)])
        for x, rid in zip(xs, ids):
            marks.mark(ax, x, rows[rid], scale)
            pub = published_of(rows[rid])
            values += [v * scale for v in (pub or ()) if v is not None and 0 < v < math.inf]
        values += [y for y in ys if y > 0]
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g for g, _ in groups])
    ax.set_ylabel(ylabel)
    if log and values:
        # From 1 (the baseline of a ratio) or below the least bar; room above for the legend.
        ax.set_yscale("log")
        ax.set_ylim(min(1.0, min(values) * 0.7), max(values) * 4)
        ax.yaxis.set_major_formatter(PLAIN)
    elif values:
        ax.set_ylim(0, max(values) * 1.25)
    ax.legend(loc="upper left", fontsize=7)


def by_size(rows, prefix):
    """Rows "PREFIX.<bytes>" as sorted (bytes, row)."""
    out = []
    for rid, r in rows.items():
        m = re.fullmatch(re.escape(prefix) + r"\.(\d+)", rid)
        if m:
            out.append((int(m.group(1)), r))
    return sorted(out, key=lambda t: t[0])


PLAIN = matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v)


def size_axis(ax):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: "%d" % v if v < 1024 else "%dK" % (v / 1024)))
    ax.set_xlabel("transfer size (B; K = KiB; log scale)")
    if ax.get_yscale() == "log":  # 1, 2, 5 per decade, written out
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(PLAIN)
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


# ---- CCIX-vs-PCIe paper ------------------------------------------------------------------------

def ccix_latency(rows, out, name):
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, kind, title in ((axes[0], "read", "reads"), (axes[1], "write", "writes")):
        for i, (who, label) in enumerate((("ccix", "CCIX"), ("dma", "PCIe-DMA"))):
            pts = by_size(rows, "E1.%s_%s" % (who, kind))
            ax.plot([n for n, _ in pts], [r["simulated"] for _, r in pts], "o-", color=SIM[i],
                    label=label + " (simulated)")
        ax.set_yscale("log")
        size_axis(ax)
        ax.set_ylabel("latency (ns, log scale)")
        ax.set_title("device %s of host memory" % title)
        ax.legend()
    ax = axes[2]
    marks = Marks()
    for i, kind in enumerate(("read", "write")):
        pts = by_size(rows, "E1.%s_ratio" % kind)
        ax.plot([n for n, _ in pts], [r["simulated"] for _, r in pts], "o-", color=SIM[i],
                label="CCIX/PCIe %s latency (simulated)" % kind)
        for n, r in pts:
            marks.mark(ax, n, r)
    cross = rows.get("E1.crossover")
    if cross and published_of(cross):
        _, lo, hi = published_of(cross)
        ax.axvspan(lo, hi, color="grey", alpha=0.15, label="published read crossover (2-4 KiB)")
    ax.axhline(1.0, color="black", lw=0.8)
    size_axis(ax)
    ax.set_ylabel("CCIX / PCIe-DMA latency (x)")
    ax.set_title("latency ratio")
    ax.legend()
    fig.suptitle("CCIX vs PCIe-DMA latency against transfer size (CCIX paper Fig. 2)")
    save(fig, out, name, "latency")

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ax = axes[0]
    for i, (who, label) in enumerate((("ccix", "CCIX"), ("dma", "PCIe-DMA"))):
        pts = by_size(rows, "E1.%s_gbps" % who)
        ax.plot([n for n, _ in pts], [r["simulated"] for _, r in pts], "o-", color=SIM[i],
                label=label + " (simulated)")
    size_axis(ax)
    ax.set_ylabel("read throughput (GB/s)")
    ax.set_title("read throughput")
    ax.legend()
    ax = axes[1]
    marks = Marks()
    pts = by_size(rows, "E1.throughput_ratio")
    ax.plot([n for n, _ in pts], [r["simulated"] for _, r in pts], "o-", color=SIM[0],
            label="CCIX/PCIe read throughput (simulated)")
    for n, r in pts:
        marks.mark(ax, n, r)
    ax.axhline(1.0, color="black", lw=0.8)
    size_axis(ax)
    ax.set_ylabel("CCIX / PCIe-DMA throughput (x)")
    ax.set_title("throughput ratio")
    ax.legend()
    fig.suptitle("CCIX vs PCIe-DMA read throughput (CCIX paper Table III)")
    save(fig, out, name, "throughput")


def pcie_latency(rows, out, name):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (prefix, unit, title) in zip(axes, (("E1.%s", "latency (ns, log scale)", "latency"),
                                                 ("E1.t%s", "throughput (GB/s)", "throughput"))):
        for i, (d, label) in enumerate((("r", "read device<-host"), ("w", "write device->host"))):
            pts = []
            for rid, r in rows.items():
                m = re.fullmatch(re.escape(prefix % d) + r"(\d+)", rid)
                if m:
                    pts.append((32 << (int(m.group(1)) - 1), r["simulated"]))
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=SIM[i],
                    label="PCIe-DMA %s (simulated)" % label)
        if title == "latency":
            ax.set_yscale("log")
        size_axis(ax)
        ax.set_ylabel(unit)
        ax.set_title("PCIe-DMA " + title)
        ax.legend()
    fig.suptitle("PCIe-DMA transfers through the TaPaSCo-like engine (CCIX paper Sec. IV Exp. 1;"
                 " no published absolute values)")
    save(fig, out, name, "latency")


def pick(rows, names):
    """A table of rows under new ids {new id: row id}, for grouped_bars' templates."""
    return {new: rows[old] for new, old in names.items() if old in rows}


def ats_cost(rows, out, name):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    grouped_bars(axes[0], [("64 B, CCIX", "c"), ("64 B, PCIe-DMA", "d")],
                 [("ATC miss", "miss.{}"), ("ATC hit", "hit.{}")],
                 pick(rows, {"miss.c": "E2.20", "hit.c": "E2.21", "miss.d": "E2.1",
                             "hit.d": "E2.2"}), "latency (ns)")
    axes[0].set_title("64 B read: ATC miss against hit")
    grouped_bars(axes[1], [("32 KiB, CCIX", "c"), ("32 KiB, PCIe-DMA", "d")],
                 [("ATC cold", "cold.{}"), ("ATC warm", "warm.{}")],
                 pick(rows, {"cold.c": "E2.23", "warm.c": "E2.24", "cold.d": "E2.4",
                             "warm.d": "E2.5"}), "latency (ns)")
    axes[1].set_title("32 KiB read: cold against warm ATC")
    fig.suptitle("Address translation cost (CCIX paper Fig. 3)")
    save(fig, out, name, "atc")


def locality(rows, out, name):
    fig, ax = plt.subplots(figsize=(7, 4))
    grouped_bars(ax, [("u280 write", "1"), ("u280 read", "2"), ("vck5000 write", "3"),
                      ("vck5000 read", "4"), ("u280 re-read 512 KiB", "5"),
                      ("vck5000 re-read 512 KiB", "6")],
                 [("latency", "E3.{}")], rows, "latency per 64 B line (ns)")
    ax.tick_params(axis="x", labelrotation=20)
    ax.set_title("Data locality: system-cache hits and a working set beyond it (CCIX paper Fig. 5)")
    save(fig, out, name, "locality")


def atomics(rows, out, name):
    fig, ax = plt.subplots(figsize=(5, 4))
    grouped_bars(ax, [("host core", "1"), ("device (u280)", "2")], [("AtomicCompare", "E5.{}")],
                 rows, "latency (ns)")
    ax.set_title("AtomicCompare latency (CCIX paper Sec. IV Exp. 5)")
    save(fig, out, name, "atomics")


def coherence(rows, out, name):
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    marks = Marks()
    sizes = [2048, 512, 128, 32]
    for i, who in enumerate(("host", "device")):
        xs, ys = [], []
        for k, kib in enumerate(sizes):
            rid = "E4.%d" % (2 * k + 1 + i)
            if rid in rows:
                xs.append(kib)
                ys.append(rows[rid]["simulated"])
                marks.mark(ax, kib, rows[rid])
        ax.plot(xs, ys, "o-", color=SIM[i], label="%s mean, 1 host core (simulated)" % who)
    for i, (rid, who) in enumerate((("E4.9", "host"), ("E4.10", "device"))):
        if rid in rows:
            ax.plot([32], [rows[rid]["simulated"]], "s", color=SIM[i], mfc="none", ms=8,
                    label="%s mean, 3 host cores (simulated)" % who)
            marks.mark(ax, 32, rows[rid])
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(k) for k in sizes])
    ax.invert_xaxis()
    ax.set_xlabel("shared buffer (KiB, log scale; contention grows to the right)")
    ax.set_ylabel("mean access latency (ns)")
    ax.set_title("mean latency against shared buffer size")
    ax.legend(fontsize=7)
    hist = os.path.join(out, name + ".histograms.json")
    h = {}
    if os.path.exists(hist):
        with open(hist) as f:
            h = json.load(f)
    # The published means are the 32 KiB ones (E4.7, E4.8): marked on that panel.
    for ax, (where, means) in zip(axes[1:], (("2 MiB, 1 host core", ()),
                                            ("32 KiB, 1 host core", ("E4.7", "E4.8")))):
        if where not in h:
            ax.set_visible(False)
            continue
        for i, who in enumerate(("host", "device")):
            bins = h[where][who]["histogram"]["bins"]
            if not bins:
                continue
            total = sum(b[2] for b in bins) or 1
            # Only the bins with samples are listed: a bar each, at least 4% wide to be seen.
            lo = [max(b[0], 1e-3) for b in bins]
            width = [max(b[1], l * 1.04) - l for b, l in zip(bins, lo)]
            ax.bar(lo, [b[2] / total for b in bins], width=width, align="edge", alpha=0.6,
                   color=SIM[i], label="%s (simulated)" % who)
        for i, rid in enumerate(means):
            pub = published_of(rows.get(rid))
            if pub:
                ax.axvline(pub[0], color=SIM[i], ls="--", lw=1.5,
                           label="published %s mean %g ns" % (("host", "device")[i], pub[0]))
        ax.set_xscale("log")
        ax.set_xlabel("access latency (ns, log scale)")
        ax.set_ylabel("share of the side's accesses")
        ax.set_title("latency histogram, " + where)
        ax.legend(fontsize=7)
    fig.suptitle("Coherence under host-device contention (CCIX paper Fig. 6)")
    save(fig, out, name, "contention")


def lock_table(rows, out, name):
    fig, ax = plt.subplots(figsize=(7, 4))
    grouped_bars(ax, [("device idle", "1"), ("low contention", "2"), ("high contention", "3")],
                 [("host lock", "h.{}"), ("device lock", "d.{}")],
                 pick(rows, {"h.1": "DB.1", "h.2": "DB.2", "h.3": "DB.3", "d.2": "DB.4",
                             "d.3": "DB.5"}), "lock latency (ns)")
    ax.set_title("Shared lock table under rising contention (CCIX paper Fig. 9)")
    save(fig, out, name, "locks")


# ---- Flash-Cosmos ------------------------------------------------------------------------------

def curve(ax, rows, prefix, marks_at, label, color=SIM[0]):
    """A line through rows PREFIX<n> against n, with the published rows {n: id} marked."""
    pts = sorted((int(m.group(1)), r["simulated"]) for rid, r in rows.items()
                 for m in [re.fullmatch(re.escape(prefix) + r"(\d+)", rid)] if m)
    ax.plot([n for n, _ in pts], [v for _, v in pts], "o-", color=color, ms=4,
            label=label + " (simulated)")
    marks = Marks()
    for n, rid in marks_at.items():
        marks.mark(ax, n, rows.get(rid))
    ax.legend(loc="upper left", fontsize=7)


def nand_characterisation(rows, out, name):
    fig, axes = plt.subplots(1, 4, figsize=(17, 4))
    curve(axes[0], rows, "F12.w", {8: "F12a", 48: "F12b"}, "tMWS / tR")
    axes[0].set_xlabel("wordlines sensed in one block")
    axes[0].set_ylabel("tMWS (multiples of tR)")
    axes[0].set_title("intra-block MWS (Fig. 12)")
    curve(axes[1], rows, "F13.b", {8: "F13a", 32: "F13b"}, "tMWS / tR")
    axes[1].set_xlabel("blocks sensed, one wordline each")
    axes[1].set_ylabel("tMWS (multiples of tR)")
    axes[1].set_title("inter-block MWS (Fig. 13)")
    curve(axes[2], rows, "F14.b", {2: "F14a", 4: "F14b"}, "MWS power / read power")
    axes[2].set_xlabel("blocks sensed, one wordline each")
    axes[2].set_ylabel("power (multiples of a read's)")
    axes[2].set_title("inter-block MWS power (Fig. 14)")
    grouped_bars(axes[3], [("SLC", "S7a"), ("ESP", "S7b"), ("MLC", "S7c"), ("TLC", "S7d")],
                 [("sequential write", "{}")], rows, "write bandwidth (GB/s)")
    axes[3].set_title("SSD write bandwidth (Sec. 7.3)")
    fig.suptitle("NAND die model against Flash-Cosmos Figs. 12-14 and Sec. 7.3")
    save(fig, out, name, "mws")


def flashcosmos(rows, out, name):
    systems = [("FC", "Flash-Cosmos"), ("PB", "ParaBit"), ("ISP", "ISP")]
    means = {"bmi": ("B.FC", "B.PB"), "ims": ("I.FC", "I.PB"), "kcs": (None, None)}
    for figure, energy, ylabel, title in (
            ("speedup", "", "speed-up over OSP (x, log scale)", "Fig. 17: speed-up over OSP"),
            ("energy", "e", "energy efficiency over OSP (x, log scale)",
             "Fig. 18: energy efficiency over OSP")):
        panels = []
        for wl, prefix, xlabel in (("bmi", "B", "BMI: months m"), ("ims", "I", "IMS: images I"),
                                   ("kcs", "K", "KCS: clique size k")):
            pts = sorted({rid.split(".")[0] for rid in rows
                          if re.fullmatch(prefix + r"\d+K?\.[a-zA-Z]+", rid)},
                         key=lambda p: int(re.sub(r"\D", "", p)))
            if pts:
                panels.append((wl, prefix, xlabel, pts))
        if not panels:
            return
        table = dict(rows)
        if energy:  # Fig. 18's published points: FC's efficiency at m = 36 (rows EB36.*)
            for key, rid in (("FC", "EB36.FC"),):
                if "B36.e" + key in rows and rid in rows:
                    table["B36.e" + key] = dict(rows["B36.e" + key],
                                                published=rows[rid]["published"])
        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 4), squeeze=False)
        for ax, (wl, prefix, xlabel, pts) in zip(axes[0], panels):
            grouped_bars(ax, [(p[len(prefix):], p) for p in pts],
                         [(label, "{}." + energy + key) for key, label in systems], table, ylabel,
                         log=True)
            ax.set_xlabel(xlabel)
            if not energy:  # the published geometric means over the points
                for i, rid in enumerate(means[wl]):
                    pub = published_of(rows.get(rid)) if rid else None
                    if pub:
                        ax.axhline(pub[0], color=SIM[i], ls="--", lw=1,
                                   label="published mean %s %gx" % (systems[i][0], pub[0]))
                ax.legend(loc="upper left", fontsize=7)
            ax.set_title(wl.upper())
        fig.suptitle("Flash-Cosmos " + title)
        save(fig, out, name, figure)


def ftl(rows, out, name):
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    ops = sorted({int(m.group(1)) for rid in rows for m in [re.fullmatch(r"F(\d+)\.wa", rid)] if m})
    ax = axes[0]
    wa = [rows["F%d.wa" % o]["simulated"] for o in ops]
    ax.plot(ops, wa, "o-", color=SIM[0], label="write amplification (simulated)")
    if all("F%d.wa_greedy" % o in rows for o in ops):  # the estimate is wa / (wa / estimate)
        ax.plot(ops, [w / rows["F%d.wa_greedy" % o]["simulated"] for w, o in zip(wa, ops)], "k--",
                label="greedy-GC estimate (1+r)/2r (analytic)")
    ax.set_xlabel("over-provisioning (%)")
    ax.set_ylabel("write amplification (x)")
    ax.set_title("write amplification")
    ax.legend()
    ax = axes[1]
    for i, (kind, label) in enumerate((("mean", "mean"), ("p99", "p99"))):
        ax.plot(ops, [rows["F%d.%s" % (o, kind)]["simulated"] for o in ops], "o-", color=SIM[i],
                label="%s write latency (simulated)" % label)
    ax.set_xlabel("over-provisioning (%)")
    ax.set_ylabel("write latency (us)")
    ax.set_yscale("log")
    ax.set_title("write latency")
    ax.legend()
    fig.suptitle("The FTL under uniform random page writes (no published figure)")
    save(fig, out, name, "gc")


# ---- Willow ------------------------------------------------------------------------------------

def willow_io(rows, out, name):
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    grouped_bars(axes[0], [("read", "1"), ("write", "2")], [("Base-IO", "W.{}")], rows,
                 "bandwidth / PCIe bandwidth (x)")
    axes[0].set_title("Base-IO bandwidth, 4 KiB+ accesses")
    grouped_bars(axes[1], [("512 B read", "4"), ("512 B write", "5")],
                 [("Direct-IO / Base-IO", "W.{}")], rows, "throughput ratio (x)")
    axes[1].set_title("Direct-IO against Base-IO (XFS)")
    grouped_bars(axes[2], [("3 threads x 16", "3")], [("4 KiB reads", "W.{}")], rows,
                 "thousand IOPS")
    axes[2].set_title("Base-IO small reads")
    fig.suptitle("Willow Base-IO and Direct-IO throughput (Willow Fig. 4)")
    save(fig, out, name, "bandwidth")

    # Fig. 5: the 4 KiB read latency split into its parts, per path (W.10.. W.21, then on NAND).
    parts = ["host", "PCIe", "ring", "SPU software", "storage"]
    bars = []
    for rid, r in rows.items():
        m = re.fullmatch(r"W\.(\d+)", rid)
        if m and " 4 KiB read: " in r["quantity"]:
            who, part = r["quantity"].split(" 4 KiB read: ")
            bars.append((int(m.group(1)), who, part, r["simulated"]))
    if not bars:
        return
    order = []
    values = {}
    for _, who, part, v in sorted(bars):
        if who not in values:
            order.append(who)
            values[who] = {}
        for p in parts:
            if part.lower().startswith(p.lower()):
                values[who][p] = v / 1000.0
    fig, ax = plt.subplots(figsize=(9, 4))
    left = [0.0] * len(order)
    for i, p in enumerate(parts):
        w = [values[who].get(p, 0) for who in order]
        ax.barh(range(len(order)), w, left=left, color=SIM[i % len(SIM)], label=p)
        left = [a + b for a, b in zip(left, w)]
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels(order)
    ax.invert_yaxis()
    ax.set_xlabel("4 KiB read latency (us)")
    ax.legend(ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.18))
    ax.set_title("Where a 4 KiB read's time goes, simulated (Willow Fig. 5)")
    save(fig, out, name, "latency")


def willow_apps(rows, out, name):
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    ax = axes[0]
    threads = [1, 2, 4, 6]
    for i, (first, label) in enumerate(((1, "Atomic-Writes (MARS)"), (5, "host log (ARIES)"))):
        ids = ["A.%d" % (first + k) for k in range(4)]
        xs = [t for t, rid in zip(threads, ids) if rid in rows]
        ax.plot(xs, [rows[rid]["simulated"] for rid in ids if rid in rows], "o-", color=SIM[i],
                label=label + " (simulated)")
    title = "Atomic-Writes against a host log (Fig. 6)"
    if "A.9" in rows and published_of(rows["A.9"]):
        title += "\npublished: Atomic-Writes up to %gx the log; simulated %.2fx at 6" % (
            published_of(rows["A.9"])[0], rows["A.9"]["simulated"])
    ax.set_xlabel("threads")
    ax.set_ylabel("TPC-B-like throughput (thousand tx/s)")
    ax.set_ylim(0, None)
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right")
    grouped_bars(axes[1], [("read", "7"), ("write", "8")],
                 [("FlashCache / Caching", "C.{}")], rows, "mean 4 KiB latency ratio (x)")
    axes[1].set_title("Caching against FlashCache (Fig. 7)")
    grouped_bars(axes[2], [("GET 1 KiB", "get"), ("PUT 1 KiB", "put")],
                 [("Key-Value app", "kv.{}"), ("host store over the FS", "host.{}")],
                 pick(rows, {"kv.get": "K.1", "host.get": "K.2", "kv.put": "K.4",
                             "host.put": "K.5"}), "latency (us)")
    axes[2].set_title("Key-Value (Sec. 5)")
    fig.suptitle("Willow's SSD Apps")
    save(fig, out, name, "apps")


def rpc_latency(rows, out, name):
    kinds = []
    for rid, r in rows.items():
        m = re.fullmatch(r"R\.(\d+)", rid)
        if m and r["quantity"].endswith(", PCIe doorbells") and r["unit"] == "us":
            kinds.append((int(m.group(1)), r["quantity"][:-len(", PCIe doorbells")]))
    kinds.sort()
    fig, ax = plt.subplots(figsize=(9, 4))
    table = {}
    for n, what in kinds:
        table["d.%d" % n] = rows["R.%d" % n]
        table["c.%d" % n] = rows["R.%d" % (n + 1)]
    grouped_bars(ax, [(w.replace(" 4 KiB", "\n4 KiB"), str(n)) for n, w in kinds],
                 [("PCIe doorbells", "d.{}"), ("CCIX coherent queues", "c.{}")], table,
                 "round trip (us)")
    ax.set_title("Willow RPCs: doorbells against coherent queues (no published figure)")
    save(fig, out, name, "rpc")


FIGURES = {
    "ccix-latency": ccix_latency,
    "pcie-latency": pcie_latency,
    "ats-cost": ats_cost,
    "locality": locality,
    "atomics": atomics,
    "coherence": coherence,
    "lock-table": lock_table,
    "nand-characterisation": nand_characterisation,
    "flashcosmos": flashcosmos,
    "ftl": ftl,
    "willow-io": willow_io,
    "willow-apps": willow_apps,
    "rpc-latency": rpc_latency,
}


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def sweep_plots(path, out, quantities):
    """`canopy sweep --plot Q`: Q against the first varied key, a line per value of the others."""
    with open(path) as f:
        doc = json.load(f)
    keys = list(doc["vary"].keys())
    x_key, others = keys[0], keys[1:]
    for q in quantities:
        rows = [r for r in doc["rows"] if r["id"] == q]
        if not rows:
            continue
        lines = {}
        for r in rows:
            label = ", ".join("%s=%s" % (k, r["settings"][k]) for k in others)
            lines.setdefault(label, []).append((r["settings"][x_key], r["simulated"]))
        numeric = all(as_number(x) is not None for pts in lines.values() for x, _ in pts)
        categories = list(doc["vary"][x_key])
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for i, (label, pts) in enumerate(lines.items()):
            if numeric:
                pts = sorted(pts, key=lambda p: as_number(p[0]))
                xs = [as_number(x) for x, _ in pts]
            else:
                xs = [categories.index(x) for x, _ in pts]
            ax.plot(xs, [y for _, y in pts], "o-", color=SIM[i % len(SIM)],
                    label=label or "simulated")
        pub = published_of(rows[0])
        if pub and pub[1] == pub[2]:
            ax.axhline(pub[0], color="black", ls="--", lw=1, label="published %g" % pub[0])
        if not numeric:
            ax.set_xticks(range(len(categories)))
            ax.set_xticklabels(categories)
        unit = rows[0].get("unit") or ""
        ax.set_xlabel(x_key)
        ax.set_ylabel("%s%s" % (q, " (%s)" % unit if unit else ""))
        ax.set_title("%s: %s" % (doc["command"] + (" " + doc["args"][0] if doc["args"] else ""),
                                 rows[0]["quantity"]), fontsize=9)
        ax.legend(fontsize=7)
        save(fig, out, "sweep", re.sub(r"[^A-Za-z0-9_.-]", "_", q))


def main():
    if sys.argv[1] == "--sweep":
        sweep_plots(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    path, out = sys.argv[1], sys.argv[2]
    with open(path) as f:
        doc = json.load(f)
    name = doc["experiment"]
    rows = {r["id"]: r for r in doc["rows"]}
    draw = FIGURES.get(name)
    if draw:
        draw(rows, out, name)


if __name__ == "__main__":
    main()
