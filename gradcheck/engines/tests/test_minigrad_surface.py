"""Every differentiable op minigrad exposes is checked by a registry entry, or excluded with a reason.

minigrad's surface is what a user can call: the methods, properties and operators of `Tensor` and
`Value`, and the functions of `minigrad.functional`. Each name maps to the registry ops that check
it (`engines/minigrad_names.py`) or sits in its list of names that are not differentiable ops.
"""

from __future__ import annotations

import inspect
from types import ModuleType

import pytest

import minigrad.functional
from gradcheck.engines.minigrad_names import MINIGRAD_API_OPS, NOT_DIFFERENTIABLE_OPS, registry_ops_of
from gradcheck.graphs.registry import REGISTRY
from minigrad import Tensor, Value


def class_surface(cls: type) -> set[str]:
    """The public names and the operators a class defines (on itself or a base other than object)."""
    names = set()
    for klass in cls.__mro__[:-1]:
        for name, member in vars(klass).items():
            private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
            if private or member is None or not (callable(member) or hasattr(member, "__get__")):
                continue
            if name.startswith("__") and not callable(member):
                continue  # __module__, __doc__, __slots__: strings and tuples
            names.add(name)
    return names


def module_surface(module: ModuleType) -> set[str]:
    """The public functions a module defines itself (not those it imports, nor its op classes)."""
    return {
        name
        for name, member in vars(module).items()
        if inspect.isfunction(member) and member.__module__ == module.__name__ and not name.startswith("_")
    }


def unchecked(names: set[str]) -> list[str]:
    """The names neither mapped to a registry (or pending) op nor excluded as not an op."""
    known = set(REGISTRY)
    return sorted(
        name
        for name in names
        if name not in NOT_DIFFERENTIABLE_OPS and not set(registry_ops_of(name)) <= known
    )


SURFACES = {
    "Tensor": class_surface(Tensor),
    "Value": class_surface(Value),
    "minigrad.functional": module_surface(minigrad.functional),
}


@pytest.mark.parametrize("owner", sorted(SURFACES))
def test_every_differentiable_name_minigrad_exposes_has_a_registry_entry_or_a_reasoned_exclusion(owner):
    missing = unchecked(SURFACES[owner])
    assert not missing, (
        f"{owner} exposes {missing}: add a registry entry for each (gradcheck/graphs/), map the name to "
        "the entries that check it (MINIGRAD_API_OPS), or say why it is not a differentiable op "
        "(NOT_DIFFERENTIABLE_OPS), in gradcheck/engines/minigrad_names.py"
    )


def test_the_surface_is_read_from_minigrad_itself():
    assert {"__add__", "__rpow__", "relu", "T", "backward", "sum"} <= SURFACES["Tensor"]
    assert "linear" not in SURFACES["Tensor"]  # a function of minigrad.functional only
    assert {"__matmul__", "clamp", "mT"} <= SURFACES["Tensor"]
    assert {"__rtruediv__", "tanh", "atan2", "data"} <= SURFACES["Value"]
    assert "_prev" not in SURFACES["Value"] and "__slots__" not in SURFACES["Tensor"]
    assert {"linear_relu", "cross_entropy", "mse_loss"} <= SURFACES["minigrad.functional"]
    assert "LinearReLU" not in SURFACES["minigrad.functional"]  # an op's rule, not a function to call


def test_a_new_differentiable_method_without_an_entry_is_caught():
    class Grown(Tensor):
        def softplus(self) -> Tensor:
            return (self.exp() + 1.0).log()

        def __rmod__(self, other: object) -> Tensor:
            return self

    assert unchecked(class_surface(Grown)) == ["__rmod__", "softplus"]


def test_mappings_and_exclusions_name_what_minigrad_exposes_and_what_the_registry_has():
    exposed = set().union(*SURFACES.values())
    assert set(MINIGRAD_API_OPS) - exposed == set(), "a mapping for a name minigrad no longer exposes"
    assert set(NOT_DIFFERENTIABLE_OPS) - exposed == set(), "an exclusion of a name minigrad no longer exposes"
    assert set(MINIGRAD_API_OPS) & set(NOT_DIFFERENTIABLE_OPS) == set()
    assert all(reason.strip() for reason in NOT_DIFFERENTIABLE_OPS.values())
