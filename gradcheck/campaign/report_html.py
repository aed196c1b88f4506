"""report.html: one self-contained page (no external URL) drawn from a report.json dictionary,
read at 800 px without sideways scrolling, and small: under 300 KB for 2,000 graphs of which
1,500 fail (what each graph showed is in report.json; the page says what to fix first).

It opens on the overview the console prints (`gradcheck.campaign.overview`): the verdict in a
line, one row per bug, graph-code finding and adapter fault (each linking to its details), the
adapters' fixes, the unexplained graphs, the edge behaviour as one table (a row per op) and the
conventions as notes. Below it: each finding in detail (its list of graphs folded; the code
that reproduces a bug or graph-code finding), the structural phase's checks, the per-op table,
the error distributions per op (`report_figures`, an inline SVG), the failing graphs by
finding, folded (the first shrunk graph of each drawn by graphviz when the `dot` binary exists,
its DOT text otherwise), and the settings and exact command line that repeat the run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gradcheck.campaign import tiers
from gradcheck.campaign.findings import Finding
from gradcheck.campaign.graph_drawing import graph_dot, render_dot
from gradcheck.campaign.mistake_match import local_lines
from gradcheck.campaign.overview import (
    EDGE_HEADING,
    EDGE_REGIONS,
    NOTES_HEADING,
    SHOWN_PROBLEMS,
    Overview,
    finding_code,
    overview,
)
from gradcheck.campaign.report_figures import distribution_svg
from gradcheck.campaign.report_json import decode_float
from gradcheck.parity.wording import figure
from gradcheck.parity.wording import html_text as escape

_TABLE_COLUMNS = (
    ("max_abs_err_torch", "abs err vs torch"),
    ("max_rel_err_torch", "rel err vs torch"),
    ("max_abs_err_numeric", "abs err vs numeric"),
    ("max_rel_err_numeric", "rel err vs numeric"),
    ("max_forward_err", "forward err vs torch"),
)
# The tiers whose findings show the code that reproduces them (what the engine's author fixes);
# the others show their replay command, which prints the numbers side by side.
_CODE_TIERS = (tiers.TORCH_OFF, tiers.BUG, tiers.GRAPH_CODE)
# At most this many shrunk graphs are drawn (or their DOT text shown): the first of each finding.
DRAWN_GRAPHS = 10
# At most this many findings show their code (a repro with its verdict is ~3 KB); the others, and
# the code of every finding, are in report.json's `snippet`, and each replays by its command.
CODE_SHOWN = 20

_CSS = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 64em; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; font-size: 1.5em; overflow-wrap: anywhere; }
h2 { border-bottom: 1px solid #ccc; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { font-size: 1.05em; margin: 1em 0 0.3em; overflow-wrap: anywhere; }
.verdict { font-size: 1.1em; font-weight: bold; padding: 0.4em 0.8em; }
.pass { background: #dff5e1; color: #17602a; } .fail { background: #fde2e1; color: #8a1c13; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.9em; margin: 0.4em 0; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.45em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; font-weight: 600; }
td.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.overview, table.edges { width: 100%; }  /* they wrap at words; their box scrolls, not the page */
table.overview td, table.edges td { overflow-wrap: break-word; } table.edges { font-size: 0.85em; }
table.edges th, table.edges td { padding: 0.2em 0.35em; }
.tier { font-weight: 600; white-space: nowrap; }
.t-bug { color: #8a1c13; } .t-graph-code { color: #a3410b; } .t-adapter { color: #6d2b8f; }
.t-edge { color: #7a6200; } .t-convention { color: #555; } .t-torch-off { color: #1f4e99; }
table.figures { font-size: 0.78em; } table.figures th { font-weight: normal; }
table.figures td { white-space: nowrap; text-align: right; font-variant-numeric: tabular-nums; }
table.figures td.op { text-align: left; }
td.op, code, pre { font-family: ui-monospace, monospace, monospace; }
td.op { white-space: nowrap; }
tr.failed td { background: #fde2e1; }
pre { background: #f7f7f7; padding: 0.6em; font-size: 0.85em; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }  /* wrapped on screen, copied whole */
pre.command { background: #eef3f8; }
li, p, td.problem { overflow-wrap: anywhere; }
details { margin: 0.3em 0; } summary { cursor: pointer; color: #335; }
dl.settings { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: 0.15em 1.2em; }
dl.settings dt { font-weight: bold; }
dl.settings dd { margin: 0; font-family: monospace; overflow-wrap: anywhere; }
.figure img, .figure svg { max-width: 100%; height: auto; }
.finding { border-left: 4px solid #c0392b; padding: 0.1em 0 0.1em 0.9em; margin: 1em 0; }
.finding.edge, .finding.convention { border-left-color: #d4a017; }
.finding.adapter { border-left-color: #6d2b8f; }
.kind { font-size: 0.9em; color: #555; }
"""


def _fmt(value: Any) -> str:
    return figure(decode_float(value))


def _findings_of(report: dict) -> list[Finding]:
    return [Finding.from_dict(f) for f in report.get("findings", [])]


def _view(report: dict) -> Overview:
    return overview(_findings_of(report), report.get("unexplained"))


def verdict_text(report: dict) -> str:
    """The verdict in a line (`Overview.verdict`), marked when the run did not finish."""
    t = report["totals"]
    passed = report.get("passed", t["failed"] == 0) is not False
    verdict = _view(report).verdict(passed, t["failed"], t["graphs"])
    if report.get("incomplete"):
        return f"INCOMPLETE ({report['incomplete']}): {verdict}"
    return verdict


def _header(report: dict) -> str:
    s, t = report["settings"], report["totals"]
    kind = "tensor" if s["tensor"] else "scalar"
    ops = ", ".join(s["ops"]) if s["ops"] else "every op the engine supports"
    ok = report.get("passed", t["failed"] == 0)
    judge = (
        "values, gradients and second derivatives against their <b>exact values</b> (mpmath, each entry "
        "allowed the rounding of any correct evaluation), <b>torch.autograd</b>'s judged beside them, "
        "gradients also against a <b>numerical oracle</b>"
        if s.get("reference") == "exact"
        else "gradients against <b>torch.autograd</b> (float64) and a <b>numerical oracle</b>, values "
        "against torch's"
    )
    return f"""
<h1>gradcheck: {escape(s["engine"])}</h1>
<p>{t["graphs"]} random {kind} graphs at {s.get("points")} input points each (seed {s["seed"]}; ops:
{escape(ops)}): {judge}. {t.get("points_checked", 0)} graph instances checked,
{t.get("points_skipped", 0)} skipped (the oracle could not vouch for the point),
{t.get("points_settled", 0)} settled by a precise oracle (mpmath), {t.get("points_any_order", 0)}
beyond torch's rounding but within the rounding of another evaluation order of the exact value.</p>
<p class="verdict {"pass" if ok else "fail"}">{escape(verdict_text(report))}</p>
{_run_line(report)}
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


def _tier(tier: str) -> str:
    return f'<span class="tier t-{escape(tier)}">{escape(tier)}</span>'


def _overview(report: dict) -> str:
    """The first screen: the table of what to fix, the fixes, the unexplained graphs, the edge
    table and the notes."""
    view = _view(report)
    parts = ['<h2 id="overview">What to fix first</h2>']
    if view.rows:
        rows = "".join(
            f'<tr><td class="n"><a href="#finding-{r.number}">{r.number}</a></td><td>{_tier(r.tier)}</td>'
            f'<td><a href="#finding-{r.number}">{escape(r.cause)}</a></td><td>{_breakable(r.outcome)}</td>'
            f'<td class="n">{r.graphs}</td></tr>'
            for r in view.rows
        )
        parts.append(
            '<div class="scroll"><table class="overview"><thead><tr><th>#</th><th>tier</th><th>finding</th>'
            f"<th>what happened</th><th>cases</th></tr></thead><tbody>{rows}</tbody></table></div>"
        )
    elif not view.edges and not view.notes:
        parts.append("<p>Nothing: every check agrees with torch.</p>")
    else:
        parts.append("<p>No bug, graph-code finding or adapter fault.</p>")
    parts += [f"<p><b>fix #{r.number}</b>: {escape(r.finding.fix)}</p>" for r in view.fixes]
    if view.unexplained:
        parts.append(
            f'<p><a href="#unexplained">Unexplained graphs</a>: {escape(view.unexplained_line())}.</p>'
        )
    if view.edges:
        regions = view.regions
        head = "".join(f"<th>{escape(EDGE_REGIONS[r])}</th>" for r in regions)
        rows = "".join(
            f'<tr><td class="op">{escape(row.op)}</td>'
            + "".join(f"<td>{_breakable(row.cells.get(r, ''))}</td>" for r in regions)
            + f'<td class="n">{row.graphs}</td><td>{_links(row.numbers)}</td></tr>'
            for row in view.edges
        )
        parts.append(
            f"<h3>{escape(EDGE_HEADING)}</h3>"
            f'<div class="scroll"><table class="edges"><thead><tr><th class="op">op</th>{head}<th>cases</th>'
            f"<th>#</th></tr></thead><tbody>{rows}</tbody></table></div>"
        )
    if view.notes:
        notes = "; ".join(
            f'<a href="#finding-{r.number}">{escape(r.cause)}</a> ({r.finding.count_text})'
            for r in view.notes
        )
        parts.append(f"<p><b>{escape(NOTES_HEADING)}</b>: {notes}.</p>")
    return "\n".join(parts)


def _breakable(text: str) -> str:
    """`text` escaped, a line allowed to break after each "/" ("OverflowError/ZeroDivisionError")."""
    return escape(text).replace("/", "/<wbr>")


def _links(numbers: tuple[int, ...]) -> str:
    return ", ".join(f'<a href="#finding-{n}">{n}</a>' for n in numbers)


def _indices(indices: list[int] | tuple[int, ...], what: str) -> str:
    """A list of graph indices, folded."""
    if not indices:
        return ""
    shown = ", ".join(map(str, indices))
    return f"<details><summary>{what}</summary><p>{shown}</p></details>"


def _findings(report: dict) -> str:
    """Each finding in detail, numbered as the overview (`_finding`), the code shown for the first
    `CODE_SHOWN` bugs and graph-code findings."""
    if not report.get("findings"):
        return ""
    conventions = report.get("conventions", "torch")
    parts = ['<h2 id="findings">Findings in detail</h2>']
    shown = 0
    for i, f in enumerate(_findings_of(report)):
        code = f.tier in _CODE_TIERS and shown < CODE_SHOWN
        shown += code
        parts.append(_finding(f, i, conventions, code))
    return "\n".join(parts)


def _finding(f: Finding, i: int, conventions: str, code: bool) -> str:
    """Finding `i` in detail: tier, title, kind, what it covers (its graphs folded), its first
    problems, the fix, how to replay it and, with `code` (a bug or graph-code finding), the code
    that reproduces it."""
    torch_off = f.tier == tiers.TORCH_OFF  # the engine is right: torch's answer is the one off
    label = "finding" if f.is_failure(conventions) or torch_off else "note"
    repro = ""
    if code:
        language = (
            "torch's code, judged against the exact values"
            if torch_off
            else "the engine's code"
            if f.snippet
            else "torch's code (the engine has no snippet spelling)"
        )
        repro = (
            f"<details open><summary>Repro, in {language}</summary>"
            f"<pre>{escape(finding_code(f))}</pre></details>"
        )
    fix = f"<p><b>fix</b>: {escape(f.fix)}</p>" if f.fix else ""
    indices = _indices(f.graph_indices, f"the {len(f.graph_indices)} random graph(s)")
    replayed = (
        "the engine's numbers beside torch's and the exact values"
        if torch_off
        else "it says whether it still fails, or is fixed"
    )
    return (
        f'<div class="finding {escape(f.tier)}" id="finding-{i}">'
        f"<h3>{label} {i} · {_tier(f.tier)} · {escape(f.title)}</h3>"
        f'<p class="kind">{escape(str(f.kind))} · {escape(f.check)} check · found by {escape(f.phase)} · '
        f"{escape(f.count_text)}</p>{indices}{fix}{_problems(f.problems[:SHOWN_PROBLEMS])}"
        f"{_problems(local_lines(f, SHOWN_PROBLEMS))}"
        f'<p>Replay it ({replayed}):</p><pre class="command">{escape(f.repro)}</pre>{repro}</div>'
    )


def first_screen(report: dict, lines: Sequence[str] = ()) -> str:
    """The page's first screen as an HTML fragment that styles nothing outside it (a notebook's
    output: `gradcheck.check_engine`'s result): the verdict, `lines` (where the engine ran, the
    reports), what to fix first, the edge table and the notes, then the top finding in detail,
    its repro in the engine's own terms."""
    view = _view(report)
    ok = report.get("passed", report["totals"]["failed"] == 0) is not False
    parts = [
        f"<style>{_scoped_css(_CSS, '.gradcheck-first-screen')}</style>",
        '<div class="gradcheck-first-screen">',
        f'<p class="verdict {"pass" if ok else "fail"}">{escape(verdict_text(report))}</p>',
        *(f"<p>{escape(line)}</p>" for line in lines),
        _overview(report),
    ]
    if view.rows:
        top = view.rows[0]
        parts.append(_finding(top.finding, top.number, report.get("conventions", "torch"), True))
    parts.append("</div>")
    return "\n".join(parts)


def _scoped_css(css: str, scope: str) -> str:
    """`css` applying only inside `scope` (the page's `body` rule is the scope's own)."""
    rules = []
    for rule in re.sub(r"/\*.*?\*/", "", css).split("}"):
        selectors, _, body = rule.partition("{")
        if not body.strip():
            continue
        scoped = [
            scope if s.strip() == "body" else f"{scope} {s.strip()}"
            for s in selectors.split(",")
            if s.strip()
        ]
        rules.append(f"{', '.join(scoped)} {{{body}}}")
    return "\n".join(rules)


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
<div class="scroll"><table><tr><th>check</th><th>status</th><th>rebuilds that differ</th><th>detail</th></tr>
{rows}</table></div>
"""


_OP_COLUMNS = (
    *_TABLE_COLUMNS,
    ("p99_rel_err_torch", "rel err vs torch, p99"),
    ("p99_rel_err_numeric", "rel err vs numeric, p99"),
)


def _op_table(report: dict) -> str:
    judge = "vs exact" if report["settings"].get("reference") == "exact" else "vs torch"  # the figures'
    head = "".join(f"<th>{escape(label.replace('vs torch', judge))}</th>" for _, label in _OP_COLUMNS)
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
<p>For each op, over the evidence about it (its op-isolation checks and the graphs holding it
where no other op has a finding of its own): the graphs, the largest error among them, the 99th
percentile of their relative errors (what the gradient-regression gate compares; one
ill-conditioned graph moves the maximum, not the percentile), and how many of them failed
because of this op (graphs whose minimal failing graph contains it).</p>
<div class="scroll"><table class="figures">
<thead><tr><th class=op>op</th><th>graphs</th>{head}<th>failures</th></tr></thead>
<tbody>{"".join(rows)}</tbody></table></div>
"""


def _distributions(report: dict) -> str:
    svg = distribution_svg(report)
    if svg is None:
        return ""
    return f"""
<h2 id="distributions">Error distributions per op</h2>
<p>Each panel counts, for the evidence about the op, the graph's largest relative gradient
error against torch (blue) and against the numerical oracle (orange), by decade. Errors against
torch sit near float64 rounding; against the oracle, near the finite-difference truncation error.</p>
<div class="figure">{svg}</div>
"""


def _problems(problems: Sequence[Any]) -> str:
    """Problems (records, or the words report.json keeps) as a list."""
    return "<ul>" + "".join(f"<li>{escape(str(p))}</li>" for p in problems) + "</ul>" if problems else ""


def _failure(failure: dict, draw: bool) -> str:
    """A shrunk failing graph: its snippet and problems, drawn (`draw`) or named by its ops, and
    the graph as found, folded."""
    ops = ", ".join(failure.get("shrunk_ops") or [])
    parts = [f'<h4 id="graph-{failure["index"]}">graph #{failure["index"]}, shrunk to {escape(ops)}</h4>']
    parts.append(f"<pre>{escape(failure['shrunk_snippet'])}</pre>")
    parts.append(_problems(failure["problems"][:SHOWN_PROBLEMS]))
    if failure.get("corpus_file"):
        parts.append(
            f"<p>Saved to the regression corpus as <code>{escape(failure['corpus_file'])}</code>.</p>"
        )
    if draw:
        dot = graph_dot(failure["shrunk_graph"])
        drawn = render_dot(dot)
        if drawn is not None:
            parts.append(f'<div class="figure">{drawn}</div>')
        else:
            parts.append(
                "<details><summary>The graph as DOT (graphviz's <code>dot</code> is not installed)</summary>"
            )
            parts.append(f"<pre>{escape(dot)}</pre></details>")
    figs = " · ".join(f"{escape(label)} {_fmt(failure['figures'].get(key))}" for key, label in _TABLE_COLUMNS)
    parts.append("<details><summary>The graph as found</summary>")
    parts.append(f"<p>ops: <code>{escape(', '.join(failure['ops']))}</code>; {figs}</p>")
    parts.append(_problems((failure.get("found_problems") or [])[:SHOWN_PROBLEMS]))
    parts.append(f"<pre>{escape(failure.get('snippet') or '')}</pre></details>")
    return "\n".join(parts)


def _unexplained(entry: dict | None) -> str:
    """The unexplained graphs (`campaign.accounting`) as one entry: how many and why, the smallest."""
    if not entry:
        return ""
    smallest = entry["smallest"]
    reasons = "; ".join(f"{n}: {escape(why)}" for why, n in entry["reasons"].items())
    indices = ", ".join(map(str, entry["graph_indices"][:50])) + (" ..." if entry["graphs"] > 50 else "")
    problems = "".join(f"<li>{escape(p)}</li>" for p in smallest["problems"][:3])
    return (
        f'<h3 id="unexplained">Unexplained graphs ({entry["graphs"]})</h3>'
        f"<p>Failing graphs no finding explains ({reasons}): graphs {indices}. "
        f"The smallest, graph {smallest['index']} ({escape(', '.join(smallest['ops']))}):</p>"
        f"<ul>{problems}</ul><pre>{escape(smallest.get('snippet') or '')}</pre>"
    )


def _failures(report: dict) -> str:
    """The failing graphs by finding, folded: each finding's list of graphs and its shrunk ones
    (the first of each drawn, at most `DRAWN_GRAPHS`); report.json has every graph's problems."""
    failures = report["failures"]
    if not failures:
        return '<h2 id="failures">Failing graphs</h2><p>None.</p>'
    numbers = {i: k for k, f in enumerate(report.get("findings", [])) for i in f.get("graph_indices", ())}
    groups: dict[int | None, list[dict]] = {}
    for failure in failures:
        groups.setdefault(failure.get("finding", numbers.get(failure["index"])), []).append(failure)
    parts = [f'<h2 id="failures">Failing graphs ({len(failures)})</h2>']
    parts.append("<p>Each counted in its finding; every graph's problems and figures are in report.json.</p>")
    parts.append(_unexplained(report.get("unexplained")))
    drawn = 0
    for number in sorted(groups, key=lambda n: (n is None, n or 0)):
        group = groups[number]
        known = number is not None and number < len(report["findings"])
        found = report["findings"][number] if known else None
        name = f"finding {number} ({found['tier']}, {found['title']})" if found else "unexplained"
        shrunk = [f for f in group if f.get("shrunk_snippet")]
        inner = [_indices([f["index"] for f in group], f"graph indices ({len(group)})")]
        for k, failure in enumerate(shrunk):
            inner.append(_failure(failure, draw=k == 0 and drawn < DRAWN_GRAPHS))
            drawn += k == 0
        summary = f"{escape(name)}: {len(group)} graph(s)" + (f", {len(shrunk)} shrunk" if shrunk else "")
        parts.append(f"<details><summary>{summary}</summary>{''.join(inner)}</details>")
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
            _overview(report),
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
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><style>{_CSS}</style></head>
<body>
{body}
</body></html>
"""
