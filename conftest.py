"""Root pytest configuration: the gradcheck plugin (hypothesis profiles, the parity suite's
options and fixtures) and this repository's short `--engine` alias for `--gradcheck-engine`."""

from __future__ import annotations

# Installed, the plugin is loaded by its `pytest11` entry point (of the same name); this loads it
# from a clone that was not reinstalled since the entry point was added.
pytest_plugins = ["gradcheck.suite.plugin"]


def pytest_addoption(parser):
    """`--engine NAME`: in this repository, the same as `--gradcheck-engine NAME`."""
    parser.addoption(
        "--engine",
        default=None,
        help="engine checked by the parity suite (alias of --gradcheck-engine): minigrad (default), "
        "minigrad-tensor, micrograd, jax, autograd, module:Adapter",
    )
