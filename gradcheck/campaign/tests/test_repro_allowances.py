"""A finding's repro allows each entry what the harness allowed it (its rounding bound times
BOUND_SAFETY), so the repro fails where the check failed, even by 1e-12, and passes once the
engine agrees to rounding (`blame.with_allowances`, `parity.compare.repro_allowances`)."""

import subprocess
import sys
from pathlib import Path

from gradcheck.campaign.blame import with_allowances
from gradcheck.engines import load_engine
from gradcheck.engines.snippets import ALLOWED
from gradcheck.graphs.ir import Graph, Input, OpNode
from gradcheck.parity.classify import Difference
from gradcheck.parity.compare import check_graph
from gradcheck.parity.kinds import Kind

ROOT = Path(__file__).parents[3]
OFF = "gradcheck.testing.field_engines:DivisionOffByAPart"  # every quotient 1e-12 too large
QUOTIENT = Graph([Input("x0", 0.8), Input("x1", 1.3)], [OpNode("div", (0, 1))], [2], cotangent=[1.5])
WRONG_VALUE = Difference(Kind.WRONG_VALUE, "forward")


def status(engine: str, graph: Graph) -> int:
    code = load_engine(engine).snippet(graph)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "verdict: " in done.stdout, done.stdout + done.stderr
    return done.returncode


def test_a_quotient_1e12_off_fails_its_repro_as_it_failed_the_check():
    assert not check_graph(QUOTIENT, load_engine(OFF), numeric=False, second_order=False).passed
    graph = with_allowances(QUOTIENT, WRONG_VALUE)
    (allowed,) = graph.meta[ALLOWED]["outputs"]
    assert 0 < allowed < 1e-12 * 0.8 / 1.3  # a few ulps of the quotient
    assert status(OFF, graph) == 1
    assert status("minigrad", graph) == 0  # the engine that agrees passes the same repro


def test_differences_the_rounding_has_no_part_in_keep_the_graph_as_it_is():
    assert with_allowances(QUOTIENT, Difference(Kind.EXCEPTION, "gradient")) is QUOTIENT
