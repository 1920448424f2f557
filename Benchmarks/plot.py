#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Draws the dispatch rows of bench-c.json or bench-swift.json as a PNG: ns per dispatch
against handler count (0, 1, 10, 100), log-log (symlog x so 0 handlers has a place), one
line per library, min-max as error bars.

    python3 Benchmarks/plot.py docs/bench/bench-c.json docs/bench/bench-c.png
    python3 Benchmarks/plot.py docs/bench/bench-swift.json docs/bench/bench-swift.png

Needs matplotlib (Debian: python3-matplotlib, for /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

STYLE = {  # key: (label, color, marker, linewidth)
    "qtbus": ("qtbus", "#d62728", "o", 2.6),
    "qtbus_id": ("qtbus by type id", "#8c564b", "o", 2.0),
    "qtbus_cxx": ("qtbus.hpp (C++ API)", "#e377c2", "o", 1.5),
    "glib": ("GLib GSignal", "#1f77b4", "s", 1.5),
    "sigc": ("libsigc++ 3 (not thread-safe)", "#2ca02c", "^", 1.5),
    "boost": ("Boost.Signals2", "#9467bd", "D", 1.5),
    "fnptr": ("limit: fn-ptr array", "#7f7f7f", "x", 1.2),
    "mutex": ("limit, safe: mutex + snapshot", "#bcbd22", "+", 1.2),
    # bench-swift.json (Benchmarks/Swift/)
    "nc": ("NotificationCenter (Foundation)", "#ff7f0e", "s", 1.5),
    "opencombine": ("OpenCombine PassthroughSubject", "#1f77b4", "^", 1.5),
    "limit": ("limit: Swift array of closures", "#7f7f7f", "x", 1.2),
}

# What each benchmark's JSON ("schema") plots: the title's first line, the x label and
# qtbus's label.
KINDS = {
    "qtbus-bench-c": ("C dispatch cost, one thread: qtbus vs GLib, libsigc++, Boost.Signals2",
                      "handlers", "qtbus"),
    "qtbus-bench-swift": ("Swift dispatch cost, one thread: qtbus vs NotificationCenter, OpenCombine",
                          "closures", "qtbus (Swift API)"),
}


def main(src, dst):
    with open(src) as f:
        data = json.load(f)
    # The plain handlers only: the rows whose handlers touch memory are another line.
    rows = sorted((c for c in data["cases"] if c["id"].startswith("dispatch_") and not c["id"].endswith("_touching")),
                  key=lambda c: c["handlers"])
    if not rows:
        sys.exit("plot.py: no dispatch rows in " + src)
    title, xlabel, qtbus_label = KINDS[data.get("schema", "qtbus-bench-c/1").split("/")[0]]
    fig, ax = plt.subplots(figsize=(9, 6), dpi=110)
    for key, (label, color, marker, width) in STYLE.items():
        if key == "qtbus":
            label = qtbus_label
        xs, ys, lo, hi = [], [], [], []
        for row in rows:
            r = row["results"].get(key)
            if not r or "median" not in r:
                continue
            xs.append(row["handlers"])
            ys.append(r["median"])
            lo.append(r["median"] - r["min"])
            hi.append(r["max"] - r["median"])
        if xs:
            ax.errorbar(xs, ys, yerr=[lo, hi], label=label, color=color, marker=marker,
                        linewidth=width, markersize=6, capsize=3,
                        linestyle="--" if key in ("fnptr", "mutex", "limit") else "-",
                        zorder=3 if key == "qtbus" else 2)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xticks([r["handlers"] for r in rows])
    ax.set_xticklabels([str(r["handlers"]) for r in rows])
    ax.set_xlim(-0.1, 130)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("ns per dispatch (median, min-max bars; log scale)")
    machine = data.get("machine", {})
    ax.set_title(f"{title}\n"
                 f"{machine.get('cpu', '?')}, {machine.get('cpus_allowed', '?')} CPUs, "
                 f"{data.get('date', '')[:10]}", fontsize=11)
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.12)
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    fig.savefig(dst)
    print(f"wrote {dst}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: plot.py BENCH-C.JSON|BENCH-SWIFT.JSON OUT.PNG")
    main(sys.argv[1], sys.argv[2])
