"""omnigrad's `Value` (omnigrad 0.2.3): the adapter `gradcheck run --engine
omnigrad.diffengine:Value --print-adapter FILE` wrote, edited where omnigrad spells an op its own
way: sigmoid is `sigmod()`, log is `ln()`.

Left out: pow (`x ** y` raises AssertionError: only number exponents), atan, atan2 (no method).
"""

from omnigrad.diffengine import Value

from gradcheck.engines import EngineAdapter

# registry op -> the op computed with the class, from its operands `a` and attributes `k`
SPELLINGS = {
    "abs": lambda a, k: a[0].abs(),
    "add": lambda a, k: a[0] + a[1],
    "cos": lambda a, k: a[0].cos(),
    "div": lambda a, k: a[0] / a[1],
    "exp": lambda a, k: a[0].exp(),
    "mul": lambda a, k: a[0] * a[1],
    "neg": lambda a, k: -a[0],
    "pow_const": lambda a, k: a[0] ** k["exponent"],
    "log": lambda a, k: a[0].ln(),
    "relu": lambda a, k: a[0].reLU(),
    "sigmoid": lambda a, k: a[0].sigmod(),
    "sin": lambda a, k: a[0].sin(),
    "sqrt": lambda a, k: a[0].sqrt(),
    "sub": lambda a, k: a[0] - a[1],
    "tanh": lambda a, k: a[0].tanh(),
}
# registry op -> operand positions where a constant number is passed as Value(number)
NUMBERS_AS_VALUES = {}


class OmnigradValue(EngineAdapter):
    """omnigrad.diffengine.Value: the ops in SPELLINGS."""

    name = "omnigrad"
    ops = frozenset(SPELLINGS)
    registry_release = 2  # the op registry's forms these spellings were written for

    def leaf(self, value):
        return Value(float(value))

    def apply(self, op, args, attrs):
        wrap = NUMBERS_AS_VALUES.get(op, ())
        args = [Value(a) if i in wrap and isinstance(a, float) else a for i, a in enumerate(args)]
        return SPELLINGS[op](args, attrs)
