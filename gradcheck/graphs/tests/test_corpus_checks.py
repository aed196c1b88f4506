"""The corpus loader checks every field: an entry that checks nothing or breaks replay is refused."""

import json

import pytest

from gradcheck.graphs import corpus_format
from gradcheck.graphs.corpus_checks import required_attrs

HEADER = {"format": "minigrad-graph", "version": 1}


def graph(**fields):
    base = {
        **HEADER,
        "inputs": [{"name": "x0", "value": 0.5, "shape": []}, {"name": "x1", "value": 1.5, "shape": []}],
        "nodes": [{"op": "mul", "args": [0, 1], "attrs": {}}],
        "outputs": [2],
    }
    return json.dumps({**base, **fields})


def pow_const(exponent_json: str) -> str:
    return (
        '{"format": "minigrad-graph", "version": 1, "inputs": [{"name": "x0", "value": 0.5}], '
        '"nodes": [{"op": "pow_const", "args": [0], "attrs": ' + exponent_json + '}], "outputs": [1]}'
    )


def tensor_op(op: str, attrs_json: str, args: str = "[0]") -> str:
    """A graph of one tensor op on an input of shape (2, 3)."""
    return (
        '{"format": "minigrad-graph", "version": 1, "inputs": [{"name": "x0", "value": [[0.5, 1.0, 2.0], '
        f'[1.5, -1.0, 0.25]], "shape": [2, 3]}}], "nodes": [{{"op": "{op}", "args": {args}, "attrs": '
        f"{attrs_json}}}], " + '"outputs": [1]}'
    )


MALFORMED = {
    "no points": (graph(points=[[], []]), "at least one input point"),
    "nan input": (graph().replace("0.5", "NaN"), "inputs[0].value: float nan is not a finite"),
    "infinite point": (graph(points=[[0.5], [1.0]]).replace("[1.0]", "[Infinity]"), "points[1]"),
    "unequal points": (graph(points=[[0.5, 1.0], [1.5]]), "arrays of different lengths [2, 1]"),
    "pow_const without exponent": (pow_const("{}"), "missing attribute(s) ['exponent']"),
    "huge exponent": (
        pow_const('{"exponent": 1' + "0" * 400 + "}"),
        "attribute 'exponent': expected a finite",
    ),
    "exponent as text": (pow_const('{"exponent": "2"}'), "attribute 'exponent'"),
    "unknown attribute": (pow_const('{"exponent": 2, "base": 3}'), "unknown attribute(s) ['base']"),
    "meta as a string": (graph(meta="engine x"), "'meta' must be an object, got str"),
    "nan shape": (
        graph().replace('"shape": []', '"shape": [NaN]', 1),
        "inputs[0].shape: expected a list of sizes",
    ),
    "shape of 0": (
        graph().replace('"shape": []', '"shape": [0]', 1),
        "inputs[0].shape: expected a list of sizes",
    ),
    "deep nesting": ("[" * 50_000 + "]" * 50_000, "nested deeper than"),
    "5001-digit integer": (graph().replace("0.5", "1" + "0" * 5000), "not valid JSON"),
    "code as a name": (
        graph().replace('"x0"', "\"__import__('os').system('ls')\""),
        "not a Python identifier",
    ),
    "keyword as a name": (graph().replace('"x0"', '"lambda"'), "not a Python identifier"),
    "snippet variable as a name": (graph().replace('"x0"', '"torch"'), "reserved"),
    "node name as a name": (graph().replace('"x0"', '"v2"'), "reserved"),
    "two inputs one name": (graph().replace('"x1"', '"x0"'), "used by two inputs"),
    "index entry of unknown kind": (
        tensor_op("index", '{"index": [["slice", null, null, null], ["ellipsis"]]}'),
        "attribute 'index': expected entries [kind, ...]",
    ),
    "index with code for an integer": (
        tensor_op("index", '{"index": [["int", "__import__(\'os\')"], ["slice", 0, 2, 1]]}'),
        'expected ["int", i]',
    ),
    "index with a negative step": (
        tensor_op("index", '{"index": [["slice", null, null, -1], ["ints", [0, 0]]]}'),
        "slice step of at least 1",
    ),
    "mask of numbers": (tensor_op("index", '{"index": [["mask", [1, 0]]]}'), "of booleans"),
    "condition of numbers": (
        tensor_op("where", '{"cond": [1, 0, 1]}', args="[0, 0]"),
        "attribute 'cond': expected a boolean",
    ),
    "expand to size 0": (tensor_op("expand", '{"sizes": [2, 0, 3]}'), "at least 1, or -1"),
    "keepdim as a number": (
        tensor_op("sum", '{"dims": [-1], "keepdim": 1}'),
        "attribute 'keepdim': expected true or false",
    ),
    "clamp bounds reversed": (
        pow_const('{"low": 1.0, "high": -1.0}').replace("pow_const", "clamp"),
        "low 1.0 is above high -1.0",
    ),
}


@pytest.mark.parametrize(("text", "problem"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_entry_is_refused_naming_the_file_and_the_field(tmp_path, text, problem):
    path = tmp_path / "entry.json"
    path.write_text(text)
    with pytest.raises(corpus_format.CorpusFileError) as info:
        corpus_format.load(path)
    message = str(info.value)
    assert str(path) in message and problem in message
    assert "\n" not in message


def test_a_sound_entry_loads():
    assert corpus_format.parse(graph(points=[[0.5, 1.0], [1.5, 2.0]])).n_points == 2
    assert corpus_format.parse(pow_const('{"exponent": -0.5}')).nodes[0].attr == {"exponent": -0.5}


def test_shape_and_indexing_attributes_load_and_keepdim_may_be_left_out():
    index = corpus_format.parse(
        tensor_op("index", '{"index": [["mask", [true, false]], ["ints", [0, -3, 2]]]}')
    )
    assert index.nodes[0].attr["index"] == [["mask", [True, False]], ["ints", [0, -3, 2]]]
    older_sum = corpus_format.parse(tensor_op("sum", '{"dims": [-1]}'))  # saved before keepdim existed
    assert "keepdim=False" in older_sum.to_python()
    assert corpus_format.parse(tensor_op("expand", '{"sizes": [4, -1, 3]}')).nodes[0].attr == {
        "sizes": [4, -1, 3]
    }


def test_each_op_takes_the_attributes_its_snippet_names():
    assert required_attrs("pow_const") == {"exponent"}
    assert required_attrs("clamp") == {"low", "high"}
    assert required_attrs("softmax") == {"dim"}
    assert required_attrs("tanh") == set()


def test_a_tensor_graph_a_campaign_writes_reads_back_with_its_layout_attributes():
    # a campaign saves failing graphs as they were drawn: a matmul's operand ranks and a reshape's
    # input rank are attributes no spelling shows, read by the batched references
    import numpy as np

    from gradcheck.graphs.corpus_checks import check_graph_data
    from gradcheck.graphs.generate import random_graph
    from gradcheck.graphs.ir import Graph

    ops = ["matmul", "reshape", "mse_loss", "cross_entropy"]
    drawn = [random_graph(np.random.default_rng(s), ops=ops, tensor=True) for s in range(40)]
    layouts = {name for g in drawn for n in g.nodes for name, _ in n.attrs if name in ("ranks", "ndim_in")}
    assert layouts == {"ranks", "ndim_in"}
    losses = {name for g in drawn for n in g.nodes for name, _ in n.attrs if name in ("reduction", "target")}
    assert losses == {"reduction", "target"}, "the losses' attributes (a word, class indices) read back too"
    for g in drawn:
        check_graph_data(g.to_json())
        assert Graph.from_json(g.to_json()).to_json() == g.to_json()
    bogus = drawn[0].to_dict()
    bogus["nodes"][0]["attrs"]["colour"] = 1
    with pytest.raises(corpus_format.GraphFormatError, match=r"unknown attribute\(s\) \['colour'\]"):
        check_graph_data(json.dumps(bogus))
