"""What inspecting a value class found that is the engine's bug: a number it refuses beside an
operator it defines (`2.0 / x` with `__truediv__` but no `__rtruediv__`).

The adapter built by inspection passes such a number as a value of the class, so that every
other graph holding it can be checked; the refusal itself is a difference from torch (which
takes `2.0 / x`) and is reported once, as a finding of phase "inspection" on the one-op graph
the user would write, wherever the class is inspected: `run`, `gate` and the pytest plugin.
"""

from __future__ import annotations

from gradcheck.campaign.findings import Finding
from gradcheck.engines.adapter import EngineAdapter
from gradcheck.engines.value_class import SAMPLE, ValueClassAdapter
from gradcheck.graphs.ir import Constant, Graph, Input, OpNode
from gradcheck.parity.kinds import Kind
from gradcheck.parity.problem import Problem, What


def inspection_findings(adapter: EngineAdapter, ops: tuple[str, ...] | None = None) -> list[Finding]:
    """One finding per number the inspected class refuses on a side of an operator (of `ops`,
    default every op the adapter has); none for an adapter not built by inspection."""
    if not isinstance(adapter, ValueClassAdapter):
        return []
    cls = adapter.value_class.__name__
    found = []
    refusals = [r for r in adapter.refused_numbers if ops is None or r.op in ops]
    for refused in refusals:
        # a number refused on both sides with the same error: one mistake, said once
        both = [r for r in refusals if r.op == refused.op and r.raised.type == refused.raised.type]
        if len(both) == 2 and refused is both[1]:
            continue
        number = Constant(refused.side, 2.0)
        graph = Graph([Input("x0", SAMPLE[1])], [OpNode(refused.op, (0,), consts=(number,))], [1])
        code = " and ".join(f"`{r.code}`" for r in both) if len(both) == 2 else f"`{refused.code}`"
        if refused.missing:
            why = f"{cls} has no {refused.missing}"
        else:
            side = "either side" if len(both) == 2 else "the left" if refused.side == 0 else "the right"
            why = f"{cls} refuses a number on {side}"
            if refused.raised.attribute is not None:  # `other.data` on a float: never wrapped
                why += f" (it reads the number's .{refused.raised.attribute}: wrap it first, as {cls}(2.0))"
        problem = Problem(
            What.INSPECTION,
            inputs=(("x0", SAMPLE[1]),),
            raised=refused.raised,
            note=f"{refused.code}: {why}",
            answer=cls,
        )
        raises = "raise" if len(both) == 2 else "raises"
        found.append(
            Finding(
                kind=Kind.EXCEPTION,
                ops=(refused.op,),
                check="gradient",
                graph=graph.to_dict(),
                phase="inspection",
                problems=(problem,),
                snippet=adapter.written_snippet(graph),
                region="ordinary",
                mistake=f"{code} {raises} {refused.raised.type}: {why}; torch takes the number",
            )
        )
    return found
