"""The checker for any callable: numerical differentiation, the mpmath oracle, tolerance policy,
kink detection, `gradcheck`/`gradgradcheck` and their failure reports."""
