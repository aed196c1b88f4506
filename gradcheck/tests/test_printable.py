"""Control characters from an engine's messages are shown escaped in the console and report.html."""

from __future__ import annotations

import textwrap

import pytest

from gradcheck.cli import main
from gradcheck.parity.wording import html_text, printable

RED = "\x1b[31m"
RESET = "\x1b[0m"

ENGINES = textwrap.dedent(
    """
    from gradcheck.engines.minigrad_value import MinigradValue


    class ColourfulErrors(MinigradValue):
        # one-op graphs build fine; larger graphs raise
        def build(self, graph, values):
            if len(graph.nodes) > 1:
                raise RuntimeError("\\x1b[31mboom\\x1b[0m\\rover\\u202e<b>")
            return super().build(graph, values)


    class ColourfulAdapter(MinigradValue):
        def __init__(self):  # an adapter that cannot be built is refused, on stderr
            raise TypeError("\\x1b[2J\\x1b[Hcleared")
    """
)


@pytest.fixture
def engines(tmp_path, monkeypatch):
    (tmp_path / "colourful_engines.py").write_text(ENGINES)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        (f"{RED}boom{RESET}", r"\x1b[31mboom\x1b[0m"),
        ("a\rb\x07c\x00d\x7fe\x9bf", r"a\rb\x07c\x00d\x7fe\x9bf"),
        ("left\u202eright\u2066", r"left\u202eright\u2066"),
        ("two\nlines\tand a tab, é, λ, 日本", "two\nlines\tand a tab, é, λ, 日本"),
    ],
)
def test_control_and_bidi_characters_are_written_as_escapes_and_the_rest_kept(raw, shown):
    assert printable(raw) == shown


def test_html_text_escapes_markup_after_the_control_characters():
    assert html_text(f"{RED}<b>&") == r"\x1b[31m&lt;b&gt;&amp;"


def test_a_failing_graphs_message_reaches_console_and_page_escaped(engines, tmp_path, capsys):
    out_dir = tmp_path / "out"
    argv = ["run", "--engine", "colourful_engines:ColourfulErrors", "--graphs", "6"]
    status = main([*argv, "--no-save", "--out", str(out_dir)])
    out, err = capsys.readouterr()
    assert status == 1
    shown = " ".join(out.split())  # rich wraps long lines at spaces
    # (raised in the adapter's own `build`: the adapter's fault, its message escaped all the same)
    assert r"adapter raised RuntimeError: \x1b[31mboom\x1b[0m\rover\u202e<b>" in shown
    page = (out_dir / "report.html").read_text(encoding="utf-8")
    assert r"adapter raised RuntimeError: \x1b[31mboom\x1b[0m\rover\u202e&lt;b&gt;" in page
    for text in (out, err, page):
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text


def test_an_adapters_error_on_stderr_is_escaped(engines, tmp_path, capsys):
    status = main(["run", "--engine", "colourful_engines:ColourfulAdapter", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2
    assert r"raised TypeError: \x1b[2J\x1b[Hcleared" in err and "\x1b" not in err
