"""The registry's surface by release: every op and variant has the release that added it, and a
graph drawn for a surface holds no variant outside it (campaign, hypothesis and fixed graphs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcheck.engines import EngineAdapter, load_engine
from gradcheck.graphs import surface
from gradcheck.graphs.generate import random_graph
from gradcheck.graphs.registry import REGISTRY, TENSOR_OPS
from gradcheck.graphs.strategies import tensor_graphs
from gradcheck.graphs.surface import (
    BASE_RELEASE,
    LATEST,
    RELEASES,
    VARIANTS,
    adapter_variants,
    allows,
    graph_allowed,
    release_variants,
    variants_of,
)

RELEASE_1 = release_variants(BASE_RELEASE)
FORMS = ("sum", "mean", "matmul", "add", "mul")  # ops with and without variants


def test_each_registry_op_was_added_by_exactly_one_release():
    added = [op for release in RELEASES for op in release.ops]
    assert sorted(added) == sorted(REGISTRY), "a new op needs its release in gradcheck/graphs/surface.py"
    assert len(added) == len(set(added))


def test_each_variant_is_of_an_op_older_than_it_and_listed_by_its_release():
    release_of_op = {op: r.number for r in RELEASES for op in r.ops}
    for name, variant in VARIANTS.items():
        assert name.startswith(f"{variant.op}.") and variant.op in REGISTRY
        assert release_of_op[variant.op] < variant.release, f"{name}: a new op's forms come with it"
        (release,) = [r for r in RELEASES if r.number == variant.release]
        assert name in release.variants
    assert {v for r in RELEASES for v in r.variants} == set(VARIANTS)


def test_release_1_is_the_registry_before_keepdim_and_matmul_beyond_matrices():
    assert not RELEASE_1, "release 1 has no variant"
    assert release_variants(2) == {"sum.keepdim", "mean.keepdim", "matmul.vector", "matmul.batched"}
    assert release_variants(LATEST) == frozenset(VARIANTS)
    with pytest.raises(ValueError, match="unknown registry release 7"):
        release_variants(7)


def test_a_node_is_of_the_variants_its_attributes_show():
    assert variants_of("sum", {"dims": (-1, -2), "keepdim": True}) == ("sum.keepdim",)
    assert variants_of("sum", {"dims": (-1, -2)}) == (), "a tuple of dims is release 1's sum"
    assert variants_of("matmul", {"ranks": (1, 3)}) == ("matmul.vector", "matmul.batched")
    assert variants_of("matmul", {}) == (), "a graph saved before ranks: two matrices"
    assert allows(RELEASE_1, "sum", {"dims": (-1,), "keepdim": False})
    assert not allows(RELEASE_1, "mean", {"dims": (-1,), "keepdim": True})
    assert allows(frozenset({"mean.keepdim"}), "mean", {"dims": (-1,), "keepdim": True})
    assert allows(None, "matmul", {"ranks": (1, 1)})


def _variants_drawn(variants, seeds=range(150)):
    found = set()
    for seed in seeds:
        graph = random_graph(np.random.default_rng(seed), ops=FORMS, tensor=True, points=2, variants=variants)
        assert graph_allowed(graph, variants), [(n.op, n.attr) for n in graph.nodes]
        found |= {v for n in graph.nodes for v in variants_of(n.op, n.attr)}
    return found


def test_the_campaigns_generator_draws_only_the_variants_of_its_surface():
    assert _variants_drawn(None) == set(VARIANTS), "the full surface draws every variant"
    assert _variants_drawn(RELEASE_1) == set()
    assert _variants_drawn(frozenset({"sum.keepdim"})) == {"sum.keepdim"}


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_hypothesis_graphs_for_release_1_hold_no_variant(data):
    graph = data.draw(tensor_graphs(ops=FORMS, variants=RELEASE_1))
    assert graph_allowed(graph, RELEASE_1)


def test_no_edge_or_kink_case_is_a_variant():
    # the edge phase and the kink cases are not filtered by surface: a variant there needs it
    for op, spec in REGISTRY.items():
        for _, attrs in (*spec.edges, *spec.kink_cases):
            assert variants_of(op, attrs) == (), (op, attrs)


class _SaysNothing(EngineAdapter):
    ops = frozenset({"sum"})
    tensor = True


class _Release2(_SaysNothing):
    registry_release = 2


class _Listed(_SaysNothing):
    variants = frozenset({"sum.keepdim"})


def test_an_adapter_gets_its_release_and_the_variants_it_lists_and_built_ins_get_all():
    assert adapter_variants(_SaysNothing()) == RELEASE_1
    assert adapter_variants(_Release2()) == release_variants(2)
    assert adapter_variants(_Listed()) == {"sum.keepdim"}
    for name in ("minigrad", "minigrad-tensor", "micrograd", "gradcheck.engines.torch_engine:TorchAdapter"):
        assert adapter_variants(load_engine(name)) == set(VARIANTS), name


def test_a_variant_added_later_reaches_the_built_in_adapters_and_no_other(monkeypatch):
    later = surface.Variant("sum.later", "sum", RELEASES[-1].number + 1, "a later form", lambda a: False)
    monkeypatch.setitem(VARIANTS, "sum.later", later)
    assert "sum.later" in adapter_variants(load_engine("minigrad-tensor"))
    assert "sum.later" not in adapter_variants(_Release2())


@pytest.mark.parametrize(
    ("attribute", "value", "message"),
    [("variants", frozenset({"sum.keepdims"}), "unknown variant"), ("registry_release", 9, "release 9")],
)
def test_an_unknown_variant_or_release_is_refused(attribute, value, message):
    adapter = _SaysNothing()
    setattr(adapter, attribute, value)
    with pytest.raises(ValueError, match=message):
        adapter_variants(adapter)


def test_the_tensor_ops_with_variants_are_tensor_ops():
    assert {v.op for v in VARIANTS.values()} <= set(TENSOR_OPS)
