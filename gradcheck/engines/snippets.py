"""Runnable snippets of a graph in an engine's own terms, first or second order.

`Graph.to_python` spells minigrad and torch code for first derivatives; a second-derivative
finding needs code that differentiates the gradients again (a Hessian-vector product along a
direction of ones, the direction `gradcheck.parity.classify` re-checks with), and PyPI micrograd
its own spelling (`Value`, `backward()`, `.grad`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcheck.graphs.ir import Constant, Graph, constant_code, literal
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes

_FIRST_ORDER = {
    "torch": "grads = torch.autograd.grad(outputs, inputs, cotangent, allow_unused=True)",
    "minigrad": "grads = minigrad.grad(outputs, inputs, cotangent, allow_unused=True)",
}
_SECOND_ORDER = {
    "torch": (
        "grads = torch.autograd.grad(outputs, inputs, cotangent, create_graph=True, materialize_grads=True)\n"
        "# Hessian-vector product along a direction of ones\n"
        "hvp = torch.autograd.grad(sum(g.sum() for g in grads), inputs, allow_unused=True)"
    ),
    "minigrad": (
        "grads = minigrad.grad(outputs, inputs, cotangent, create_graph=True, materialize_grads=True)\n"
        "# Hessian-vector product along a direction of ones\n"
        "hvp = minigrad.grad(SUM, inputs, allow_unused=True)"
    ),
}


def graph_snippet(graph: Graph, target: str, second_order: bool = False) -> str:
    """`graph.to_python(target)` ('minigrad' or 'torch'), differentiating twice when `second_order`."""
    code = graph.to_python(target)
    if not second_order:
        return code
    total = "sum(grads)" if target == "minigrad" and not graph.is_tensor else "sum(g.sum() for g in grads)"
    code = code.replace(_FIRST_ORDER[target], _SECOND_ORDER[target].replace("SUM", total))
    return code + 'print("hvp:", hvp)\n'


def micrograd_snippet(graph: Graph) -> str:
    """torch's numbers on the graph, then the graph in PyPI micrograd's API (Values, one
    backward() of the weighted outputs, .grad)."""
    templates = {op: REGISTRY[op].template for op in graph.ops()}
    code = value_snippet(graph, ["from micrograd.engine import Value"], "Value", templates, {})
    return torch_beside(graph) + "\n" + code


def value_snippet(
    graph: Graph,
    imports: Sequence[str],
    cls: str,
    templates: Mapping[str, str],
    as_value: Mapping[str, tuple[int, ...]],
    data: str = "data",
) -> str:
    """The graph with a micrograd-style value class `cls`: its leaves `cls(x)`, each op by its
    template (`{0}.tanh()`), constants written `cls(2.0)` at the positions `as_value` names, one
    backward() of the cotangent-weighted outputs, then the outputs' number (attribute `data`) and
    the inputs' `grad`."""
    lines = [*imports, ""]
    for inp in graph.inputs:
        lines.append(f"{inp.name} = {cls}({literal(inp.value)})")
    for i, node in enumerate(graph.nodes):
        names = [graph.name_of(k) for k in range(graph.n_inputs + i)]
        args = node.operands(names, _constant_as(cls, as_value.get(node.op, ())))
        attrs = {k: repr(v) for k, v in node.attr.items()}
        lines.append(f"v{graph.n_inputs + i} = {templates[node.op].format(*args, **attrs)}")
    cotangent = graph.cotangent if graph.cotangent is not None else [1.0] * len(graph.outputs)
    terms = " + ".join(f"{graph.name_of(o)} * {literal(c)}" for o, c in zip(graph.outputs, cotangent))
    lines.append(f"loss = {terms}")
    lines.append("loss.backward()")
    lines.append(
        f'print("engine outputs:", [{", ".join(f"{graph.name_of(o)}.{data}" for o in graph.outputs)}])'
    )
    lines.append(f'print("engine grads:  ", [{", ".join(f"{i.name}.grad" for i in graph.inputs)}])')
    return "\n".join(lines) + "\n"


def _constant_as(cls: str, as_value: tuple[int, ...]) -> Callable[[Constant], str]:
    """How a value-class snippet writes a constant: `cls(2.0)` at the positions `as_value` names."""
    number = constant_code("minigrad")
    return lambda c: f"{cls}({literal(c.value)})" if c.at in as_value else number(c)


def adapter_snippet(graph: Graph, spec: str, second_order: bool = False) -> str:
    """torch's numbers on the graph, then the graph built through the adapter `spec` names
    (`load_engine(spec)`: its leaves, `apply` per op, `gradients` or `hvp`) and the engine's
    numbers: the repro of any adapter without a snippet of its own."""
    lines = [
        "import numpy as np",
        "",
        "from gradcheck.engines import load_engine",
        "",
        f"engine = load_engine({spec!r})",
    ]
    for inp in graph.inputs:
        lines.append(f"{inp.name} = engine.leaf({_leaf_value(inp.value, graph.is_tensor)})")
    for i, node in enumerate(graph.nodes):
        names = [graph.name_of(k) for k in range(graph.n_inputs + i)]
        args = node.operands(names, _adapter_constant)
        attrs = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in node.attr.items()}
        lines.append(f"v{graph.n_inputs + i} = engine.apply({node.op!r}, [{', '.join(args)}], {attrs!r})")
    lines.append(f"outputs = [{', '.join(graph.name_of(o) for o in graph.outputs)}]")
    lines.append(f"inputs = [{', '.join(i.name for i in graph.inputs)}]")
    lines.append(f"cotangent = [{', '.join(_leaf_value(c, graph.is_tensor) for c in _cotangent(graph))}]")
    lines.append('print("engine outputs:", [engine.value(o) for o in outputs])')
    if second_order:
        lines.append("ones = [np.ones_like(engine.value(x)) for x in inputs]  # the direction")
        lines.append('print("engine hvp:    ", engine.hvp(outputs, inputs, cotangent, ones))')
    else:
        lines.append('print("engine grads:  ", engine.gradients(outputs, inputs, cotangent))')
    return torch_beside(graph, second_order) + "\n" + "\n".join(lines) + "\n"


def run_snippet(graph: Graph, spec: str, second_order: bool = False) -> str:
    """torch's numbers on the graph, then the graph run by the adapter `spec` names through
    `engine.run` or `engine.run_hvp` (the graph as JSON): the repro of an adapter that has no
    leaves to build a graph from, such as a function-style one."""
    lines = [
        "import numpy as np",
        "",
        "from gradcheck.engines import load_engine",
        "from gradcheck.graphs.ir import Graph",
        "",
        f"engine = load_engine({spec!r})",
        f"graph = Graph.from_json({graph.to_json(None)!r})",
        "values = graph.input_values(0)",
        f"cotangent = [{', '.join(_leaf_value(c, graph.is_tensor) for c in _cotangent(graph))}]",
    ]
    if second_order:
        lines.append("ones = [np.ones_like(v) for v in values]  # the direction")
        lines.append('print("engine hvp:", engine.run_hvp(graph, values, cotangent, ones))')
    else:
        lines.append("outputs, grads = engine.run(graph, values, cotangent)")
        lines.append('print("engine outputs:", outputs)')
        lines.append('print("engine grads:  ", grads)')
    return torch_beside(graph, second_order) + "\n" + "\n".join(lines) + "\n"


def torch_beside(graph: Graph, second_order: bool = False) -> str:
    """torch's code for the graph (float64), its prints labelled `torch ...`, to go before an
    engine's code (which then reuses the input names)."""
    code = graph_snippet(graph, "torch", second_order)
    for label in ("outputs", "grads", "hvp"):
        code = code.replace(f'print("{label}:"', f'print("torch {label}:"')
    return "# torch, float64, on the same graph\n" + code + "\n# the engine under test\n"


def _cotangent(graph: Graph) -> list[Any]:
    """The graph's cotangent, or ones of each output's shape."""
    if graph.cotangent is not None:
        return list(graph.cotangent)
    shapes = graph_shapes(graph)
    return [np.ones(shapes[o]) if shapes[o] else 1.0 for o in graph.outputs]


def _leaf_value(v: Any, tensor: bool) -> str:
    if tensor:
        return f"np.array({literal(np.asarray(v))}, dtype=np.float64)"
    return literal(v)


def _adapter_constant(c: Constant) -> str:
    """A graph constant as `apply` receives it: a float, or `engine.scalar_tensor(x)`."""
    return f"engine.scalar_tensor({literal(c.value)})" if c.tensor else literal(c.value)
