"""report.html: one self-contained page (no external URL) drawn from a report.json dictionary.

Sections: what was checked and the verdict, the findings (one per distinct problem: kind, ops,
graphs, the replay command, a repro snippet and the minimal graph), the per-op table, error
distributions per op (matplotlib, embedded as base64 PNG), the individual failing graphs, folded
(snippet, problems, and the graph drawn by graphviz when the `dot` binary exists, its DOT text
otherwise), and the settings and exact command line that repeat the run.
"""

from __future__ import annotations

import base64
import io
import math
import re
import shutil
from pathlib import Path
from typing import Any

from gradcheck.atomic import write_text
from gradcheck.campaign.findings import Finding, summary
from gradcheck.campaign.report_json import decode_float
from gradcheck.engines.snippets import graph_snippet
from gradcheck.graphs.ir import Graph
from gradcheck.printable import html_text as escape

_TABLE_COLUMNS = (
    ("max_abs_err_torch", "abs err vs torch"),
    ("max_rel_err_torch", "rel err vs torch"),
    ("max_abs_err_numeric", "abs err vs numeric"),
    ("max_rel_err_numeric", "rel err vs numeric"),
    ("max_forward_err", "forward err vs torch"),
)

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1.2em; }
body { color: #222; } @media (max-width: 900px) { table { font-size: 0.78em; } }
h1 { margin-bottom: 0.2em; overflow-wrap: anywhere; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
.verdict { font-size: 1.2em; font-weight: bold; padding: 0.4em 0.8em; display: inline-block; }
.pass { background: #dff5e1; color: #17602a; } .fail { background: #fde2e1; color: #8a1c13; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
td { white-space: nowrap; font-variant-numeric: tabular-nums; }
th { background: #f4f4f4; } td.op, th.op { text-align: left; font-family: monospace; }
tr.failed td { background: #fde2e1; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
li, p, td.problem { overflow-wrap: anywhere; } td.problem { text-align: left; font-size: 0.85em; }
dl.settings { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.15em 1.2em; }
dl.settings dt { font-weight: bold; }
dl.settings dd { margin: 0; font-family: monospace; overflow-wrap: anywhere; }
.figure img { max-width: 100%; }
.finding { border-left: 4px solid #c0392b; padding: 0.1em 0 0.1em 1em; margin: 1em 0; }
.finding.note { border-left-color: #d4a017; }
.finding h3 { margin: 0.3em 0; } .kind { font-family: monospace; font-size: 0.9em; color: #555; }
code.repro { display: block; background: #f7f7f7; padding: 0.5em; overflow-wrap: anywhere; }
"""


def _fmt(value: Any) -> str:
    x = decode_float(value)
    if x is None:
        return "–"
    if x == 0.0:
        return "0"
    if not math.isfinite(x):
        return str(x)
    return f"{x:.2e}"


def _header(report: dict) -> str:
    s, t = report["settings"], report["totals"]
    kind = "tensor" if s["tensor"] else "scalar"
    ops = ", ".join(s["ops"]) if s["ops"] else "every op the engine supports"
    ok = report.get("passed", t["failed"] == 0)
    verdict = (
        f"all {t['graphs']} graphs agree"
        if t["failed"] == 0
        else f"{t['failed']} of {t['graphs']} graphs disagree"
    )
    if "findings" in report:
        verdict += f"; {summary_of(report)}"
    return f"""
<h1>gradcheck parity campaign: {escape(s["engine"])}</h1>
<p>{t["graphs"]} random {kind} graphs, each at {s.get("points")} input points (seed {s["seed"]};
ops: {escape(ops)}). Each graph's
gradients from <b>{escape(s["engine"])}</b> are compared with <b>torch.autograd</b> (float64) and
with a <b>numerical oracle</b> (finite differences); its forward value with torch's.</p>
<p class="verdict {"pass" if ok else "fail"}">{escape(verdict)}</p>
{_run_line(report)}
<p>{t.get("points_checked", 0)} graph instances (graph × input point) checked, {t.get("points_skipped", 0)}
skipped (the numerical oracle could not vouch for the point), {t.get("points_settled", 0)} where only the
oracle dissented and a precise one (mpmath) cleared the engine.</p>
"""


def _run_line(report: dict) -> str:
    """Which run this page shows: report.json of the same run carries the same id."""
    run_id = (report.get("run") or {}).get("run_id")
    if not run_id:
        return ""
    return (
        f'<p class="run">Run <code id="run-id">{escape(run_id)}</code>: the report.json written '
        "with this page carries the same run id.</p>"
    )


def summary_of(report: dict) -> str:
    """The findings' one-line summary, as the console prints it."""
    findings = [Finding.from_dict(f) for f in report.get("findings", [])]
    return summary(findings, report.get("conventions", "torch"))


def _findings(report: dict) -> str:
    """The distinct problems, first: each with kind, graphs, replay command, repro and graph."""
    if "findings" not in report:
        return ""
    conventions = report.get("conventions", "torch")
    findings = [Finding.from_dict(f) for f in report["findings"]]
    parts = ['<h2 id="findings">Findings</h2>', f"<p><b>{escape(summary(findings, conventions))}</b></p>"]
    for i, f in enumerate(findings):
        failing = f.is_failure(conventions)
        graph = Graph.from_dict(f.graph)
        code = f.snippet or graph_snippet(graph, "torch", second_order=f.check == "second-derivative")
        language = (
            "the engine's code (after torch's, when its snippet shows both)"
            if f.snippet
            else "torch's code (the engine has no snippet spelling)"
        )
        parts.append(
            f'<div class="finding{"" if failing else " note"}" id="finding-{i}">'
            f"<h3>{'finding' if failing else 'note'} {i}: {escape(f.title)}</h3>"
            f'<p class="kind">kind {escape(str(f.kind))} · check {escape(f.check)} · '
            f"found by {escape(f.phase)} · {escape(f.covers)}</p>"
            f"{_problems(list(f.problems[:3]))}"
            "<p>Replay it (exit 1 while it fails, 0 once fixed):</p>"
            f'<code class="repro">{escape(f.repro)}</code>'
            f"<p>Repro, in {language}:</p><pre>{escape(code)}</pre></div>"
        )
    return "\n".join(parts)


def _structure(report: dict) -> str:
    """The structural phase's checks, one row each: what it exercises, its outcome, the evidence."""
    structure = report.get("structure")
    if not structure:
        return ""
    rows = "".join(
        f"<tr><td>{escape(c['name'])}</td><td>{escape(c['status'])}</td>"
        f"<td>{c['failures']} of {c['runs']}</td><td>{escape(c['detail'])}</td></tr>"
        for c in structure["checks"]
    )
    return f"""
<h2 id="structure">Structural phase: the engine's graph code</h2>
<p>Shared nodes, diamonds, backward() twice, gradients reset and taken again, interior nodes'
gradients and deep chains, on the simplest ops the engine has, against torch; each graph rebuilt
several times with the earlier builds kept alive (so object ids and set orders change).</p>
<table><tr><th>check</th><th>status</th><th>rebuilds that differ</th><th>detail</th></tr>{rows}</table>
"""


_OP_COLUMNS = (
    *_TABLE_COLUMNS,
    ("p99_rel_err_torch", "rel err vs torch, p99"),
    ("p99_rel_err_numeric", "rel err vs numeric, p99"),
)


def _op_table(report: dict) -> str:
    head = "".join(f"<th>{escape(label)}</th>" for _, label in _OP_COLUMNS)
    rows = []
    for op, st in report["ops"].items():
        cells = "".join(f"<td>{_fmt(st.get(key))}</td>" for key, _ in _OP_COLUMNS)
        cls = ' class="failed"' if st["failures"] else ""
        rows.append(
            f"<tr{cls}><td class=op>{escape(op)}</td><td>{st['graphs']}</td>{cells}"
            f"<td>{st['failures']}</td></tr>"
        )
    return f"""
<h2 id="ops">Per op</h2>
<p>For each op: the graphs that used it, the largest error among those graphs, the 99th
percentile of their relative errors (what the gradient-regression gate compares; one
ill-conditioned graph moves the maximum, not the percentile), and how many of them failed
because of this op (graphs whose minimal failing graph contains it).</p>
<div class="scroll"><table><thead><tr><th class=op>op</th><th>graphs</th>{head}<th>failures</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></div>
"""


def distribution_png(report: dict) -> bytes | None:
    """Small multiples: per op, how the graphs' relative errors spread over decades (PNG bytes)."""
    ops = report["ops"]
    if not ops:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    labels = report["histogram_bins"]
    cols = min(3, len(ops))
    rows = math.ceil(len(ops) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.4 * cols, 2.5 * rows + 0.9), squeeze=False, sharex=True)
    xs = list(range(len(labels)))
    for ax, (op, st) in zip(axes.flat, ops.items()):
        for metric, colour, name in (
            ("max_rel_err_torch", "#1f77b4", "vs torch"),
            ("max_rel_err_numeric", "#ff7f0e", "vs numeric"),
        ):
            counts = st["histograms"][metric]
            ax.step(xs, counts, where="mid", color=colour, label=name)
        ax.set_title(f"{op} ({st['graphs']} graphs)", fontsize=11, color="#8a1c13" if st["failures"] else "k")
        ax.tick_params(labelsize=10)
    for ax in list(axes.flat)[len(ops) :]:
        ax.set_visible(False)
    ticks = [i for i in xs if i % 4 == 1 or labels[i] in ("0", "non-finite")]
    for ax in axes[-1]:
        ax.set_xticks(ticks)
        ax.set_xticklabels([_short(labels[i]) for i in ticks], rotation=60, fontsize=10)
    handles, names = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncol=2, fontsize=10, frameon=False)  # above the panels
    fig.supxlabel("relative gradient error of a graph (decades)", fontsize=11)
    fig.supylabel("graphs", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.45 / (2.5 * rows + 0.9)))
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96)
    plt.close(fig)
    return buffer.getvalue()


def _short(label: str) -> str:
    match = re.search(r"1e-?\d+", label)
    return label if label in ("0", "non-finite") or match is None else match.group(0)


def _distributions(report: dict) -> str:
    png = distribution_png(report)
    if png is None:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return f"""
<h2 id="distributions">Error distributions per op</h2>
<p>Each panel counts, for the graphs that used the op, the graph's largest relative gradient
error against torch (blue) and against the numerical oracle (orange), by decade. Errors against
torch sit near float64 rounding; against the oracle, near the finite-difference truncation error.</p>
<div class="figure"><img alt="error distributions per op" src="data:image/png;base64,{data}"></div>
"""


def graph_dot(graph: dict[str, Any]) -> str:
    """DOT source of a graph dict (graph.py's JSON form): inputs as boxes, ops as ellipses."""
    n = len(graph["inputs"])
    lines = ["digraph G {", "  rankdir=LR;", '  node [fontname="monospace", fontsize=10];']
    for i, inp in enumerate(graph["inputs"]):
        label = f"{inp['name']} = {_value_label(inp['value'])}"
        lines.append(f"  n{i} [shape=box, label={_dot_string(label)}];")
    outputs = set(graph["outputs"])
    for k, node in enumerate(graph["nodes"]):
        i = n + k
        attrs = ", ".join(f"{a}={_value_label(v)}" for a, v in sorted(node.get("attrs", {}).items()))
        label = f"v{i} = {node['op']}" + (f"({attrs})" if attrs else "")
        style = ", peripheries=2" if i in outputs else ""
        lines.append(f"  n{i} [shape=ellipse, label={_dot_string(label)}{style}];")
        for position, arg in enumerate(node["args"]):
            lines.append(f'  n{arg} -> n{i} [label="{position}", fontsize=8];')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _value_label(value: Any) -> str:
    if isinstance(value, list):
        return f"array{list(_shape(value))}" if value and isinstance(value[0], list) else repr(value)[:40]
    return repr(value)


def _shape(value: Any) -> tuple[int, ...]:
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _dot_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(dot_source: str) -> str | None:
    """The graph drawn as inline SVG when graphviz's `dot` binary is installed, else None."""
    if not dot_source or shutil.which("dot") is None:
        return None
    import graphviz

    try:
        svg = graphviz.Source(dot_source).pipe(format="svg").decode("utf-8")
    except (graphviz.ExecutableNotFound, graphviz.CalledProcessError):
        return None
    svg = svg[svg.find("<svg") :]
    return re.sub(r'\s(xmlns(:xlink)?)="[^"]*"', "", svg)  # inline SVG needs no namespace URLs


def _problems(problems: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(p)}</li>" for p in problems) + "</ul>"


def _failure(failure: dict) -> str:
    """A shrunk failing graph in full: snippet, problems, drawing, and the graph as found."""
    parts = [f'<h3 id="graph-{failure["index"]}">graph #{failure["index"]}</h3>']
    ops = ", ".join(failure.get("shrunk_ops") or [])
    parts.append(f"<p>Shrunk to a small graph that still fails (ops: <code>{escape(ops)}</code>):</p>")
    parts.append(f"<pre>{escape(failure['shrunk_snippet'])}</pre>")
    parts.append("<p>It fails with:</p>" + _problems(failure["problems"]))
    if failure.get("corpus_file"):
        parts.append(
            f"<p>Saved to the regression corpus as <code>{escape(failure['corpus_file'])}</code>.</p>"
        )
    dot = graph_dot(failure["shrunk_graph"])
    drawn = render_dot(dot)
    if drawn is not None:
        parts.append(f'<div class="figure">{drawn}</div>')
    else:
        parts.append("<p>The graph as DOT (graphviz's <code>dot</code> is not installed here):</p>")
        parts.append(f"<pre>{escape(dot)}</pre>")
    figs = " · ".join(f"{escape(label)} {_fmt(failure['figures'].get(key))}" for key, label in _TABLE_COLUMNS)
    parts.append("<details><summary>The graph as found</summary>")
    parts.append(f"<p>ops: <code>{escape(', '.join(failure['ops']))}</code>; {figs}</p>")
    parts.append(_problems(failure.get("found_problems") or []))
    parts.append(f"<pre>{escape(failure.get('snippet') or '')}</pre></details>")
    return "\n".join(parts)


def _failures(report: dict) -> str:
    failures = report["failures"]
    if not failures:
        return '<h2 id="failures">Failing graphs</h2><p>None.</p>'
    shrunk = [f for f in failures if f.get("shrunk_snippet")]
    rest = [f for f in failures if not f.get("shrunk_snippet")]
    parts = [f'<h2 id="failures">Failing graphs ({len(failures)})</h2>']
    parts.append("<p>Each is counted in a finding above; here one by one, folded.</p>")
    parts.append(f"<details><summary>Show the {len(failures)} failing graphs</summary>")
    parts += [_failure(f) for f in shrunk]
    if rest:
        rows = "".join(
            f"<tr><td>{f['index']}</td><td class=op>{escape(', '.join(f['ops']))}</td>"
            f"<td class=problem>{escape(f['problems'][0] if f['problems'] else '')}</td></tr>"
            for f in rest
        )
        parts.append(
            f"<h3>{len(rest)} more, not shrunk (past --max-shrink)</h3>"
            "<table><thead><tr><th>graph</th><th class=op>ops</th><th class=problem>first problem</th>"
            f"</tr></thead><tbody>{rows}</tbody></table>"
        )
    parts.append("</details>")
    return "\n".join(parts)


def _settings(report: dict) -> str:
    s, run = report["settings"], report["run"]
    rows = [
        ("run id", run.get("run_id") or "–"),
        ("command as typed", run.get("command") or "–"),
        ("engine", s["engine"]),
        ("graphs", s["graphs"]),
        ("seed", s["seed"]),
        ("graph kind", "tensor" if s["tensor"] else "scalar"),
        ("points per graph", s.get("points")),
        ("ops", ", ".join(s["ops"]) if s["ops"] else "all"),
        ("jobs", run.get("jobs")),
        ("time", f"{run.get('seconds')} s ({run.get('graphs_per_second')} graphs/s while checking)"),
        ("finished", run.get("finished")),
        ("schema", report["schema_version"]),
        *[(name, version) for name, version in (run.get("versions") or {}).items()],
    ]
    items = "".join(f"<dt>{escape(str(k))}</dt><dd>{escape(str(v))}</dd>" for k, v in rows)
    return f"""
<h2 id="settings">Settings: repeat this run</h2>
<p>The figures depend only on engine, graphs, seed, ops, graph kind and points (not on jobs).
This command repeats the run with every setting spelled out:</p>
<pre>{escape(run.get("repeat_command") or "")}</pre>
<dl class="settings">{items}</dl>
"""


def render_html(report: dict) -> str:
    """The whole page as one string."""
    title = f"gradcheck: {report['settings']['engine']}, {report['totals']['graphs']} graphs"
    body = "\n".join(
        [
            _header(report),
            _findings(report),
            _structure(report),
            _op_table(report),
            _distributions(report),
            _failures(report),
            _settings(report),
        ]
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<link rel="icon" href="data:,"><style>{_CSS}</style></head>
<body>
{body}
</body></html>
"""


def write_html(report: dict, path: Path) -> Path:
    """Write the page atomically (a crash mid-write leaves the previous page, not half of one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text(path, render_html(report))
