"""Runnable snippets of a graph in an engine's own terms, first or second order.

`Graph.to_python` spells minigrad and torch code for first derivatives; a second-derivative
finding needs code that differentiates the gradients again (a Hessian-vector product along a
direction of ones, the direction `gradcheck.parity.classify` re-checks with), and PyPI micrograd
its own spelling (`Value`, `backward()`, `.grad`).
"""

from __future__ import annotations

from gradcheck.graphs.ir import Graph, constant_code, literal
from gradcheck.graphs.registry import REGISTRY

_FIRST_ORDER = {
    "torch": "grads = torch.autograd.grad(outputs, inputs, cotangent, allow_unused=True)",
    "minigrad": "grads = minigrad.grad(outputs, inputs, cotangent, allow_unused=True)",
}
# minigrad-tensor's first derivatives: one backward() of the weighted outputs, the training path
_BACKWARD = (
    "sum((o * c).sum() for o, c in zip(outputs, cotangent)).backward()  # as the harness runs it\n"
    "grads = [x.grad for x in inputs]"
)
_SECOND_ORDER = {
    "torch": (
        "grads = torch.autograd.grad(outputs, inputs, cotangent, create_graph=True)\n"
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
    """The graph in PyPI micrograd's API: Values, one backward() of the weighted outputs, .grad."""
    lines = ["from micrograd.engine import Value", ""]
    for inp in graph.inputs:
        lines.append(f"{inp.name} = Value({literal(inp.value)})")
    for i, node in enumerate(graph.nodes):
        names = [graph.name_of(k) for k in range(graph.n_inputs + i)]
        args = node.operands(names, constant_code("minigrad"))
        lines.append(f"v{graph.n_inputs + i} = {REGISTRY[node.op].snippet(args, node.attr, 'minigrad')}")
    cotangent = graph.cotangent if graph.cotangent is not None else [1.0] * len(graph.outputs)
    terms = " + ".join(f"{graph.name_of(o)} * {literal(c)}" for o, c in zip(graph.outputs, cotangent))
    lines.append(f"loss = {terms}")
    lines.append("loss.backward()")
    lines.append(f'print("outputs:", [{", ".join(f"{graph.name_of(o)}.data" for o in graph.outputs)}])')
    lines.append(f'print("grads:", [{", ".join(f"{i.name}.grad" for i in graph.inputs)}])')
    return "\n".join(lines) + "\n"


def backward_snippet(graph: Graph) -> str:
    """minigrad Tensor code for a tensor graph whose gradients come from one `backward()` (the
    path where a pass owns its gradient buffers), as the minigrad-tensor adapter takes them."""
    return graph.to_python("minigrad").replace(_FIRST_ORDER["minigrad"], _BACKWARD)
