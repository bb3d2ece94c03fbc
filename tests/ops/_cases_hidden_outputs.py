"""Gradient cases and PyTorch comparisons of ``log_softmax_backward_exps``.

It is ``log_softmax``'s VJP from the exponentials and row sums its forward
keeps as hidden outputs (``oxmera.ops.activation``): ``g - e * (g.sum(dim) / s)``.
The backward runs it only when it records nothing, but it is an op like any
other, so its own VJP is checked to second order here; PyTorch's
``_log_softmax_backward_data`` of the output ``log(e / s)`` is the same function
of ``(g, e, s)``.
"""
from ._case_table import S, T, Leaf, const, add_cases, add_torch_cases


def _backward_exps(dim):
    from oxmera.ops.activation import log_softmax_backward_exps
    return lambda g, e, s: log_softmax_backward_exps(g, e, s, dim)


add_cases(
    "log_softmax_backward_exps",
    ("3x4-dim1", _backward_exps(1), (Leaf((3, 4)), Leaf((3, 4), "positive"),
                                     Leaf((3, 1), "positive"))),
    ("3x4-dim0", _backward_exps(0), (Leaf((3, 4)), Leaf((3, 4), "positive"),
                                     Leaf((1, 4), "positive"))),
    ("2x3x4-dim1", _backward_exps(1), (Leaf((2, 3, 4)), Leaf((2, 3, 4), "positive"),
                                       Leaf((2, 1, 4), "positive"))),
    # the seed of mean(): broadcast along dim (summed as one slice times the length)
    ("broadcast-grad", lambda g, e, s: _backward_exps(1)(g.expand(3, 4), e, s),
     (Leaf((3, 1)), Leaf((3, 4), "positive"), Leaf((3, 1), "positive"))),
    ("0d", lambda g, e, s: _backward_exps(0)(g.reshape(1), e.reshape(1), s.reshape(1)),
     (Leaf(()), Leaf((), "positive"), Leaf((), "positive"))),
    ("size-0", _backward_exps(1), (Leaf((0, 3)), Leaf((0, 3), "positive"),
                                   Leaf((0, 1), "positive"))),
    ("size-0-dim", _backward_exps(1), (Leaf((3, 0)), Leaf((3, 0), "positive"),
                                       Leaf((3, 1), "positive"))),
    ("transposed", _backward_exps(-1), (T((3, 4)), S((3, 4), "positive"),
                                        Leaf((3, 1), "positive"))),
    ("grad-only", _backward_exps(1), (Leaf((3, 4)), const((3, 4), "positive"),
                                      const((3, 1), "positive"))),
)


def _lib_backward_exps(lib, g, e, s):
    if lib.__name__ == "torch":
        return lib.ops.aten._log_softmax_backward_data(g, (e / s).log(), 1, g.dtype)
    return _backward_exps(1)(g, e, s)


add_torch_cases(
    "log_softmax_backward_exps",
    ("3x4", _lib_backward_exps, (Leaf((3, 4)), Leaf((3, 4), "positive"),
                                 Leaf((3, 1), "positive"))),
    ("size-0", _lib_backward_exps, (Leaf((0, 3)), Leaf((0, 3), "positive"),
                                    Leaf((0, 1), "positive"))),
)
