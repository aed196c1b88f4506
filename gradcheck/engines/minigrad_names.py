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
    "linear": "matmul",
    "linearrelu": "matmul",  # relu of linear as one op (a hidden layer): a product's tolerance
    "sumtosize": "sum",
    "getitem": "index",
    "takealongaxis": "max_dim",  # the values of max(dim) and min(dim)
    # data movement: exact, checked like reshape
    "cat": "reshape",
    "stack": "reshape",
    "to": "reshape",
    "putalongaxis": "reshape",
    "scatteradd": "reshape",
    # losses built from log and sigmoid/softmax: checked like log_softmax
    "bce": "log_softmax",
    "bcewithlogits": "log_softmax",
    "binarycrossentropywithlogits": "log_softmax",
    "nllloss": "log_softmax",
    # minigrad's function and method names for composites and views (`Tensor.max`, `.T`, losses)
    "max": "amax",
    "min": "amin",
    "t": "transpose",
    "crossentropy": "log_softmax",
    "binarycrossentropy": "log_softmax",
    "hingeloss": "relu",
}


def registry_name(op_name: str) -> str:
    """The registry op a minigrad op name is checked like (the name itself when not listed)."""
    return MINIGRAD_OP_NAMES.get(normalised(op_name), op_name)
