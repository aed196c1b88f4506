"""report.html's figure: how each op's graphs' relative errors spread over decades, as small
multiples in one inline SVG written from the histograms (no plotting library: matplotlib cost a
run about two seconds, its import and one render, for a figure of a few step lines)."""

from __future__ import annotations

import math
from html import escape

_PANEL_W, _PANEL_H = 196, 116  # px: one op's panel, title included
_LEFT, _TOP, _BOTTOM = 48, 40, 84  # px: the y label and ticks; the legend; the x ticks and label
_PAD_L, _PAD_T, _PAD_B = 26, 18, 4  # px inside a panel: its y tick labels; its title
_SERIES = (
    ("max_rel_err_torch", "#1f77b4", "vs torch"),
    ("max_rel_err_numeric", "#ff7f0e", "vs numeric"),
)
_FAILED, _TEXT, _AXIS = "#8a1c13", "#000", "#444"


def distribution_svg(report: dict) -> str | None:
    """Small multiples: per op, how the graphs' relative errors spread over decades (an `<svg>`
    element for the page, four panels a row to fit 800 px), or None without ops."""
    ops = report["ops"]
    if not ops:
        return None
    labels = report["histogram_bins"]
    cols = min(4, len(ops))
    rows = math.ceil(len(ops) / cols)
    width = _LEFT + cols * _PANEL_W + 8
    height = _TOP + rows * _PANEL_H + _BOTTOM
    parts = [
        f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        'font-family="sans-serif" font-size="9">',
        "<title>error distributions per op</title>",
        f'<rect width="{width}" height="{height}" fill="#fff"/>',
    ]
    middle = _LEFT + cols * _PANEL_W / 2
    for k, (_, colour, name) in enumerate(_SERIES):  # the legend, above the panels
        x = middle - 90 + k * 100
        parts.append(f'<line x1="{x}" y1="18" x2="{x + 20}" y2="18" stroke="{colour}" stroke-width="1.5"/>')
        parts.append(f'<text x="{x + 25}" y="21" font-size="11">{name}</text>')
    last_in_column = {i % cols: i for i in range(len(ops))}
    for i, (op, st) in enumerate(ops.items()):
        x0 = _LEFT + (i % cols) * _PANEL_W
        y0 = _TOP + (i // cols) * _PANEL_H
        ticks = i in last_in_column.values()
        parts.append(_panel(op, st, labels, x0, y0, ticks))
    parts.append(
        f'<text x="{middle}" y="{height - 6}" text-anchor="middle">'
        "relative gradient error of a graph (decades)</text>"
    )
    mid_y = _TOP + rows * _PANEL_H / 2
    parts.append(f'<text transform="translate(10 {mid_y}) rotate(-90)" text-anchor="middle">graphs</text>')
    parts.append("</svg>")
    return "".join(parts)


def _panel(op: str, st: dict, labels: list[str], x0: float, y0: float, ticks: bool) -> str:
    """One op's panel at (x0, y0): its title (red when the op failed), its axes, y ticks, the two
    step lines and, on the lowest panel of a column, the x tick labels."""
    left, top = x0 + _PAD_L, y0 + _PAD_T
    w, h = _PANEL_W - _PAD_L - 14, _PANEL_H - _PAD_T - _PAD_B - 14
    n = len(labels)
    series = [st["histograms"][metric] for metric, _, _ in _SERIES]
    step = _step(max((max(s) for s in series if s), default=0))
    top_count = max(step, step * math.ceil(max((max(s) for s in series if s), default=0) / step))

    def x_of(b: float) -> str:
        return f"{round(left + (b + 0.5) / n * w, 1):g}"

    def y_of(c: float) -> str:
        return f"{round(top + h - c / top_count * h, 1):g}"

    colour = _FAILED if st["failures"] else _TEXT
    out = [
        f'<text x="{left + w / 2}" y="{y0 + 12}" text-anchor="middle" fill="{colour}">'
        f"{escape(op)} ({st['graphs']})</text>",
        f'<g stroke="{_AXIS}" stroke-width="0.8" fill="none">'
        f'<rect x="{left}" y="{top}" width="{w}" height="{h}"/>',
    ]
    counts = range(0, top_count + 1, step)
    bins = [b for b in range(n) if b % 4 == 1 or labels[b] in ("0", "non-finite")]
    marks = "".join(f"M{left - 3} {y_of(c)}h3" for c in counts)
    marks += "".join(f"M{x_of(b)} {top + h}v3" for b in bins)
    out.append(f'<path d="{marks}"/></g><g font-size="7" text-anchor="end">')
    out += [f'<text x="{left - 5}" y="{float(y_of(c)) + 3:g}">{c}</text>' for c in counts]
    if ticks:
        out += [
            f'<text transform="translate({float(x_of(b)) + 2:g} {top + h + 8}) rotate(-60)">'
            f"{escape(_short(labels[b]))}</text>"
            for b in bins
        ]
    out.append("</g>")
    for values, (_, stroke, _) in zip(series, _SERIES):  # a step at each bin, centred on it
        d = f"M{x_of(-0.5)} {y_of(values[0])}" + "".join(
            f"V{y_of(c)}H{x_of(b + 0.5)}" for b, c in enumerate(values)
        )
        out.append(f'<path d="{d}" fill="none" stroke="{stroke}"/>')
    return "".join(out)


def _step(largest: float) -> int:
    """A round step (1, 2 or 5 times a power of ten) giving at most four y ticks above 0."""
    step = 1
    while largest / step > 4:
        for factor in (2, 2.5, 2):  # 1, 2, 5, 10, 20, 50, ...
            step = int(step * factor)
            if largest / step <= 4:
                break
    return step


def _short(label: str) -> str:
    """A bin label by its first power of ten ("[1e-18, 1e-17)": "1e-18"; "(0, 1e-17)": "1e-17")."""
    if label in ("0", "non-finite"):
        return label
    for bound in label.replace(",", " ").split():
        if bound.strip("([)>=").startswith("1e"):
            return bound.strip("([)>=")
    return label
