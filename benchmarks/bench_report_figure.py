"""report.html's distributions figure: the inline SVG written from the histograms
(`gradcheck.campaign.report_figures`) against the matplotlib PNG it replaced (pyplot, Agg, a
16-colour palette; its code kept below), side by side on the same report.

    python benchmarks/bench_report_figure.py [--ops 4 16 40] [--repeat 5]

Each row: the ops (panels) of a synthetic report, the first call's seconds (what one `gradcheck
run` pays: matplotlib's import included for the PNG), the best of the later calls, the bytes each
adds to the page, and the ratios PNG / SVG. Prints; asserts nothing.

Not a pytest-benchmark benchmark: the first call, which imports matplotlib once per process, is
the figure a user pays for, and pytest-benchmark times repeated calls in one process.
"""

from __future__ import annotations

import argparse
import base64
import io
import math
import random
import re
import time

from gradcheck.campaign.report_figures import distribution_svg
from gradcheck.campaign.report_json import histogram_labels


def synthetic_report(ops: int, seed: int = 0) -> dict:
    """A report's `ops` and `histogram_bins` as report.json has them: per op, graphs spread over a
    few decades against torch and against the oracle, every third op with failures."""
    rng = random.Random(seed)
    labels = histogram_labels()
    out = {}
    for k in range(ops):
        graphs = rng.randint(20, 400)
        hist = {}
        for metric, centre in (("max_rel_err_torch", 4), ("max_rel_err_numeric", 10)):
            counts = [0] * len(labels)
            for _ in range(graphs):
                counts[min(len(labels) - 1, max(0, round(rng.gauss(centre, 1.5))))] += 1
            hist[metric] = counts
        out[f"op{k}"] = {"graphs": graphs, "failures": int(k % 3 == 0), "histograms": hist}
    return {"ops": out, "histogram_bins": labels}


def distribution_png(report: dict) -> bytes | None:
    """The figure as it was: matplotlib's pyplot small multiples, saved as a palette PNG."""
    ops = report["ops"]
    if not ops:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    labels = report["histogram_bins"]
    cols = min(4, len(ops))
    rows = math.ceil(len(ops) / cols)
    width, height, top, bottom = 2.45, 1.45, 0.5, 1.05
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, height * rows + top + bottom), squeeze=False, sharex=True
    )
    xs = list(range(len(labels)))
    for ax, (op, st) in zip(axes.flat, ops.items()):
        for metric, colour, name in (
            ("max_rel_err_torch", "#1f77b4", "vs torch"),
            ("max_rel_err_numeric", "#ff7f0e", "vs numeric"),
        ):
            ax.step(xs, st["histograms"][metric], where="mid", color=colour, label=name, linewidth=1)
        ax.set_title(f"{op} ({st['graphs']})", fontsize=9, color="#8a1c13" if st["failures"] else "k")
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(ops) :]:
        ax.set_visible(False)
    ticks = [i for i in xs if i % 4 == 1 or labels[i] in ("0", "non-finite")]
    for ax in axes[-1]:
        ax.set_xticks(ticks)
        ax.set_xticklabels([_short(labels[i]) for i in ticks], rotation=60, fontsize=7)
    handles, names = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncol=2, fontsize=9, frameon=False)
    fig.supxlabel("relative gradient error of a graph (decades)", fontsize=9, y=0.02)
    fig.supylabel("graphs", fontsize=9)
    total = height * rows + top + bottom
    fig.subplots_adjust(
        left=0.6 / (width * cols),
        right=0.99,
        bottom=bottom / total,
        top=1 - top / total,
        hspace=0.55,
        wspace=0.3,
    )
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80)
    plt.close(fig)
    from PIL import Image

    image = Image.open(io.BytesIO(buffer.getvalue())).convert("RGB").quantize(16)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _short(label: str) -> str:
    match = re.search(r"1e-?\d+", label)
    return label if label in ("0", "non-finite") or match is None else match.group(0)


def timed(render, report: dict, repeat: int) -> tuple[float, float, int]:
    """(first call's seconds, best later call's seconds, bytes on the page)."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = render(report)
        times.append(time.perf_counter() - start)
    size = len(base64.b64encode(out)) if isinstance(out, bytes) else len(out.encode())
    return times[0], min(times[1:] or times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, nargs="+", default=[4, 16, 40])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(
        f"{'ops':>4} {'png first s':>11} {'svg first s':>11} {'ratio':>7} {'png s':>7} {'svg s':>7} "
        f"{'ratio':>7} {'png B':>8} {'svg B':>8} {'ratio':>6}"
    )
    for ops in args.ops:
        report = synthetic_report(ops)
        p_first, p_best, p_size = timed(distribution_png, report, args.repeat)
        s_first, s_best, s_size = timed(distribution_svg, report, args.repeat)
        print(
            f"{ops:>4} {p_first:>11.3f} {s_first:>11.4f} {p_first / s_first:>7.0f} {p_best:>7.3f} "
            f"{s_best:>7.4f} {p_best / s_best:>7.0f} {p_size:>8} {s_size:>8} {p_size / s_size:>6.2f}"
        )


if __name__ == "__main__":
    main()
