"""The engine adapter protocol: how the harness drives any autograd engine (`load_engine`, in
`loading.py`, finds an adapter by name).

A third-party engine plugs in with a few lines; e.g. for a micrograd-like engine::

    class MyAdapter(EngineAdapter):
        name = "mygrad"
        ops = frozenset({"add", "sub", "mul", "pow_const", "neg", "relu"})

        def leaf(self, value):
            return mygrad.Value(value)

Ops are spelled as in `gradcheck.graphs.registry` (`a + b`, `a ** 2.0`, `a.relu()`; a graph's
constants arrive as Python floats on either side, `2.0 - a`, so the reflected methods are checked
too), read back through
`.data`, and gradients come from `backward()` on the cotangent-weighted sum of the outputs and
each input's `.grad`; override `apply`, `value` or `gradients` where your engine differs. The
generator then draws only the ops listed in `ops`, in the forms of the registry release named by
`registry_release` (none named: release 1, the registry before attribute variants such as
`keepdim`); see `gradcheck.graphs.surface` and docs/adapters.md.

`gradcheck`/`gradgradcheck` check any function of an engine's values through the same adapter;
for them it also says what its values are (`is_node`, `is_scalar`, `like`), how recording is
turned off and on, how to take gradients as engine values (`grad`), which registry ops a result
came from (`op_names`) and how to print its values (`source`); see `torch_engine.py`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from functools import partial
from typing import Any

import numpy as np

from gradcheck.engines.built_from import learn_built_from
from gradcheck.engines.network import NetworkAdapter
from gradcheck.engines.snippets import adapter_snippet
from gradcheck.engines.tracing import stage, traced
from gradcheck.graphs.ir import Constant, Graph
from gradcheck.graphs.program import Program, registry_apply
from gradcheck.graphs.registry import REGISTRY
from gradcheck.graphs.spellings import Spelling, adapter_spellings, rule_of

# The references an engine's answers can be judged against (`EngineAdapter.reference`).


def scaled_alone(outputs: Sequence[Any], cotangent: Sequence[Any]) -> bool:
    """Whether a backward pass takes `outputs` as they are, its gradients scaled by the cotangent
    afterwards: one output with a number for cotangent. Several outputs are summed, each weighted
    by its cotangent, with the engine's own `mul` and `add` (`EngineAdapter.weighted`)."""
    return len(outputs) == 1 and np.ndim(cotangent[0]) == 0


def loaded(engine: object, caller: str) -> EngineAdapter:
    """`engine` itself, when it is an adapter: the check and the campaign take the adapter their
    front end loaded once (`load_engine`), never a name to load again. A TypeError names the call."""
    if isinstance(engine, EngineAdapter):
        return engine
    if isinstance(engine, str):
        raise TypeError(
            f"{caller}: engine must be an EngineAdapter, got the name {engine!r}; load it once with "
            f"gradcheck.load_engine({engine!r}) and pass the adapter"
        )
    raise TypeError(f"{caller}: engine must be an EngineAdapter, got {type(engine).__name__} {engine!r}")


class EngineAdapter:
    """Drives one engine: make leaves, apply registry ops, read values, compute gradients."""

    name: str = "engine"
    ops: frozenset[str] = frozenset()
    tensor: bool = False  # evaluates tensor graphs (inputs are float64 arrays)
    create_graph: bool = False  # second derivatives via `hvp`
    forward_mode: bool = False  # J·v by the engine's forward mode (`run_jvp`), judged by the exact value
    # Other ways the engine's users take the same gradient (`run_transform`: torch.func's jacrev,
    # jacfwd and vmap, JAX's jit), each checked against its reverse-mode gradient at the check's points
    transforms: tuple[str, ...] = ()
    # Other roads to the Hessian-vector product (`run_hvp_transform`: forward over reverse beside
    # `hvp`'s reverse over reverse, or the other way round), each checked against `run_hvp`
    hvp_transforms: tuple[str, ...] = ()
    max_depth: int | None = None  # deepest graph the engine handles (e.g. recursion limits)
    # how its backward sums (`parity.any_order`): "nodes" (each node's adjoint sums its uses) or
    # "paths" (it recurses down every path and adds path products at the leaves; the structural
    # phase finds such a backward by its time and sets this for the campaign)
    accumulation: str = "nodes"
    # what its answers are judged against (`gradcheck.parity.compare.check_graph`'s `reference`):
    # torch's float64 answers, or the exact values; a campaign sets it from `Settings.reference`
    reference: str = "torch"
    dtype: str = "float64"  # the dtype tensor leaves and cotangents are made in (see `in_dtype`)
    dtypes: tuple[str, ...] = ("float64",)  # the dtypes this engine can be checked in
    spec: str | None = None  # the name `load_engine` loaded it by, for repro scripts that load it again
    # the engine's nn layer (layers, losses, optimizers) trained step by step against torch's, if
    # it has one (checked by `parity.nn_step`)
    network: NetworkAdapter | None = None
    # The op surface it handles (`gradcheck.graphs.surface`): the registry release it was written
    # for (its attribute variants, such as keepdim on sum, reach it; None: release 1, before any
    # variant), and variants it handles beyond that release, by name ("sum.keepdim").
    registry_release: int | str | None = None
    variants: frozenset[str] = frozenset()
    # Other ways its users write an op (`gradcheck.graphs.spellings`): each a variant the
    # generator draws and a finding's title names ("abs as abs(x)"); a rule takes (operands, attrs).
    spellings: tuple[Spelling, ...] = ()
    # Whether every op was run once already when the adapter was made (a class built by
    # inspection, micrograd's known ops): the phases before op isolation may then run each op, and
    # learn from the nodes it returns (`built_from`); otherwise an op that hangs or ends its process
    # must first meet the supervised isolation pass.
    ops_tried_at_load: bool = False

    @property
    def built_from(self) -> dict[str, frozenset[str]]:
        """op -> the engine's own primitive ops it is built from (`engines.built_from`: `-x` as
        `x * -1` is built from mul), learned once from the graph its values expose; {} when they
        expose none or each op is its own node. The campaign blames such an op's failure shared
        with its primitive on the primitive."""
        cache = getattr(self, "__dict__", {})  # learned once per adapter (none kept without a __dict__)
        if "_built_from" not in cache:
            cache["_built_from"] = learn_built_from(self) if self.ops_tried_at_load else {}
        return cache["_built_from"]

    def in_dtype(self, dtype: str) -> EngineAdapter:
        """This adapter computing in `dtype` ("float64" or, for tensor engines, "float32")."""
        if dtype not in self.dtypes:
            raise ValueError(f"engine {self.name!r} computes in {list(self.dtypes)}, not {dtype!r}")
        twin = copy.copy(self)
        twin.dtype = dtype
        return twin

    def leaf(self, value: Any) -> Any:
        """A differentiable leaf holding `value` (a float, or an array for tensor graphs)."""
        raise NotImplementedError(f"{type(self).__name__}.leaf is not implemented")

    def apply(self, op: str, args: Sequence[Any], attrs: dict[str, Any]) -> Any:
        """Apply registry op `op` to engine values."""
        return REGISTRY[op].apply(args, attrs)

    def scalar_tensor(self, value: float) -> Any:
        """A 0-d float64 tensor holding `value`, without a gradient (tensor graphs' 0-d constants)."""
        return self.leaf(np.asarray(value, dtype=np.float64))

    def operand(self, constant: Constant) -> Any:
        """A graph constant as this engine's operand: a Python float, or a 0-d tensor."""
        return self.scalar_tensor(constant.value) if constant.tensor else float(constant.value)

    def value(self, node: Any) -> Any:
        """The plain value of an engine node (float or numpy array)."""
        return node.data

    def read_value(self, node: Any) -> Any:
        """`value(node)`, or, where reading it raises because the engine's value is no real number
        (a complex number, None, an object without `__float__`), that value itself: it is the
        engine's answer, which the check reports (`wrong-type`), not a fault of the adapter."""
        try:
            return self.value(node)
        except (TypeError, ValueError, OverflowError):
            raw = getattr(node, "data", node)
            if _real(raw):
                raise  # the engine's value is a number: the adapter could not read it
            return raw

    def grad_of(self, node: Any) -> Any:
        """The gradient stored on a node after backward (None or 0 when unused; None also where the
        engine keeps no gradient, as on torch's interior tensors)."""
        return node.grad

    def backward(self, output: Any) -> None:
        """Backpropagate from a scalar engine value, adding into the stored gradients (the structural
        phase calls it twice on one graph, as torch's `backward(retain_graph=True)` allows)."""
        output.backward()

    def zero_grad(self, nodes: Sequence[Any]) -> None:
        """Reset the stored gradients of `nodes` (leaves and interior nodes) before another backward:
        a number becomes 0.0, anything else (an array, a tensor) None, as torch resets it."""
        for node in nodes:
            node.grad = 0.0 if isinstance(node.grad, (int, float)) else None

    def constant(self, x: Any) -> Any:
        """A cotangent or direction (float or array) as an engine value; by default a leaf."""
        return self.leaf(x)

    def weighted(self, output: Any, cotangent: Any) -> Any:
        """<cotangent, output> as an engine scalar: `output * c`, summed for tensors (`.sum()`)."""
        if np.ndim(cotangent) == 0:
            return output * float(cotangent)
        return (output * self.constant(cotangent)).sum()

    def plain(self, g: Any) -> Any:
        """An engine gradient as a float or float64 array (its `.data` when it is not a number);
        what is no number even so is returned as it is, for the check to report (`wrong-type`)."""
        if not isinstance(g, (np.ndarray, float, int)):
            g = getattr(g, "data", g)
        try:
            return np.asarray(g, dtype=np.float64)
        except (TypeError, ValueError):
            return g

    def gradients(self, outputs: Sequence[Any], inputs: Sequence[Any], cotangent: Sequence[Any]) -> list[Any]:
        """d(sum_i <cotangent_i, outputs_i>)/d(input) for each input, by one backward pass. A lone
        scalar output is differentiated as it is and its gradients scaled by the cotangent in
        float64 (`scaled_alone`): weighted by the engine's own `mul`, a mul bug would show in
        every graph, as a bug of each op the graph ends in."""
        stage("backward")
        if scaled_alone(outputs, cotangent):
            self.backward(outputs[0])
            c = float(cotangent[0])
            plain = [None if g is None else self.plain(g) for g in (self.grad_of(x) for x in inputs)]
            return [c * g if isinstance(g, np.ndarray) else g for g in plain]
        loss = self.weighted(outputs[0], cotangent[0])
        for out, c in zip(outputs[1:], cotangent[1:]):
            loss = loss + self.weighted(out, c)
        self.backward(loss)
        return [None if g is None else self.plain(g) for g in (self.grad_of(x) for x in inputs)]

    def hvp(
        self,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        """Hessian of sum_i cotangent_i * outputs_i times `direction` (engines with create_graph)."""
        raise NotImplementedError(f"engine {self.name!r} does not support second derivatives")

    # --- checking any function (gradcheck, gradgradcheck) ------------------------------------------

    def is_node(self, obj: Any) -> bool:
        """Whether `obj` is one of this engine's differentiable values (an input or output of f)."""
        return False

    def is_scalar(self, node: Any) -> bool:
        """Whether an engine value holds one Python number (its gradient is then a float)."""
        return not isinstance(self.value(node), np.ndarray)

    def requires_grad(self, node: Any) -> bool:
        """Whether gradients flow into this engine value."""
        return True

    def as_leaf(self, obj: Any) -> Any:
        """An input of f as a differentiable leaf: engine values as they are, numbers via `leaf`."""
        return obj if self.is_node(obj) else self.leaf(obj)

    def like(self, template: Any, array: np.ndarray, requires_grad: bool = False) -> Any:
        """A fresh engine value of `template`'s kind holding `array` (a number for scalars)."""
        raise NotImplementedError(f"engine {self.name!r} cannot rebuild its values (`like`)")

    def no_grad(self) -> AbstractContextManager[Any]:
        """A context in which the engine records no graph (numerical evaluations run in it)."""
        return nullcontext()

    def enable_grad(self) -> AbstractContextManager[Any]:
        """A context in which the engine records graphs, even inside `no_grad`."""
        return nullcontext()

    def grad(
        self,
        outputs: Sequence[Any],
        inputs: Sequence[Any],
        cotangent: Sequence[Any],
        create_graph: bool = False,
    ) -> list[Any]:
        """d(sum_i <cotangent_i, outputs_i>)/d(input) as engine objects (None where unused); with
        `create_graph`, differentiable again and never None (gradgradcheck's first derivative)."""
        raise NotImplementedError(f"engine {self.name!r} does not give gradients as engine values")

    def op_names(self, outputs: Sequence[Any]) -> set[str] | None:
        """The registry names of the ops that computed `outputs` (for the tolerance); None: unknown."""
        return None

    def source(self, node: Any) -> str:
        """Python source that rebuilds an engine value exactly, for reproducers."""
        return repr(node)

    def source_imports(self, nodes: Sequence[Any]) -> list[str]:
        """The import lines `source` needs for these values."""
        return []

    def snippet(self, graph: Graph, second_order: bool = False) -> str | None:
        """Code that shows this engine's result on `graph` beside torch's: by default a script
        that loads this adapter by its `spec` and builds the graph through it (None without a
        spec: the report shows the replay command and torch's code instead)."""
        return None if self.spec is None else adapter_snippet(graph, self.spec, second_order)

    # --- driving a graph -------------------------------------------------------------------------

    def program(self, graph: Graph) -> Program:
        """`graph` compiled for this engine: each node's op resolved once to this adapter's `apply`
        (straight to the registry's spelling when `apply` is not overridden)."""
        spelled = self.spelled_rule if adapter_spellings(self) else None
        if type(self).apply is EngineAdapter.apply:
            return Program(graph, traced(registry_apply), spelled)
        return Program(graph, traced(lambda op: partial(self.apply, op)), spelled)

    def spelled_rule(self, op: str, name: str) -> Callable[[list[Any], dict[str, Any]], Any]:
        """The rule of this adapter's spelling `name` of `op`, on (operands, attrs), marked on
        the beacon as `op` (KeyError when it lists no such spelling)."""
        rule = rule_of(adapter_spellings(self), op, name).rule
        return traced(lambda _: rule)(op)

    def build(
        self, graph: Graph, values: Sequence[Any], program: Program | None = None
    ) -> tuple[list[Any], list[Any]]:
        """Leaves for `values` and the graph's outputs, computed by this engine (`program`:
        `graph` already compiled by `self.program`, as `run_points` passes it for every point)."""
        leaves = [self.leaf(v) for v in values]
        nodes = (program or self.program(graph)).run(leaves, self.operand)
        return leaves, [nodes[o] for o in graph.outputs]

    def run(
        self, graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], program: Program | None = None
    ) -> tuple[list[Any], list[Any]]:
        """Forward values of the outputs and the cotangent-weighted input gradients, as numbers."""
        leaves, outputs = self.build(graph, values) if program is None else self.build(graph, values, program)
        forward = [self.read_value(o) for o in outputs]
        grads = self.gradients(outputs, leaves, cotangent)
        return forward, [_zero_if_none(g, v) for g, v in zip(grads, values)]

    def run_hvp(
        self, graph: Graph, values: Sequence[Any], cotangent: Sequence[Any], direction: Sequence[Any]
    ) -> list[Any]:
        leaves, outputs = self.build(graph, values)
        stage("second derivatives")
        return [_zero_if_none(g, v) for g, v in zip(self.hvp(outputs, leaves, cotangent, direction), values)]

    def run_jvp(
        self, graph: Graph, values: Sequence[Any], direction: Sequence[Any]
    ) -> tuple[list[Any], list[Any]]:
        """The outputs at `values` and their derivatives along `direction` (J·v), by the engine's
        forward mode, as numbers (engines with `forward_mode`; NotImplementedError: none for this
        graph, e.g. an op without a forward-mode rule, and the check skips it)."""
        raise NotImplementedError(f"engine {self.name!r} has no forward mode")

    def run_transform(
        self, name: str, graph: Graph, points: Sequence[Sequence[Any]], cotangents: Sequence[Sequence[Any]]
    ) -> list[list[Any]]:
        """Each point's cotangent-weighted input gradients taken by transform `name` (one of
        `transforms`), as numbers; NotImplementedError: the transform does not apply to this graph
        (the check skips it)."""
        raise NotImplementedError(f"engine {self.name!r} has no transform {name!r}")

    def run_hvp_transform(
        self,
        name: str,
        graph: Graph,
        values: Sequence[Any],
        cotangent: Sequence[Any],
        direction: Sequence[Any],
    ) -> list[Any]:
        """The Hessian-vector product at one point, as `run_hvp`'s, taken by `name` (one of
        `hvp_transforms`), as numbers; NotImplementedError: it does not apply to this graph."""
        raise NotImplementedError(f"engine {self.name!r} has no Hessian-vector product by {name!r}")

    def run_points(
        self, graph: Graph, points: Sequence[Sequence[Any]], cotangents: Sequence[Sequence[Any]]
    ) -> Iterator[tuple[list[Any], list[Any]]]:
        """`run` at each point in turn, lazily (a check stops at its first failing point).

        The harness always goes through here; function-style adapters evaluate all points at once.
        With the default `run` and `build` the graph is compiled once for all points.
        """
        cls = type(self)
        if cls.run is EngineAdapter.run and cls.build is EngineAdapter.build:
            program = self.program(graph)
            for values, cotangent in zip(points, cotangents):
                yield self.run(graph, values, cotangent, program)
        else:  # an adapter's own run or build, called as it was written
            for values, cotangent in zip(points, cotangents):
                yield self.run(graph, values, cotangent)

    def missing_methods(self) -> list[str]:
        """The methods this adapter must implement but does not (checked when a campaign starts)."""
        cls = type(self)
        needs_leaf = cls.build is EngineAdapter.build and cls.run is EngineAdapter.run
        missing = ["leaf"] if needs_leaf and cls.leaf is EngineAdapter.leaf else []
        if self.create_graph and cls.hvp is EngineAdapter.hvp and cls.run_hvp is EngineAdapter.run_hvp:
            missing.append("hvp (or set create_graph = False)")
        return missing


def _zero_if_none(g: Any, like: Any) -> Any:
    if g is None:
        return np.zeros_like(like) if isinstance(like, np.ndarray) else 0.0
    return g


def _real(x: Any) -> bool:
    """A real number or an array of them (what an adapter's `value` can always read)."""
    if isinstance(x, (bool, np.bool_)):
        return False
    if isinstance(x, (int, float, np.integer, np.floating)):
        return True
    return isinstance(x, np.ndarray) and x.dtype.kind in "fiu"
