"""minigrad's own op names (as its graphs record them) in the registry's terms.

Each minigrad op maps to the registry op it is checked like: the same op under another spelling
("+" is `add`, "PowConst" is `pow_const`), or for ops the registry does not generate, the op whose
tolerance family it shares (a data-movement op is checked like `reshape`, a log-likelihood loss
like `log_softmax`). Names are compared `normalised` (lower case, no underscores); an op whose
name is already a registry name needs no line here.
"""

from __future__ import annotations

from gradcheck.graphs.registry import normalised

MINIGRAD_OP_NAMES: dict[str, str] = {
    # spellings of registry ops
    "+": "add",
    "-": "sub",
    "*": "mul",
    "/": "div",
    "**": "pow",
    "addconst": "add",
    "subconst": "sub",
    "rsubconst": "sub",
    "mulconst": "mul",
    "divconst": "div",
    "rdivconst": "div",
    "rpowconst": "pow",
    "bcewithlogits": "binary_cross_entropy_with_logits",  # the Value loss's op
    "sumtosize": "sum",
    "getitem": "index",
    "takealongaxis": "max_dim",  # the values of max(dim) and min(dim)
    # data movement: exact, checked like reshape
    "cat": "reshape",
    "stack": "reshape",
    "to": "reshape",
    "putalongaxis": "reshape",
    "scatteradd": "reshape",
    # a loss built from log, checked like log_softmax
    "bce": "log_softmax",
    # minigrad's function and method names for composites and views (`Tensor.max`, `.T`, losses)
    "max": "amax",
    "min": "amin",
    "t": "transpose",
    "binarycrossentropy": "log_softmax",
    "hingeloss": "relu",
}


def registry_name(op_name: str) -> str:
    """The registry op a minigrad op name is checked like (the name itself when not listed)."""
    return MINIGRAD_OP_NAMES.get(normalised(op_name), op_name)


# --- minigrad's differentiable surface -------------------------------------------------------------

# The registry ops that check each differentiable name minigrad exposes (a Tensor or Value method or
# operator, a `minigrad.functional` function) where the name is not itself a registry op's.
MINIGRAD_API_OPS: dict[str, tuple[str, ...]] = {
    "__add__": ("add",),
    "__radd__": ("add",),
    "__sub__": ("sub",),
    "__rsub__": ("sub",),
    "__mul__": ("mul",),
    "__rmul__": ("mul",),
    "__truediv__": ("div",),
    "__rtruediv__": ("div",),
    "__pow__": ("pow", "pow_const"),
    "__rpow__": ("pow",),
    "__neg__": ("neg",),
    "__abs__": ("abs",),
    "__matmul__": ("matmul",),
    "__rmatmul__": ("matmul",),
    "clip": ("clamp",),
    "T": ("transpose",),
    "mT": ("transpose",),
    "sum_to_size": ("sum",),
    "linear": ("linear", "linear_no_bias"),
    "linear_relu": ("linear_relu", "linear_relu_no_bias"),
    "view": ("reshape",),  # minigrad's view is reshape (numpy decides whether it copies)
    # shape and indexing ops
    "__getitem__": ("index",),
    "__iter__": ("index",),  # rows, as t[0], t[1], ...
    "broadcast_to": ("expand",),
    "expand_as": ("expand",),
    "max": ("amax", "max_dim"),
    "min": ("amin", "min_dim"),
}

# Names minigrad exposes that are not differentiable ops, each with why no registry entry checks it.
NOT_DIFFERENTIABLE_OPS: dict[str, str] = {
    "backward": "runs the backward pass (every graph check calls it)",
    "retain_grad": "asks backward to keep a non-leaf's gradient: autograd bookkeeping, no op",
    "requires_grad_": "marks a leaf as differentiable: autograd bookkeeping, no op",
    "requires_grad": "a flag, not an op",
    "grad": "the stored gradient, not an op",
    "grad_fn": "the op that made a tensor: a name, not an op",
    "is_leaf": "a flag, not an op",
    "data": "the plain value: reading it leaves the graph",
    "detach": "cuts the graph on purpose: no gradient flows by definition",
    "label": "a Value's display name for drawings",
    "item": "a Python number: leaves the graph",
    "tolist": "Python numbers: leave the graph",
    "numpy": "a numpy array: leaves the graph",
    "__array__": "a numpy array: leaves the graph",
    "__float__": "a Python number: leaves the graph",
    "__int__": "a Python int: leaves the graph",
    "__bool__": "a truth value: leaves the graph",
    "dtype": "a dtype, not an op",
    "shape": "a shape, not an op",
    "ndim": "a number, not an op",
    "size": "a shape, not an op",
    "dim": "a number, not an op",
    "numel": "a number, not an op",
    "__len__": "a number, not an op",
    "argmax": "integer indices: no gradient",
    "argmin": "integer indices: no gradient",
    "__eq__": "a comparison: a bool tensor, no gradient",
    "__ne__": "a comparison: a bool tensor, no gradient",
    "__lt__": "a comparison: a bool tensor, no gradient",
    "__le__": "a comparison: a bool tensor, no gradient",
    "__gt__": "a comparison: a bool tensor, no gradient",
    "__ge__": "a comparison: a bool tensor, no gradient",
    "__invert__": "logical not of a bool tensor: no gradient",
    "__hash__": "identity hashing, not an op",
    "__repr__": "printing, not an op",
    "__init__": "construction: a leaf, not an op",
    "to": "a dtype cast: the identity on values, its gradient cast back; graphs have one dtype, and "
    "the float32 campaign checks every op's dtype against torch",
    "float": "a cast to float32, as `to`",
    "double": "a cast to float64, as `to`",
    "long": "a cast to int64: integers have no gradient",
}


def registry_ops_of(api_name: str) -> tuple[str, ...]:
    """The registry ops that check one name of minigrad's differentiable API (the name itself when
    it is a registry op's)."""
    return MINIGRAD_API_OPS.get(api_name, (api_name,))
