"""Spec for draw_graph (DOT text: a record per node, an op node per operation) and render_graph's errors."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

import minigrad
from minigrad import ScalarOp, Value, apply_op, draw_graph, render_graph

RECORD = re.compile(r'^  (v\d+) \[label="\{ data (.*) \| grad (.*) \}"\];$')
OP = re.compile(r'^  (v\d+)_op \[label="(.*)", shape=ellipse\];$')
EDGE = re.compile(r"^  (v\d+(?:_op)?) -> (v\d+(?:_op)?);$")


def parse(dot):
    """(records {id: (data, grad)}, ops {id: label}, edges [(src, dst)]), failing on any other line."""
    lines = dot.splitlines()
    assert lines[:3] == ["digraph minigrad {", "  rankdir=LR;", "  node [shape=record];"]
    assert lines[-1] == "}"
    records, ops, edges = {}, {}, []
    for line in lines[3:-1]:
        if m := RECORD.match(line):
            records[m[1]] = (m[2], m[3])
        elif m := OP.match(line):
            ops[m[1]] = m[2]
        elif m := EDGE.match(line):
            edges.append((m[1], m[2]))
        else:
            pytest.fail(f"unexpected DOT line {line!r}")
    return records, ops, edges


def test_each_value_is_a_record_and_each_op_a_node_wired_from_inputs_to_result():
    a, b = Value(2.0), Value(-3.0)
    out = a * b + a * 2
    out.backward()
    records, ops, edges = parse(draw_graph(out))

    by_label = {label: node for node, label in records.items()}
    assert sorted(by_label) == sorted([("2", "-1"), ("-3", "2"), ("-6", "1"), ("4", "1"), ("-2", "1")])
    node = {v: by_label[(f"{v.data:.4g}", f"{v.grad:.4g}")] for v in (a, b)}
    product, scaled = (by_label[("-6", "1")], by_label[("4", "1")])
    total = by_label[("-2", "1")]
    assert ops == {product: "*", scaled: "*, c=2", total: "+"}
    assert sorted(edges) == sorted(
        [
            (f"{product}_op", product),
            (node[a], f"{product}_op"),
            (node[b], f"{product}_op"),
            (f"{scaled}_op", scaled),
            (node[a], f"{scaled}_op"),
            (f"{total}_op", total),
            (product, f"{total}_op"),
            (scaled, f"{total}_op"),
        ]
    )


def test_an_input_used_twice_by_one_op_gets_two_edges():
    a = Value(3.0)
    records, ops, edges = parse(draw_graph(a + a))
    (leaf,) = [n for n, label in records.items() if label[0] == "3"]
    (op,) = ops
    assert edges.count((leaf, f"{op}_op")) == 2


def test_a_graph_deeper_than_the_recursion_limit_is_drawn():
    x = Value(0.1)
    y = x
    depth = sys.getrecursionlimit() * 5
    for _ in range(depth):
        y = y.tanh()
    records, ops, edges = parse(draw_graph(y))
    assert len(records) == depth + 1 and len(ops) == depth and len(edges) == 2 * depth


def test_non_finite_numbers_and_unusual_op_names_are_written_safely():
    class Shout(ScalarOp):
        name = 'say "hi" {|}'

        @staticmethod
        def forward(x):
            return x

        @staticmethod
        def backward(g, out, x):
            return (g,)

    out = apply_op(Shout, float("nan")) * float("inf")
    dot = draw_graph(out)
    assert '[label="say \\"hi\\" {|}", shape=ellipse];' in dot
    records, ops, _ = parse(dot)
    assert list(records.values()) == [("nan", "0")] * 3  # the wrapped input, its Shout, the product
    assert sorted(ops.values()) == ["*, c=inf", 'say \\"hi\\" {|}']


def test_tensor_nodes_show_dtype_shape_and_the_ops_name():
    t = minigrad.Tensor([[1.0, 2.0]], requires_grad=True)
    out = (t * 2.0).sum()
    out.backward()
    records, ops, _ = parse(draw_graph(out))
    assert ("float32 (1, 2)", "float32 (1, 2)") in records.values()
    assert ("float32 () 6", "None") in records.values()
    assert sorted(ops.values()) == ["mul", "sum"]


def test_rankdir_can_be_set_and_is_checked():
    assert "  rankdir=TB;" in draw_graph(Value(1.0) * 2, rankdir="TB")
    with pytest.raises(ValueError, match="rankdir must be 'LR', 'TB', 'RL' or 'BT', got 'up'"):
        draw_graph(Value(1.0), rankdir="up")


def test_draw_graph_refuses_what_is_not_a_graph_node():
    with pytest.raises(TypeError, match=r"draw_graph: expected a Value or Tensor, got float 1\.5"):
        draw_graph(1.5)


def test_render_graph_without_the_graphviz_package_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # makes `import graphviz` fail
    with pytest.raises(ImportError, match=re.escape("pip install minigrad[viz]")):
        render_graph(Value(1.0) * 2, tmp_path / "g.svg")


def test_render_graph_without_the_dot_program_names_it(monkeypatch, tmp_path):
    pytest.importorskip("graphviz")
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no `dot` anywhere
    with pytest.raises(RuntimeError, match=r"Graphviz's `dot` executable was not found on PATH") as error:
        render_graph(Value(1.0) * 2, tmp_path / "g.svg")
    assert "install Graphviz itself" in str(error.value)
    assert not (tmp_path / "g.svg").exists()


def test_render_graph_writes_what_dot_produces_to_the_path(monkeypatch, tmp_path):
    pytest.importorskip("graphviz")
    fake_dot = tmp_path / "dot"  # echoes its input: the file must then hold exactly our DOT text
    fake_dot.write_text("#!/bin/sh\ncat\n")
    fake_dot.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ.get("PATH", ""))
    root = Value(2.0) * Value(3.0)
    path = render_graph(root, tmp_path / "graph.svg")
    assert path == str(tmp_path / "graph.svg")
    assert Path(path).read_text() == draw_graph(root)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_render_graph_makes_an_svg_with_real_graphviz(tmp_path):
    pytest.importorskip("graphviz")
    path = render_graph(Value(2.0) * Value(3.0), tmp_path / "graph.svg")
    assert "<svg" in Path(path).read_text()
