"""The kinds of difference are spelled as the reports and the command line spell them."""

from gradcheck.parity.kinds import SUBGRADIENT_TOLERATED, Kind


def test_every_kind_has_its_report_spelling():
    assert [str(k) for k in Kind] == [
        "wrong-gradient",
        "wrong-second-derivative",
        "wrong-value",
        "wrong-forward-mode",
        "wrong-transform",
        "nonfinite",
        "exception",
        "wrong-type",
        "wrong-shape",
        "convention",
        "structural",
        "nondeterministic",
        "crash",
        "timeout",
    ]


def test_a_kind_reads_back_from_its_spelling():
    assert Kind("nonfinite") is Kind.NONFINITE


def test_only_conventions_are_tolerated_under_subgradient_conventions():
    assert {Kind.CONVENTION} == SUBGRADIENT_TOLERATED
