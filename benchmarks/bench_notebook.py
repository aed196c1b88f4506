"""The notebook's wait beside the command line's (issue 51): one learner's engine with one mistake,
checked by `gradcheck.check_engine(Value, ...)` in a Jupyter kernel and by `gradcheck run
--engine file.py:Value` on the same class saved to a file, the two taking turns.

    python benchmarks/bench_notebook.py                  # 2,000 graphs, 3 runs each
    python benchmarks/bench_notebook.py --graphs 200 --repeats 1

Two waits each, in wall seconds from the moment the user asks (Enter on the command, Shift-Enter
on the check's cell): to the first output (the CLI's panel or any line; the notebook's progress
bars or any output) and to the verdict (the command's exit; the cell's result). The notebook is
timed twice: in a kernel that has already run `import gradcheck` and the class's cell (the
learner's loop: edit the class, run its cell, run the check again), and from a fresh kernel's
first cell (`import gradcheck`, the class, the check: the first time of a session). Each
kernel is started untimed, as a learner's is before they type.

Not a pytest-benchmark benchmark: each figure is a whole process or kernel and its worker
processes, which the fixture (a call inside one process) cannot time.
"""

from __future__ import annotations

import argparse
import inspect
import queue
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MISTAKE = "TanhOneMinusT"  # tanh's slope written 1 - t: a tutorial's typical mistake


def value_source() -> str:
    """The learner's class: the tutorial's engine with the mistaken tanh, as typed into a cell."""
    from gradcheck.testing import tutorial_engines

    tanh = inspect.getsource(getattr(tutorial_engines, MISTAKE).tanh)
    return (
        "import math\nfrom typing import Any\n\n"
        "from gradcheck.testing.tutorial_engines import TutorialValue\n\n\n"
        f"class Value(TutorialValue):\n{textwrap.indent(textwrap.dedent(tanh), '    ')}"
    )


def cli_waits(engine_file: Path, graphs: int, cwd: Path) -> tuple[float, float]:
    """Seconds to the command's first output byte and to its exit."""
    argv = [sys.executable, "-m", "gradcheck", "run", "--engine", f"{engine_file}:Value"]
    argv += ["--graphs", str(graphs), "--no-save"]
    start = time.monotonic()
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    process.stdout.read(1)
    first = time.monotonic() - start
    process.stdout.read()
    process.wait()
    return first, time.monotonic() - start


class Kernel:
    """A Jupyter kernel of this Python (started untimed) and a client that times its outputs."""

    def __init__(self, cwd: Path) -> None:
        from gradcheck.testing.notebooks import kernel_manager

        self.directory = tempfile.TemporaryDirectory()
        self.manager = kernel_manager(Path(self.directory.name))
        self.manager.start_kernel(cwd=str(cwd))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=120)

    def run(self, code: str) -> tuple[float, float]:
        """Seconds from sending `code` to its first output and to its reply (the cell's end)."""
        start = time.monotonic()
        message_id = self.client.execute(code)
        first = None
        while True:
            try:
                message = self.client.get_iopub_msg(timeout=900)
            except queue.Empty as timed_out:
                raise RuntimeError("the kernel gave no output for 900 s") from timed_out
            if message["parent_header"].get("msg_id") != message_id:
                continue
            kind = message["msg_type"]
            if kind == "error":
                raise RuntimeError("\n".join(message["content"]["traceback"]))
            if first is None and kind in ("stream", "display_data", "execute_result"):
                first = time.monotonic() - start
            if kind == "status" and message["content"]["execution_state"] == "idle":
                end = time.monotonic() - start
                return (end if first is None else first), end

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)
        self.directory.cleanup()


def notebook_waits(source: str, graphs: int, cwd: Path) -> tuple[tuple[float, float], tuple[float, float]]:
    """(first output, end) of the check's cell in a kernel that ran the class's cell already,
    and of the three cells of a session's first run, in a fresh kernel, summed."""
    check = f"result = gradcheck.check_engine(Value, graphs={graphs})\nresult"
    fresh = Kernel(cwd)
    try:
        imported = fresh.run("import gradcheck")[1]
        defined = fresh.run(source)[1]
        first, end = fresh.run(check)
        session = (imported + defined + first, imported + defined + end)
        again = fresh.run(source)[1]
        loop_first, loop_end = fresh.run(check)
    finally:
        fresh.close()
    return (again + loop_first, again + loop_end), session


def main(argv: Sequence[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graphs", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each (the medians are printed)")
    args = parser.parse_args(argv)
    source = value_source()
    names = ("cli", "notebook, class cell re-run", "notebook, fresh kernel")
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as project, tempfile.TemporaryDirectory() as notebooks:
        engine_file = Path(project) / "learner_value.py"
        engine_file.write_text(source)
        for _ in range(args.repeats):
            rows["cli"].append(cli_waits(engine_file, args.graphs, Path(project)))
            loop, session = notebook_waits(source, args.graphs, Path(notebooks))
            rows["notebook, class cell re-run"].append(loop)
            rows["notebook, fresh kernel"].append(session)
        left_behind = sorted(p.name for p in Path(notebooks).iterdir())
    cli_first, cli_end = (statistics.median(w[i] for w in rows["cli"]) for i in (0, 1))
    lines = [
        f"{MISTAKE} as a learner's Value, {args.graphs} graphs, median of {args.repeats} (wall seconds)",
        "| where | first output s | verdict s | first / CLI's | verdict / CLI's |",
        "|---|---|---|---|---|",
    ]
    for name, waits in rows.items():
        first, end = (statistics.median(w[i] for w in waits) for i in (0, 1))
        ratios = f"{first / cli_first:.2f}x | {end / cli_end:.2f}x"
        lines.append(f"| {name} | {first:.2f} | {end:.2f} | {ratios} |")
    lines.append(f"written to the notebook's directory: {left_behind or 'nothing'}")
    return lines


if __name__ == "__main__":
    print("\n".join(main()))
