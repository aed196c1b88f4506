"""An adapter learns which of the engine's own operations each registry op creates, from the
nodes its values keep: a tutorial engine's neg, sub and div are graphs of its mul, add and pow
nodes; an engine whose values expose no such graph, or whose every op is a node of its own,
learns nothing."""

from __future__ import annotations

from gradcheck.engines.built_from import built_from_text, learn_built_from
from gradcheck.engines.loading import load_engine
from gradcheck.engines.minigrad_value import MinigradValue
from gradcheck.testing import built_from_engines

ENGINES = "gradcheck.testing.built_from_engines"


def test_a_tutorial_class_builds_neg_sub_and_div_from_its_primitives():
    adapter = load_engine(f"{ENGINES}:Value")
    assert adapter.built_from == {
        "neg": frozenset({"mul"}),
        "sub": frozenset({"add", "mul"}),
        "div": frozenset({"mul", "pow_const"}),
    }


def test_what_an_op_is_built_from_follows_the_engines_own_nodes():
    adapter = load_engine(f"{ENGINES}:NegOwnNode")  # negation a node of its own
    assert adapter.built_from["sub"] == frozenset({"add", "neg"})
    assert "neg" not in adapter.built_from


def test_minigrads_value_and_torch_learn_nothing():
    assert MinigradValue().built_from == {}  # every op its own node
    assert load_engine("torch").built_from == {}  # no `_op` or parents kept


class Opaque(built_from_engines.Value):
    """The tutorial class with its operands kept nowhere the harness looks."""

    def __init__(self, data, _parents=(), _op=""):
        super().__init__(data, _parents, _op)
        self._hidden, self._parents = self._parents, None


def test_values_that_keep_no_parents_learn_nothing():
    adapter = load_engine(f"{ENGINES}:Value")
    adapter.leaf = lambda value: Opaque(value)
    assert learn_built_from(adapter) == {}


def test_the_note_names_the_ops_and_their_primitive():
    said = built_from_text("mul", ["div", "neg", "sub"])
    assert said == "div, neg and sub are built from mul in this engine"
    assert built_from_text("pow_const", ["div"]) == "div is built from pow_const in this engine"
