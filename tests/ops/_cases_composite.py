"""Gradient cases of the composite ops (see ``_case_table`` for the machinery)."""


from ._case_table import (COMPOSITE_CASES, T,
                          Case, Leaf)

# -- composites: several ops in one graph (not tied to one op) ------------------------------

COMPOSITE_CASES.extend([
    Case("composite:mlp", lambda x, w, b: (x @ w + b).tanh().sum(dim=1).mean(),
         (Leaf((3, 4)), Leaf((4, 2)), Leaf((2,)))),
    Case("composite:softmax", lambda x: (x - x.max(dim=-1, keepdim=True).values).exp()
         / (x - x.max(dim=-1, keepdim=True).values).exp().sum(-1, keepdim=True),
         (Leaf((2, 4), "distinct"),)),
    Case("composite:views", lambda x: x.T.reshape(-1)[1:].unsqueeze(0).expand(2, -1) * x.sum(),
         (T((2, 3)),)),
])
