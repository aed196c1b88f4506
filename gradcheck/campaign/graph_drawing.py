"""A failing graph drawn for report.html: its DOT source (inputs as boxes, ops as ellipses, the
outputs doubled) and, when graphviz's `dot` binary is installed, the inline SVG it renders to."""

from __future__ import annotations

import re
import shutil
from typing import Any


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
