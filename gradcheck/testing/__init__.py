"""Test machinery for the harness itself, as `numpy.testing` and `torch.testing` are for theirs:
engines with planted bugs that the harness must catch, and the loops that count how soon it does.

- `broken_engines`: the self-check's engines (`TinyValue` with one bug switched on, minigrad's
  Tensor with one rule broken) and the correct `TinyAdapter` beside them;
- `kind_engines`: one broken engine per kind of difference (`gradcheck.parity.kinds.Kind`);
- `cause_engines`: one engine per root cause the campaign must report as one finding;
- `field_engines`: the bugs met in autograd engines published by others;
- `structural_engines`: micrograd-style engines with one bug in their graph code;
- `tutorial_engines`: the engine a learner types in from an autograd tutorial and its one-mistake
  variants (an `=` for `+=`, a derivative written wrong, `build_topo` without its visited set...),
  with the first finding the harness should report on each (`MISTAKES`);
- `fragment_engines`: engines whose one bug once came out as many findings (an in-place abs, an
  id-ordered backward) or was shown at its weakest point (a tanh derivative written `1 - t`);
- `reordered_engines`: correct engines that evaluate otherwise than torch (a backward down every
  path, contributions summed in another order, division through the reciprocal, other accurate
  derivative formulas, explicit Jacobians), on which the harness must raise no bug;
- `boundary_engines`: a problem where the adapter meets the engine (a complex number the
  adapter's `float()` rejects, keepdim not passed on);
- `catching`: how many graphs the seeded stream or the hypothesis property need to catch a bug.

The engines built on minigrad reach past its top-level API on purpose: each subclasses minigrad's
own rule class for the op it breaks (`ReLU`, `Maximum`, `MatMul`...) and reuses the helpers that
rule is written with, so that everything but the planted bug is minigrad's code, bit for bit. A
rewrite on the public API alone would be a second engine, free to differ from minigrad elsewhere
and to give a finding the test does not expect. They use no `_`-prefixed minigrad name; each
module's docstring says what it takes.

Tests, `parity_tests/` and `benchmarks/` import it; no library module of gradcheck does
(`gradcheck/tests/test_architecture.py` keeps it so). Campaigns load its engines by spec, e.g.
`gradcheck run --engine gradcheck.testing.kind_engines:ReluTimesTwo`.
"""
