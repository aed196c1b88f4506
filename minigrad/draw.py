"""Pictures of a computation graph: `draw_graph` writes Graphviz DOT text, `render_graph` renders it.

Like micrograd's draw_dot: one record node per Value showing its data and grad, and one small
node per op between the op's inputs and its result. The walk is iterative (the autograd core's
topological order), so depth is not bounded by Python's recursion limit. Rendering needs the optional
`graphviz` package and Graphviz's `dot` program; producing the DOT text needs neither.
"""

from __future__ import annotations

import os
from typing import Any

from minigrad.autograd import topological_order

_RECORD_SPECIALS = str.maketrans({c: "\\" + c for c in '{}|<>"\\'})


class DotGraph(str):
    """DOT text (a str) that Jupyter shows as a picture when Graphviz is installed."""

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        svg = self._repr_svg_()
        return {"image/svg+xml": svg} if svg is not None else {"text/plain": str(self)}

    def _repr_svg_(self) -> str | None:
        """The picture as SVG, or None (Jupyter then shows the text) without graphviz and `dot`."""
        try:
            import graphviz
        except ImportError:
            return None
        try:
            return graphviz.Source(str(self)).pipe(format="svg", encoding="utf-8")
        except graphviz.ExecutableNotFound:
            return None


def draw_graph(root: Any, rankdir: str = "LR") -> DotGraph:
    """DOT source for the graph that produced `root` (a Value, or any autograd node): a str, which
    Jupyter shows as the picture, as micrograd's draw_dot. Nodes with a `label` show it first."""
    if not hasattr(root, "_prev"):
        raise TypeError(f"draw_graph: expected a Value or Tensor, got {type(root).__name__} {root!r}")
    if rankdir not in ("LR", "TB", "RL", "BT"):
        raise ValueError(f"draw_graph: rankdir must be 'LR', 'TB', 'RL' or 'BT', got {rankdir!r}")
    order = topological_order([root])
    ids = {id(node): f"v{index}" for index, node in enumerate(order)}
    lines = ["digraph minigrad {", f"  rankdir={rankdir};", "  node [shape=record];"]
    shown: Any
    for shown in order:  # a Value's or a Tensor's data and grad
        node = shown
        name = ids[id(node)]
        data, grad = _show(node.data), _show(node.grad)
        label = getattr(node, "label", "")
        title = f"{_record(label)} | " if label else ""
        lines.append(f'  {name} [label="{{ {title}data {_record(data)} | grad {_record(grad)} }}"];')
        if node._prev:
            lines.append(f'  {name}_op [label="{_quoted(_op_label(node))}", shape=ellipse];')
            lines.append(f"  {name}_op -> {name};")
            lines.extend(f"  {ids[id(parent)]} -> {name}_op;" for parent in node._prev)
    lines.append("}")
    return DotGraph("\n".join(lines) + "\n")


def render_graph(root: Any, path: str | os.PathLike[str], format: str = "svg") -> str:
    """Render `root`'s graph with Graphviz into the file `path` (e.g. "graph.svg"); returns the path."""
    try:
        import graphviz
    except ImportError as error:
        raise ImportError(
            "render_graph needs the graphviz Python package: pip install minigrad[viz] "
            "(and Graphviz's `dot` program, e.g. apt-get install graphviz); "
            "draw_graph(root) gives the DOT text without either"
        ) from error
    source = graphviz.Source(draw_graph(root))
    try:
        image = source.pipe(format=format)
    except graphviz.ExecutableNotFound as error:
        raise RuntimeError(
            "render_graph: Graphviz's `dot` executable was not found on PATH. "
            "pip install minigrad[viz] installs only the Python bindings; install Graphviz itself "
            "(apt-get install graphviz, brew install graphviz, or https://graphviz.org/download/), "
            "or use draw_graph(root) for the DOT text"
        ) from error
    with open(path, "wb") as out:
        out.write(image)
    return os.fspath(path)


def _show(x: Any) -> str:
    """A number to four significant digits; an array (or a Tensor's) by dtype and shape; None as None."""
    if x is None:
        return "None"
    if isinstance(x, (int, float)):
        return f"{x:.4g}"
    array = x if hasattr(x, "shape") and hasattr(x, "dtype") else getattr(x, "data", x)
    if not hasattr(array, "shape"):
        return str(x)
    text = f"{array.dtype} {tuple(array.shape)}"
    return f"{text} {float(array.reshape(-1)[0]):.4g}" if array.size == 1 else text


def _op_label(node: Any) -> str:
    """The op's name (a Value's `_op`, a Tensor's rule name), with the constant operand if any."""
    rule = getattr(node, "_rule", None)
    op = getattr(node, "_op", None) or getattr(rule, "name", None) or type(rule).__name__
    const = getattr(node, "_const", None)
    return op if const is None else f"{op}, c={const:.4g}"


def _record(text: str) -> str:
    return text.translate(_RECORD_SPECIALS)


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
