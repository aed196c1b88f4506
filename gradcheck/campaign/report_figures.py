"""report.html's figure: how each op's graphs' relative errors spread over decades, as small
multiples in one small PNG; the only import of matplotlib."""

from __future__ import annotations

import io
import math
import re


def distribution_png(report: dict) -> bytes | None:
    """Small multiples: per op, how the graphs' relative errors spread over decades (PNG bytes,
    four panels a row to fit 800 px, in a 16-colour palette to keep the page small)."""
    ops = report["ops"]
    if not ops:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    labels = report["histogram_bins"]
    cols = min(4, len(ops))
    rows = math.ceil(len(ops) / cols)
    width, height, top, bottom = 2.45, 1.45, 0.5, 1.05  # inches: a panel; the legend; the ticks and label
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
    fig.legend(handles, names, loc="upper center", ncol=2, fontsize=9, frameon=False)  # above the panels
    fig.supxlabel("relative gradient error of a graph (decades)", fontsize=9, y=0.02)
    fig.supylabel("graphs", fontsize=9)
    total = height * rows + top + bottom  # margins in inches: tight_layout takes seconds for 40 panels
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
    return _palette(buffer.getvalue())


def _palette(png: bytes) -> bytes:
    """The PNG in 16 colours (a quarter of the bytes; the plot has fewer colours than that)."""
    from PIL import Image  # pillow: a dependency of matplotlib

    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(16)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _short(label: str) -> str:
    match = re.search(r"1e-?\d+", label)
    return label if label in ("0", "non-finite") or match is None else match.group(0)
