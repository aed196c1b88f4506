"""path_terms gives a gradient's exact value as a sum over paths, with the size of its terms."""

from __future__ import annotations

import mpmath
from bench_scripts import script

from gradcheck.graphs.ir import Graph, Input, OpNode

path_terms = script("path_terms")


def test_x_times_x_plus_x_has_three_paths_to_x():
    graph = Graph([Input("x0", 1.5)], [OpNode("mul", (0, 0)), OpNode("add", (1, 0))], [2])
    (terms,) = path_terms.exact_paths(graph, [1.5], [-2.0])
    assert mpmath.almosteq(terms.exact, -2.0 * (2 * 1.5 + 1), 1e-50)  # d(x² + x)/dx = 2x + 1
    assert mpmath.almosteq(terms.absolute, 2.0 * (1.5 + 1.5 + 1), 1e-50)
    assert (terms.paths, terms.longest) == (3, 2)


def test_a_cancelling_gradient_keeps_the_size_of_its_terms():
    # atan2(v, v) is pi/4 whatever v: its two partials cancel exactly, each of size 1 / (2v) = 4
    graph = Graph([Input("x0", 0.125)], [OpNode("atan2", (0, 0))], [1])
    (terms,) = path_terms.exact_paths(graph, [0.125], [1.0])
    assert mpmath.almosteq(terms.exact, 0, 1e-40) and mpmath.almosteq(terms.absolute, 8.0, 1e-40)
    check = path_terms.HandCheck("x0", -(2.0**-50), 0.0, terms)
    assert check.units(0.0) == 0.0 and abs(check.units(-(2.0**-50)) - 1.0) < 1e-12  # 2^-50 = u · 8


def test_a_finding_is_hand_checked_by_the_engine_torch_and_mpmath():
    graph = Graph([Input("x0", 0.3), Input("x1", 1.7)], [OpNode("div", (0, 1)), OpNode("tanh", (2,))], [3])
    engine = "gradcheck.testing.reordered_engines:PathSum"
    checks = path_terms.hand_check(graph.to_dict(), engine)
    assert [c.name for c in checks] == ["x0", "x1"]
    assert all(c.units(c.engine) < 4 and c.units(c.torch) < 4 for c in checks), [c.line() for c in checks]
    assert "Σ|terms|" in checks[0].line()
