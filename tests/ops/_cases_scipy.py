"""Gradient cases of the ops ``oxmera.scipy`` defines (SciPy's functions oxmera had no op
for): ``iv``, ``ive``, ``betainc``, ``sqrtm``, ``logm`` and ``signal_convolve``.

PyTorch has none of them (they are compared with SciPy in ``tests/scipy``).
Each input is moved into the function's domain inside the case: Bessel
functions of non-integer order are real for ``z > 0``, ``betainc`` needs
``x`` in (0, 1), the matrix square root and logarithm need no eigenvalue on
the closed negative real axis (``A + 4 I`` with entries in [-2, 2]).
"""
import oxmera
from oxmera.scipy import linalg, signal, special

from ._case_table import S, T, Leaf, add_cases, unary_cases

unary_cases("iv", lambda z: special.iv(2.5, z), "positive")
unary_cases("ive", lambda z: special.ive(1.5, z), "positive")
add_cases("iv", ("integer-order-through-zero", lambda z: special.iv(2.0, z),
                 (Leaf((3,), values=(-0.5, 0.0, 0.5)),)))
unary_cases("betainc", lambda x: special.betainc(2.5, 1.5, x * 0.4), "positive")


def _shifted(function):
    def case(a):
        return function(a + 4 * oxmera.eye(a.shape[-1], dtype=a.dtype))
    return case


for _name, _function in (("sqrtm", linalg.sqrtm), ("logm", linalg.logm)):
    add_cases(
        _name,
        ("3x3", _shifted(_function), (Leaf((3, 3)),)),
        ("batch", _shifted(_function), (Leaf((2, 2, 2)),)),
        ("transposed", _shifted(_function), (T((3, 3)),)),
        ("strided", _shifted(_function), (S((2, 2)),)),
        ("size-0", _shifted(_function), (Leaf((0, 2, 2)),)),
        ("1x1", _shifted(_function), (Leaf((1, 1)),)),
    )

for _mode in ("full", "same", "valid"):
    add_cases(
        "signal_convolve",
        *[(f"{_mode}-{label}", lambda a, b, _mode=_mode: signal.convolve(a, b, _mode), specs)
          for label, specs in (("5-3", (Leaf((5,)), Leaf((3,)))),
                               ("3-5", (Leaf((3,)), Leaf((5,)))),
                               ("4x5-2x3", (Leaf((4, 5)), Leaf((2, 3)))),
                               ("transposed", (T((4, 3)), S((2, 2)))))],
        (f"correlate-{_mode}", lambda a, b, _mode=_mode: signal.correlate(a, b, _mode),
         (Leaf((4, 5)), T((2, 3)))),
    )
add_cases("signal_convolve",
          ("0d", signal.convolve, (Leaf(()), Leaf(()))),
          ("size-0", signal.convolve, (Leaf((0,)), Leaf((3,)))),
          ("size-0-other", signal.convolve, (Leaf((4,)), Leaf((0,)))),
          ("no-grad-other", signal.convolve, (Leaf((4,)), Leaf((2,), requires_grad=False))))
