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

from gradcheck.graphs.ir import Constant, Graph, SpelledCodes, constant_code, literal
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.shapes import graph_shapes

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
        "grads = torch.autograd.grad(outputs, inputs, cotangent, create_graph=True, materialize_grads=True)\n"
        "# Hessian-vector product along a direction of ones (zeros where no gradient depends on the inputs)\n"
        "total = sum(g.sum() for g in grads)\n"
        "hvp = (\n"
        "    torch.autograd.grad(total, inputs, allow_unused=True, materialize_grads=True)\n"
        "    if total.requires_grad\n"
        "    else [torch.zeros_like(x) for x in inputs]\n"
        ")"
    ),
    "minigrad": (
        "grads = minigrad.grad(outputs, inputs, cotangent, create_graph=True, materialize_grads=True)\n"
        "# Hessian-vector product along a direction of ones\n"
        "hvp = minigrad.grad(SUM, inputs, allow_unused=True)"
    ),
}


def graph_snippet(
    graph: Graph, target: str, second_order: bool = False, spelled: SpelledCodes | None = None
) -> str:
    """`graph.to_python(target, spelled)` ('minigrad' or 'torch'), differentiating twice when
    `second_order`."""
    code = graph.to_python(target, spelled)
    if not second_order:
        return code
    total = "sum(grads)" if target == "minigrad" and not graph.is_tensor else "sum(g.sum() for g in grads)"
    code = code.replace(_FIRST_ORDER[target], _SECOND_ORDER[target].replace("SUM", total))
    return code + 'print("hvp:", hvp)\n'


def micrograd_snippet(graph: Graph) -> str:
    """torch's numbers on the graph, then the graph in PyPI micrograd's API (Values, one
    backward(), .grad)."""
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
    backward() (of the output itself, its gradients then scaled by the cotangent, as
    `EngineAdapter.gradients` does; of the cotangent-weighted outputs when there are several),
    then the outputs' number (attribute `data`) and the inputs' `grad`."""
    lines = [*imports, ""]
    for inp in graph.inputs:
        lines.append(f"{inp.name} = {cls}({literal(inp.value)})")
    for i, node in enumerate(graph.nodes):
        names = [graph.name_of(k) for k in range(graph.n_inputs + i)]
        args = node.operands(names, _constant_as(cls, as_value.get(node.op, ())))
        attrs = {k: repr(v) for k, v in node.attr.items()}
        lines.append(f"v{graph.n_inputs + i} = {templates[node.op].format(*args, **attrs)}")
    cotangent = graph.cotangent if graph.cotangent is not None else [1.0] * len(graph.outputs)
    if len(graph.outputs) == 1:  # as the harness does: the output itself, its gradients scaled
        lines.append(f"{graph.name_of(graph.outputs[0])}.backward()")
        grads = ", ".join(f"{literal(cotangent[0])} * {i.name}.grad" for i in graph.inputs)
    else:
        terms = " + ".join(f"{graph.name_of(o)} * {literal(c)}" for o, c in zip(graph.outputs, cotangent))
        lines.append(f"loss = {terms}")
        lines.append("loss.backward()")
        grads = ", ".join(f"{i.name}.grad" for i in graph.inputs)
    outputs = ", ".join(f"{graph.name_of(o)}.{data}" for o in graph.outputs)
    return _engine_part(lines, f"[{outputs}]", f"[{grads}]", False, graph)


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
    cotangent = ", ".join(_leaf_value(c, graph.is_tensor) for c in repro_cotangent(graph))
    lines.append(f"cotangent = [{cotangent}]")
    if second_order:
        lines.append("ones = [np.ones_like(engine.value(x)) for x in inputs]  # the direction")
    derivative = "engine.hvp(outputs, inputs, cotangent, ones)" if second_order else None
    derivative = derivative or "engine.gradients(outputs, inputs, cotangent)"
    return _repro(graph, lines, "[engine.value(o) for o in outputs]", derivative, second_order)


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
        f"cotangent = [{', '.join(_leaf_value(c, graph.is_tensor) for c in repro_cotangent(graph))}]",
    ]
    lines.append("outputs, grads = engine.run(graph, values, cotangent)")
    if second_order:
        lines.append("ones = [np.ones_like(v) for v in values]  # the direction")
    derivative = "engine.run_hvp(graph, values, cotangent, ones)" if second_order else "grads"
    return _repro(graph, lines, "outputs", derivative, second_order)


def _loaded_graph(graph: Graph, spec: str, check_import: str) -> list[str]:
    """A repro's opening: its imports, the adapter `spec` names loaded, the graph, its first
    point's values and the cotangent."""
    cotangent = ", ".join(_leaf_value(c, graph.is_tensor) for c in repro_cotangent(graph))
    return [
        "import numpy as np",
        "",
        "from gradcheck.engines import load_engine",
        "from gradcheck.graphs.ir import Graph",
        check_import,
        "",
        f"engine = load_engine({spec!r})",
        f"graph = Graph.from_json({graph.to_json(None)!r})",
        "values = graph.input_values(0)",
        f"cotangent = [{cotangent}]",
    ]


def forward_mode_snippet(graph: Graph, spec: str) -> str:
    """The graph's J·v along a direction of ones by the forward mode of the adapter `spec` names
    (`engine.run_jvp`), beside the exact one, and what the check says of it: the repro of a
    forward-mode finding."""
    lines = [
        *_loaded_graph(graph, spec, "from gradcheck.parity.modes import exact_jvp, forward_mode_problems"),
        "ones = [np.ones_like(np.asarray(v, dtype=float)) if np.ndim(v) else 1.0 for v in values]",
        "outputs, jvp = engine.run_jvp(graph, values, ones)  # the engine's forward mode",
        'print("engine J·v:", [np.asarray(t).tolist() for t in jvp])',
        'print("exact J·v: ", exact_jvp(graph, values, cotangent, ones).tolist())',
        "problems, _ = forward_mode_problems(engine, graph, values, cotangent, ones, None)",
        'print("\\n".join(map(str, problems)) or "forward mode agrees with the exact J·v")',
    ]
    return "\n".join(lines) + "\n"


def transform_snippet(graph: Graph, spec: str) -> str:
    """The graph's gradient by each transform of the adapter `spec` names (`engine.run_transform`)
    beside its reverse-mode gradient, its Hessian-vector product by each other order
    (`run_hvp_transform`) beside its own (`run_hvp`, along ones), and what the check says of each:
    the repro of a finding met under a transform."""
    imports = "from gradcheck.parity.transforms import hvp_transform_problems, transform_problems"
    lines = [
        *_loaded_graph(graph, spec, imports),
        "outputs, grads = engine.run(graph, values, cotangent)  # reverse mode",
        'print("reverse mode:", [np.asarray(g).tolist() for g in grads])',
        "reverse = np.concatenate([np.ravel(g) for g in grads])",
        "def tried(name, take):  # a transform's answer, or None where it does not apply to the graph",
        "    try:",
        "        answer = take()",
        "    except NotImplementedError as e:  # the check skips it",
        '        print(name + ": does not apply:", e)',
        "        return None",
        '    print(name + ":", [np.asarray(a).tolist() for a in answer])',
        "    return answer",
        "for name in engine.transforms:",
        "    answer = tried(name, lambda: engine.run_transform(name, graph, [values], [cotangent])[0])",
        "    if answer is not None:",
        "        problems, _ = transform_problems(engine, name, graph, [values], [cotangent], reverse)",
        '        print("\\n".join(map(str, problems)) or name + " agrees with reverse mode")',
        "if engine.hvp_transforms:  # the Hessian-vector product by another order, along ones",
        "    direction = [np.ones_like(np.asarray(v, dtype=np.float64)) for v in values]",
        "    own = engine.run_hvp(graph, values, cotangent, direction)",
        "    own = np.concatenate([np.ravel(h) for h in own])",
        '    print("H·v:", own.tolist())',
        "for name in engine.hvp_transforms:",
        "    at = (graph, values, cotangent, direction)",
        "    if tried(name, lambda: engine.run_hvp_transform(name, *at)) is not None:",
        "        problems, _ = hvp_transform_problems(engine, name, *at, own)",
        '        print("\\n".join(map(str, problems)) or name + " agrees with the H·v")',
    ]
    return "\n".join(lines) + "\n"


def own_code_repro(graph: Graph, code: str, second_order: bool = False) -> str:
    """torch's numbers, then an engine's own code for the graph (ending in `outputs` and `grads`,
    or `hvp`, and their prints, as `Graph.to_python` writes it), then the verdict."""
    prints = ('print("outputs:"', 'print("grads:"', 'print("hvp:"')
    lines = [line for line in code.rstrip("\n").splitlines() if not line.startswith(prints)]
    return _repro(graph, lines, "outputs", "hvp" if second_order else "grads", second_order)


def _repro(graph: Graph, lines: list[str], outputs: str, derivative: str, second_order: bool) -> str:
    """torch's part, then the engine's `lines` and its numbers (the code `outputs` and
    `derivative` give them by) printed, then the verdict."""
    engine = _engine_part(lines, outputs, derivative, second_order, graph)
    return torch_beside(graph, second_order) + "\n" + engine


def _engine_part(lines: list[str], outputs: str, derivative: str, second_order: bool, graph: Graph) -> str:
    """The engine's code `lines`, its numbers kept and printed, and the verdict against torch's."""
    name = "hvp" if second_order else "grads"
    lines = [
        *(line for line in lines if line != "import sys"),  # ON_RAISE imports it
        f"engine_outputs = numbers({outputs})",
        f"engine_{name} = numbers({derivative})",
        'print("engine outputs:", engine_outputs)',
        f'print("{f"engine {name}:":<15}", engine_{name})',
    ]
    return ON_RAISE + "\n".join(lines) + "\n" + verdict(graph, second_order)


def torch_beside(graph: Graph, second_order: bool = False) -> str:
    """torch's code for the graph (float64), its numbers kept as `torch_outputs`, `torch_grads`
    (and `torch_hvp`) and printed at full precision, to go before an engine's code (which then
    reuses the input names and the `numbers` helper, and ends with `verdict`)."""
    code = graph_snippet(graph, "torch", second_order)
    for label in ("outputs", "grads", "hvp"):
        code = code.replace(
            f'print("{label}:", {label})\n',
            f'torch_{label} = numbers({label})\nprint("{f"torch {label}:":<15}", torch_{label})\n',
        )
    code = code.replace("import torch\n", f"import torch\n{_NUMBERS}", 1)
    return "# torch, float64, on the same graph\n" + code + "\n# the engine under test\n"


# How a repro turns torch's and the engine's answers into plain floats, printed at full precision.
_NUMBERS = """import numpy as np


def numbers(values):
    \"\"\"Each value as plain floats (nested lists for arrays; None stays None), full precision.\"\"\"
    return [None if v is None else np.asarray(plain(v), dtype=float).tolist() for v in values]


def plain(v):
    \"\"\"A torch tensor detached, an engine value's `data`; numbers and arrays as they are.\"\"\"
    if hasattr(v, "detach"):
        return v.detach()
    return v if isinstance(v, (int, float, np.ndarray)) else getattr(v, "data", v)

"""

# A repro's verdict allows each entry what the harness allowed it: `allowed` in the graph's meta,
# {"outputs": [...], "derivative": [...]} per flattened entry (`gradcheck.parity.compare.
# repro_allowances`, from the entries' rounding bounds). A repro made without them (an edge or a
# structural finding, whose differences are no matter of rounding) uses this fixed tolerance.
ALLOWED = "allowed"
# A repro judged against the exact values carries them: `exact` in the graph's meta, {"outputs":
# [...], "derivative": [...]} per flattened entry (`gradcheck.parity.against_exact.exact_repro`).
EXACT = "exact"
REPRO_FORWARD_RTOL = 1e-10
REPRO_RTOL = 1e-9
REPRO_ATOL = 1e-10


def verdict(graph: Graph, second_order: bool = False, judged: str = "engine") -> str:
    """The end of a repro: the `judged` numbers (`engine_outputs`, `engine_grads` or `engine_hvp`;
    torch's with judged="torch") against torch's, or against the exact values the graph carries
    (`EXACT` in its meta), with the harness's tolerance, a verdict line, and exit status 1 while
    they differ (0 once they agree); an exception of the engine says so and exits 1 too."""
    shapes = graph_shapes(graph) if graph.is_tensor else [()] * (graph.n_inputs + len(graph.nodes))
    outputs = [label for j, o in enumerate(graph.outputs) for label in _labels(f"output {j}", shapes[o])]
    inputs = [label for i, inp in enumerate(graph.inputs) for label in _labels(inp.name, shapes[i])]
    derivative = "hvp" if second_order else "grads"
    what = "Hessian-vector product entry of" if second_order else "gradient of"
    allowed = graph.meta.get(ALLOWED)
    exact = graph.meta.get(EXACT)
    bound = "the rounding bound of any correct evaluation" if exact else "its rounding bound"
    allowances = (
        f"# each entry's allowed difference: BOUND_SAFETY times {bound}, as the harness's\n"
        f"ALLOWED_OUTPUTS = {allowed['outputs']!r}\nALLOWED = {allowed['derivative']!r}\n"
        if allowed
        else "ALLOWED_OUTPUTS = ALLOWED = None  # no rounding bounds: the fixed tolerance above\n"
    )
    reference, against = "torch", "torch's"
    references = ("torch_outputs", f"torch_{derivative}")
    if exact:
        reference, against = "exact", "the exact values"
        allowances += (
            "# the exact values (mpmath, rounded once to float64)\n"
            f"EXACT_OUTPUTS = {exact['outputs']!r}\nEXACT = {exact['derivative']!r}\n"
        )
        references = ("EXACT_OUTPUTS", "EXACT")
    numbers = "the engine's numbers" if judged == "engine" else f"{judged}'s numbers"
    who = "the engine" if judged == "engine" else judged
    return f"""
{VERDICT_MARK}: {numbers} against {against}, with the harness's tolerance; exit 1 while they differ
import math

FORWARD_RTOL, RTOL, ATOL = {REPRO_FORWARD_RTOL!r}, {REPRO_RTOL!r}, {REPRO_ATOL!r}
{allowances}

def flat(values):
    return [float(x) for v in values for x in np.ravel(np.asarray(0.0 if v is None else v, dtype=float))]


def first_difference(labels, engine, torch, forward, allowed):
    e, t = flat(engine), flat(torch)
    if len(e) != len(t):
        return f"{who} gave {{len(e)}} numbers, {reference} {{len(t)}}"
    scale = max([abs(x) for x in t if math.isfinite(x)] + [1e-8])
    for i, (label, a, b) in enumerate(zip(labels, e, t)):
        if not (math.isfinite(a) and math.isfinite(b)):
            same = a == b or (math.isnan(a) and math.isnan(b))
        elif allowed is not None:  # the entry's rounding bound, as the harness allowed it
            same = abs(a - b) <= allowed[i]
        elif forward:
            same = abs(a - b) <= FORWARD_RTOL * max(abs(b), 1e-3 * scale)
        else:
            same = abs(a - b) <= ATOL * max(scale, 1.0) + RTOL * max(abs(b), 1e-3 * scale)
        if not same:
            return f"{{label}}: {judged} {{a!r}}, {reference} {{b!r}}"
    return None


differences = [
    first_difference({outputs!r}, {judged}_outputs, {references[0]}, True, ALLOWED_OUTPUTS),
    first_difference(
        {[f"{what} {label}" for label in inputs]!r}, {judged}_{derivative}, {references[1]}, False, ALLOWED
    ),
]
differences = [d for d in differences if d]
if differences:
    print("verdict: FAIL, {who} differs from {against.removesuffix("'s")}:", "; ".join(differences))
    sys.exit(1)
print("verdict: ok, {who} agrees with {against.removesuffix("'s")}")
"""


def torch_repro(graph: Graph, second_order: bool = False) -> str:
    """torch's numbers on the graph, judged against the exact values it carries (`EXACT`): the
    repro of a finding where torch is off and the engine under test is not."""
    return torch_beside(graph, second_order).removesuffix("\n# the engine under test\n") + (
        "\nimport sys\n" + verdict(graph, second_order, judged="torch")
    )


# Where a repro's verdict starts (code that only shows the engine's numbers cuts it off here).
VERDICT_MARK = "# verdict"
# A repro's first lines for the engine: an exception of the engine ends the script with a verdict.
ON_RAISE = (
    "import sys\n\n"
    "sys.excepthook = lambda *error: (sys.__excepthook__(*error), print(\n"
    '    f"verdict: FAIL, the engine raised {error[0].__name__} where torch computed the numbers above"\n'
    "))\n"
)


def _labels(name: str, shape: tuple[int, ...]) -> list[str]:
    """One label per entry of a value of `shape`: "x0", or "x0[1, 2]"."""
    if not shape:
        return [name]
    return [f"{name}[{', '.join(map(str, index))}]" for index in np.ndindex(*shape)]


def repro_cotangent(graph: Graph) -> list[Any]:
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


def backward_snippet(graph: Graph, spelled: SpelledCodes | None = None) -> str:
    """minigrad Tensor code for a tensor graph whose gradients come from one `backward()` (the
    path where a pass owns its gradient buffers), as the minigrad-tensor adapter takes them."""
    return graph.to_python("minigrad", spelled).replace(_FIRST_ORDER["minigrad"], _BACKWARD)
