"""Notebooks executed as Jupyter executes them (nbclient driving an ipykernel kernel), for the
tests of what `gradcheck.check_engine` shows there: the kernel is this Python (`sys.executable`,
from a kernelspec written for the run), never whichever `python3` kernel the machine has
installed, so it imports the gradcheck and torch under test."""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

KERNEL = "gradcheck-test-python"


def notebook(*cells: str) -> Any:
    """A notebook of code cells with these sources (nbformat 4)."""
    import nbformat

    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])


def execute(nb: Any, cwd: Path, timeout: float = 300) -> Any:
    """`nb` executed cell by cell in a fresh kernel of this Python, started in `cwd`; the
    executed notebook (its outputs filled in). A cell that raises raises `CellExecutionError`."""
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory() as kernels:
        manager = kernel_manager(Path(kernels))
        client = NotebookClient(nb, km=manager, timeout=timeout, resources={"metadata": {"path": str(cwd)}})
        client.execute()
    return nb


def kernel_manager(kernels: Path) -> Any:
    """A jupyter_client KernelManager (not started) of a kernel of this Python, its kernelspec
    written into the directory `kernels` (which must outlive the kernel's start)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = kernels / KERNEL
    spec.mkdir()
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": KERNEL, "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel))
    specs = KernelSpecManager(kernel_dirs=[str(kernels)], ensure_native_kernel=False)
    return KernelManager(kernel_name=KERNEL, kernel_spec_manager=specs)


def outputs(cell: Any) -> Iterator[dict[str, Any]]:
    """A cell's outputs, each as Jupyter stored it."""
    yield from cell.get("outputs", ())


def html_of(cell: Any) -> list[str]:
    """Every text/html a cell displayed or returned, in order."""
    return [o["data"]["text/html"] for o in outputs(cell) if "text/html" in o.get("data", {})]


def text_of(cell: Any, names: Sequence[str] = ("stdout", "stderr")) -> str:
    """What a cell printed on the named streams, and the plain text of what it returned."""
    parts = [o["text"] for o in outputs(cell) if o.get("output_type") == "stream" and o["name"] in names]
    parts += [o["data"]["text/plain"] for o in outputs(cell) if o.get("output_type") == "execute_result"]
    return "".join(parts)
