"""Checking an engine from Python, where it was written (issue 51): `check_engine` on a value
class, an adapter or a spec runs the campaign `gradcheck run` runs and returns a result that shows
itself in Jupyter as the triage's first screen; each finding replays against the class as it is
now. `check` runs it, `result` is what comes back, `progress` draws the bars.

Its names are imported on first use (PEP 562), as gradcheck's are.
"""

from gradcheck.lazy import lazy_names

_LAZY = {
    "check_engine": "gradcheck.notebook.check",
    **dict.fromkeys(("EngineCheck", "EngineFinding", "Replayed"), "gradcheck.notebook.result"),
}
__getattr__ = lazy_names("gradcheck.notebook", _LAZY)

__all__ = ["EngineCheck", "EngineFinding", "Replayed", "check_engine"]
