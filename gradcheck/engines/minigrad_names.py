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
    "permute": "transpose",
    "sumtosize": "sum",
    # data movement: exact, checked like reshape
    "cat": "reshape",
    "stack": "reshape",
    "expand": "reshape",
    "getitem": "reshape",
    "to": "reshape",
    "takealongaxis": "reshape",
    "putalongaxis": "reshape",
    "scatteradd": "reshape",
    # selection: piecewise like maximum
    "where": "maximum",
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
