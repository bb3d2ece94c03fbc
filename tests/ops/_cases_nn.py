"""Gradient cases and PyTorch comparisons of ``oxmera.nn.functional``.

The registered ops with fused VJPs (softmax, log_softmax, softplus,
binary_cross_entropy) get gradient cases here (see ``_case_table``); the
functions composed from ops get their gradient checks in
``tests/nn/test_functional.py``. Every function of SPEC §5's nn.functional
list (but the convolutions and pools, compared in their own topic) is
compared with PyTorch below; the comparisons of composed functions are
filed under ``F.<name>`` (they are not ops of their own).
"""
import math

import numpy as np

import oxmera
import oxmera.nn.functional as OF

from ._case_table import S, T, Leaf, add_cases, add_torch_cases


def F(lib):
    """``lib.nn.functional`` of either library (what the torch cases call)."""
    return lib.nn.functional


# -- gradient cases of the fused ops ------------------------------------------------------

for _name, _fn in (("softmax", OF.softmax), ("log_softmax", OF.log_softmax)):
    add_cases(
        _name,
        ("5-dim0", lambda x, fn=_fn: fn(x, 0), (Leaf((5,)),)),
        ("3x4-dim1", lambda x, fn=_fn: fn(x, dim=1), (Leaf((3, 4)),)),
        ("3x4-dim0", lambda x, fn=_fn: fn(x, 0), (Leaf((3, 4)),)),
        ("2x3x4-dim-neg", lambda x, fn=_fn: fn(x, -1), (Leaf((2, 3, 4)),)),
        ("2x3x4-dim1", lambda x, fn=_fn: fn(x, 1), (Leaf((2, 3, 4)),)),
        ("0d", lambda x, fn=_fn: fn(x, 0), (Leaf(()),)),
        ("size-0-rows", lambda x, fn=_fn: fn(x, 1), (Leaf((0, 3)),)),
        ("size-0-dim", lambda x, fn=_fn: fn(x, 0), (Leaf((0, 3)),)),
        ("transposed", lambda x, fn=_fn: fn(x, 1), (T((3, 4)),)),
        ("strided", lambda x, fn=_fn: fn(x, -1), (S((2, 3)),)),
        ("method", lambda x, name=_name: getattr(x, name)(1), (Leaf((2, 3)),)),
        ("top-level", lambda x, name=_name: getattr(oxmera, name)(x, 0), (Leaf((2, 3)),)),
        ("dtype", lambda x, fn=_fn: fn(x, 1, dtype=oxmera.float64), (Leaf((2, 3)),)),
        # logits of magnitude 1e4: the shift by the row max keeps everything finite
        ("large-logits", lambda x, fn=_fn: fn(x, 1),
         (Leaf((2, 3), values=(1e4, 0.0, -1e4, 5e3, 5e3 + 0.5, -3.0)),)),
        ("times-weights", lambda x, w, fn=_fn: fn(x, 1) * w, (Leaf((3, 4)), Leaf((3, 4)))),
    )

add_cases(
    "softplus",
    ("5", OF.softplus, (Leaf((5,)),)),
    ("3x4-beta", lambda x: OF.softplus(x, beta=2.5), (Leaf((3, 4)),)),
    ("threshold", lambda x: OF.softplus(x, 1, 1.0),
     (Leaf((5,), values=(-30.0, -1.5, 0.5, 1.5, 30.0)),)),
    ("threshold-beta", lambda x: OF.softplus(x, beta=0.5, threshold=0.6),
     (Leaf((4,), values=(-3.0, 0.5, 1.5, 4.0)),)),
    ("large", OF.softplus, (Leaf((4,), values=(-800.0, -40.0, 40.0, 800.0)),)),
    ("no-threshold", lambda x: OF.softplus(x, 1, math.inf), (Leaf((2, 3)),)),
    ("0d", OF.softplus, (Leaf(()),)),
    ("size-0", OF.softplus, (Leaf((0, 3)),)),
    ("transposed", OF.softplus, (T((3, 4)),)),
    ("strided", lambda x: OF.softplus(x, 3), (S((2, 3)),)),
)


def _bce(reduction="mean", weighted=False):
    if weighted:
        return lambda x, y, w: OF.binary_cross_entropy(x.sigmoid(), y.sigmoid(), w,
                                                       reduction=reduction)
    return lambda x, y: OF.binary_cross_entropy(x.sigmoid(), y.sigmoid(), reduction=reduction)


add_cases(
    "binary_cross_entropy",
    ("mean", _bce(), (Leaf((3, 4)), Leaf((3, 4)))),
    ("sum", _bce("sum"), (Leaf((5,)), Leaf((5,)))),
    ("none", _bce("none"), (Leaf((2, 3)), Leaf((2, 3)))),
    ("weight", _bce("mean", True), (Leaf((2, 3)), Leaf((2, 3)), Leaf((2, 3), "positive"))),
    ("weight-broadcast", _bce("none", True), (Leaf((2, 3)), Leaf((2, 3)), Leaf((3,),
                                                                             "positive"))),
    ("target-no-grad", lambda x, y: OF.binary_cross_entropy(x.sigmoid(), y),
     (Leaf((4,)), Leaf((4,), values=(0.0, 1.0, 0.25, 1.0), requires_grad=False))),
    ("0d", _bce(), (Leaf(()), Leaf(()))),
    ("size-0", _bce("sum"), (Leaf((0, 3)), Leaf((0, 3)))),
    ("size-0-none", _bce("none"), (Leaf((0, 3)), Leaf((0, 3)))),
    ("transposed", lambda x, y: OF.binary_cross_entropy(x.sigmoid().mT, y.sigmoid().mT),
     (T((3, 4)), T((3, 4)))),
    ("strided", _bce("sum"), (S((2, 3)), S((2, 3)))),
)


# nll_loss / cross_entropy with class indices, no weights, none ignored: one op each way
def _classes(values):
    return oxmera.tensor(np.array(values, dtype=np.int64))


_NLL = oxmera.ops.loss.nll_class_indices
_NLL_BACKWARD = oxmera.ops.loss.nll_class_indices_backward

add_cases(
    "nll_loss",
    ("mean", lambda x: _NLL(x, _classes([2, 0, 3]), 1, "mean"), (Leaf((3, 4)),)),
    ("sum", lambda x: _NLL(x, _classes([1, 1]), 1, "sum"), (Leaf((2, 3)),)),
    ("none", lambda x: _NLL(x, _classes([0, 2, 1]), 1, "none"), (Leaf((3, 3)),)),
    ("unbatched", lambda x: _NLL(x, _classes(3), 0, "mean"), (Leaf((4,)),)),
    ("spatial", lambda x: _NLL(x, _classes([[[0, 2]], [[1, 1]]]), 1, "mean"),
     (Leaf((2, 3, 1, 2)),)),
    ("size-0-sum", lambda x: _NLL(x, _classes(np.zeros(0, np.int64)), 1, "sum"),
     (Leaf((0, 3)),)),
    ("transposed", lambda x: _NLL(x, _classes([0, 3, 1]), 1, "mean"), (T((3, 4)),)),
    ("strided", lambda x: _NLL(x, _classes([1, 0]), 1, "none"), (S((2, 3)),)),
    ("via-cross_entropy-smoothing", lambda x: OF.cross_entropy(x, _classes([2, 0, 1]),
                                                               label_smoothing=0.1),
     (Leaf((3, 4)),)),
    ("via-nll_loss", lambda x: OF.nll_loss(x, _classes([1, 0]), reduction="sum"),
     (Leaf((2, 3)),)),
)
_CE = oxmera.ops.loss.cross_entropy_class_indices


def _ce(target, class_dim=1, reduction="mean"):
    return lambda x: _CE(x, _classes(target), class_dim, reduction).output


add_cases(
    "cross_entropy_loss",
    ("mean", _ce([2, 0, 3]), (Leaf((3, 4)),)),
    ("sum", _ce([1, 1], reduction="sum"), (Leaf((2, 3)),)),
    ("none", _ce([0, 2, 1], reduction="none"), (Leaf((3, 3)),)),
    ("unbatched", _ce(3, 0), (Leaf((4,)),)),
    ("spatial", _ce([[[0, 2]], [[1, 1]]]), (Leaf((2, 3, 1, 2)),)),
    ("size-0-sum", _ce(np.zeros(0, np.int64), reduction="sum"), (Leaf((0, 3)),)),
    ("transposed", _ce([0, 3, 1]), (T((3, 4)),)),
    ("strided", _ce([1, 0], reduction="none"), (S((2, 3)),)),
    ("via-cross_entropy", lambda x: OF.cross_entropy(x, _classes([2, 0, 1])),
     (Leaf((3, 4)),)),
    ("via-CrossEntropyLoss", lambda x: oxmera.nn.CrossEntropyLoss(reduction="sum")(
        x, _classes([[1, 0], [2, 2]])), (Leaf((2, 3, 2)),)),
)
add_cases(
    "nll_loss_backward",
    ("2d", lambda g: _NLL_BACKWARD(g, _classes([2, 0, 3]), 1, (3, 4)), (Leaf((3,)),)),
    ("unbatched", lambda g: _NLL_BACKWARD(g, _classes(1), 0, (3,)), (Leaf(()),)),
    ("size-0", lambda g: _NLL_BACKWARD(g, _classes(np.zeros(0, np.int64)), 1, (0, 3)),
     (Leaf((0,)),)),
    ("strided", lambda g: _NLL_BACKWARD(g, _classes([0, 2, 1]), 1, (3, 4)), (S((3,)),)),
    ("spatial", lambda g: _NLL_BACKWARD(g, _classes([[0, 2], [1, 1]]), 1, (2, 3, 2)),
     (Leaf((2, 2)),)),
)


# -- PyTorch comparisons: the fused ops ----------------------------------------------------

for _name in ("softmax", "log_softmax"):
    add_torch_cases(
        _name,
        ("3x4-dim1", lambda lib, x, name=_name: getattr(F(lib), name)(x, dim=1),
         (Leaf((3, 4)),)),
        ("2x3x4-dim0", lambda lib, x, name=_name: getattr(F(lib), name)(x, 0),
         (Leaf((2, 3, 4)),)),
        ("top-level", lambda lib, x, name=_name: getattr(lib, name)(x, -1), (Leaf((2, 5)),)),
        ("method", lambda lib, x, name=_name: getattr(x, name)(0), (Leaf((4,)),)),
        ("0d", lambda lib, x, name=_name: getattr(F(lib), name)(x, 0), (Leaf(()),)),
        ("size-0", lambda lib, x, name=_name: getattr(F(lib), name)(x, 1), (Leaf((0, 3)),)),
        ("large-logits", lambda lib, x, name=_name: getattr(F(lib), name)(x * 1e4, dim=1),
         (Leaf((3, 4)),), {"rtol": 1e-6, "atol": 1e-6}),
        ("float32", lambda lib, x, name=_name: getattr(F(lib), name)(x.float() * 100, 1),
         (Leaf((3, 5)),), {"rtol": 1e-5, "atol": 1e-6}),
        ("dtype", lambda lib, x, name=_name: getattr(F(lib), name)(x.float(), 1,
                                                                   dtype=lib.float64),
         (Leaf((3, 5)),), {"rtol": 1e-6, "atol": 1e-6}),
    )

add_torch_cases(
    "softplus",
    ("default", lambda lib, x: F(lib).softplus(x * 15), (Leaf((3, 4)),)),
    ("beta-threshold", lambda lib, x: F(lib).softplus(x * 3, beta=2, threshold=3),
     (Leaf((4, 5)),)),
    ("0d", lambda lib, x: F(lib).softplus(x), (Leaf(()),)),
)
for _reduction in ("mean", "sum", "none"):
    add_torch_cases(
        "binary_cross_entropy",
        (_reduction, lambda lib, x, y, r=_reduction: F(lib).binary_cross_entropy(
            x.sigmoid(), y.sigmoid(), reduction=r), (Leaf((3, 4)), Leaf((3, 4)))),
        (f"weight-{_reduction}", lambda lib, x, y, r=_reduction: F(lib).binary_cross_entropy(
            x.sigmoid(), y.sigmoid(), lib.tensor(np.array([0.5, 1.0, 2.0, 3.0])), reduction=r),
         (Leaf((3, 4)), Leaf((3, 4)))),
    )
add_torch_cases(
    "binary_cross_entropy",
    # probabilities of exactly 0 and 1: the logs clamp at -100 in both
    ("saturated", lambda lib, x: F(lib).binary_cross_entropy(
        x, lib.tensor(np.array([1.0, 0.0, 1.0, 0.0, 0.5])), reduction="none"),
     (Leaf((5,), values=(0.0, 1.0, 1.0, 0.0, 0.3)),)),
)



def _class_loss(torch_name, ours, reduction, classes, class_dim=1):
    # torch's loss (no weight, nothing ignored, no smoothing) against the fused op
    def fn(lib, x):
        target = lib.tensor(np.array(classes, dtype=np.int64))
        if lib.__name__ == "torch":
            return getattr(F(lib), torch_name)(x, target, reduction=reduction)
        return ours(x, target, class_dim, reduction)
    return fn


def _nll_backward(classes, shape, class_dim=1):
    # aten.nll_loss_backward with reduction 'none' (0) is the op's formula
    def fn(lib, g):
        target = lib.tensor(np.array(classes, dtype=np.int64))
        if lib.__name__ == "torch":
            return lib.ops.aten.nll_loss_backward(g, lib.zeros(shape, dtype=g.dtype), target,
                                                  None, 0, -100, lib.tensor(1.0, dtype=g.dtype))
        return _NLL_BACKWARD(g, target, class_dim, shape)
    return fn


for _op_name, _torch_name, _ours in (
        ("nll_loss", "nll_loss", _NLL),
        ("cross_entropy_loss", "cross_entropy", lambda *args: _CE(*args).output)):
    add_torch_cases(
        _op_name,
        ("mean", _class_loss(_torch_name, _ours, "mean", [2, 0, 3]), (Leaf((3, 4)),)),
        ("sum", _class_loss(_torch_name, _ours, "sum", [1, 1]), (Leaf((2, 3)),)),
        ("none", _class_loss(_torch_name, _ours, "none", [0, 2, 1]), (Leaf((3, 3)),)),
        ("unbatched", _class_loss(_torch_name, _ours, "mean", 3, 0), (Leaf((4,)),)),
        ("spatial", _class_loss(_torch_name, _ours, "mean", [[[0, 2]], [[1, 1]]]),
         (Leaf((2, 3, 1, 2)),)),
    )
add_torch_cases(
    "nll_loss_backward",
    # (aten's backward is 1-d/2-d only: the spatial forward case above compares
    # the spatial gradient, which this op computes)
    ("2d", _nll_backward([2, 0, 3], (3, 4)), (Leaf((3,)),), {"grad": False}),
)

# -- PyTorch comparisons: the composed functions -------------------------------------------

_TARGET_3 = np.array([1, 0, 4])
_TARGET_2x3 = np.array([[1, 0, 4], [3, 3, 2]])


def _weight(lib, values=(0.5, 1.0, 2.0, 1.5, 3.0)):
    return lib.tensor(np.array(values))


add_torch_cases(
    "F.linear",
    ("bias", lambda lib, x, w, b: F(lib).linear(x, w, b),
     (Leaf((3, 4)), Leaf((5, 4)), Leaf((5,)))),
    ("no-bias-batched", lambda lib, x, w: F(lib).linear(x, w), (Leaf((2, 3, 4)), Leaf((5, 4)))),
    ("1d-input", lambda lib, x, w, b: F(lib).linear(x, w, b), (Leaf((4,)), Leaf((2, 4)),
                                                                Leaf((2,)))),
    ("1d-weight", lambda lib, x, w: F(lib).linear(x, w), (Leaf((3, 4)), Leaf((4,)))),
)
add_torch_cases("F.relu", ("3x4", lambda lib, x: F(lib).relu(x), (Leaf((3, 4)),)))
add_torch_cases(
    "F.leaky_relu",
    ("default", lambda lib, x: F(lib).leaky_relu(x), (Leaf((3, 4)),)),
    ("slope", lambda lib, x: F(lib).leaky_relu(x, 0.2), (Leaf((5,)),)),
)
add_torch_cases(
    "F.elu",
    ("default", lambda lib, x: F(lib).elu(x), (Leaf((3, 4)),)),
    ("alpha", lambda lib, x: F(lib).elu(x * 5, alpha=0.7), (Leaf((5,)),)),
)
add_torch_cases(
    "F.gelu",
    ("none", lambda lib, x: F(lib).gelu(x * 2), (Leaf((3, 4)),)),
    ("tanh", lambda lib, x: F(lib).gelu(x * 2, approximate="tanh"), (Leaf((3, 4)),)),
)
add_torch_cases("F.silu", ("3x4", lambda lib, x: F(lib).silu(x * 3), (Leaf((3, 4)),)))
add_torch_cases("F.sigmoid", ("3x4", lambda lib, x: F(lib).sigmoid(x), (Leaf((3, 4)),)))
add_torch_cases("F.tanh", ("3x4", lambda lib, x: F(lib).tanh(x), (Leaf((3, 4)),)))
add_torch_cases(
    "F.dropout",
    ("eval", lambda lib, x: F(lib).dropout(x, 0.5, training=False) * 1, (Leaf((3, 4)),)),
    ("p0", lambda lib, x: F(lib).dropout(x, 0.0) * 1, (Leaf((3, 4)),)),
    ("p1", lambda lib, x: F(lib).dropout(x, 1.0), (Leaf((3, 4)),)),
)
add_torch_cases(
    "F.layer_norm",
    ("last", lambda lib, x: F(lib).layer_norm(x, (4,)), (Leaf((3, 4)),)),
    ("affine", lambda lib, x, w, b: F(lib).layer_norm(x, [3, 4], w, b),
     (Leaf((2, 3, 4)), Leaf((3, 4)), Leaf((3, 4)))),
    ("eps", lambda lib, x, w: F(lib).layer_norm(x, (5,), w, eps=0.1), (Leaf((2, 5)), Leaf((5,)))),
)


def _batch_norm(training, affine, channels=3):
    def fn(lib, x, *params):
        mean = lib.tensor(np.linspace(-0.5, 0.5, channels))
        var = lib.tensor(np.linspace(0.5, 2.0, channels))
        out = F(lib).batch_norm(x, mean, var, *params, training=training, momentum=0.3)
        return out, mean, var
    return fn


add_torch_cases(
    "F.batch_norm",
    ("train-2d", _batch_norm(True, False), (Leaf((4, 3)),)),
    ("train-4d-affine", _batch_norm(True, True), (Leaf((2, 3, 2, 2)), Leaf((3,)), Leaf((3,)))),
    ("eval-3d-affine", _batch_norm(False, True), (Leaf((2, 3, 4)), Leaf((3,)), Leaf((3,)))),
    ("eval-2d", _batch_norm(False, False), (Leaf((5, 3)),)),
)
add_torch_cases(
    "F.embedding",
    ("2d-index", lambda lib, w: F(lib).embedding(lib.tensor(np.array([[0, 2, 2], [4, 1, 0]])),
                                                 w), (Leaf((5, 3)),)),
    ("padding", lambda lib, w: F(lib).embedding(lib.tensor(np.array([0, 2, 2, 4, 2])), w,
                                                padding_idx=2), (Leaf((5, 3)),)),
    ("padding-negative", lambda lib, w: F(lib).embedding(lib.tensor(np.array([0, 4, 1])), w,
                                                         padding_idx=-1), (Leaf((5, 3)),)),
)
add_torch_cases(
    "F.one_hot",
    ("inferred", lambda lib, x: F(lib).one_hot(lib.tensor(np.array([[0, 3], [2, 1]]))),
     (Leaf((1,)),), {"grad": False}),
    ("num-classes", lambda lib, x: F(lib).one_hot(lib.tensor(np.array([0, 3, 1])), 6),
     (Leaf((1,)),), {"grad": False}),
)
for _mode in ("constant", "reflect", "replicate", "circular"):
    add_torch_cases(
        "F.pad",
        (f"{_mode}-1d", lambda lib, x, m=_mode: F(lib).pad(x, (2, 1), mode=m),
         (Leaf((2, 3, 4)),)),
        (f"{_mode}-2d", lambda lib, x, m=_mode: F(lib).pad(x, (1, 2, 2, 0), mode=m),
         (Leaf((2, 3, 4)),)),
        (f"{_mode}-3d", lambda lib, x, m=_mode: F(lib).pad(x, (1, 1, 0, 2, 1, 0), mode=m),
         (Leaf((1, 2, 3, 4)),)),
        (f"{_mode}-crop", lambda lib, x, m=_mode: F(lib).pad(x, (-1, 2, 1, -1), mode=m),
         (Leaf((1, 3, 4)),)),
    )
add_torch_cases(
    "F.pad",
    ("constant-value", lambda lib, x: F(lib).pad(x, (1, 1, 1, 1), value=2.5), (Leaf((3, 4)),)),
    ("constant-1d-input", lambda lib, x: F(lib).pad(x, (3, 0)), (Leaf((4,)),)),
)
for _reduction in ("mean", "sum", "none"):
    for _name in ("mse_loss", "l1_loss", "smooth_l1_loss"):
        add_torch_cases(
            f"F.{_name}",
            (_reduction, lambda lib, x, y, n=_name, r=_reduction: getattr(F(lib), n)(
                x, y, reduction=r), (Leaf((3, 4)), Leaf((3, 4)))),
        )
    add_torch_cases(
        "F.smooth_l1_loss",
        (f"beta-{_reduction}", lambda lib, x, y, r=_reduction: F(lib).smooth_l1_loss(
            x, y, reduction=r, beta=0.8), (Leaf((3, 4)), Leaf((3, 4)))),
        (f"beta0-{_reduction}", lambda lib, x, y, r=_reduction: F(lib).smooth_l1_loss(
            x, y, reduction=r, beta=0.0), (Leaf((3, 4)), Leaf((3, 4)))),
    )
    for _name in ("mse_loss", "l1_loss"):
        add_torch_cases(
            f"F.{_name}",
            (f"weight-{_reduction}", lambda lib, x, y, n=_name, r=_reduction: getattr(F(lib), n)(
                x, y, reduction=r, weight=lib.tensor(np.linspace(0.5, 2.0, 12).reshape(3, 4))),
             (Leaf((3, 4)), Leaf((3, 4)))),
        )
    add_torch_cases(
        "F.nll_loss",
        (_reduction, lambda lib, x, r=_reduction: F(lib).nll_loss(
            F(lib).log_softmax(x, 1), lib.tensor(_TARGET_3), reduction=r), (Leaf((3, 5)),)),
        (f"weight-ignore-{_reduction}", lambda lib, x, r=_reduction: F(lib).nll_loss(
            x, lib.tensor(_TARGET_3), _weight(lib), ignore_index=0, reduction=r),
         (Leaf((3, 5)),)),
        (f"spatial-{_reduction}", lambda lib, x, r=_reduction: F(lib).nll_loss(
            x, lib.tensor(_TARGET_2x3), _weight(lib), reduction=r, ignore_index=3),
         (Leaf((2, 5, 3)),)),
    )
    for _smoothing in (0.0, 0.3):
        _s = f"{_reduction}-ls{_smoothing}"
        add_torch_cases(
            "F.cross_entropy",
            (_s, lambda lib, x, r=_reduction, s=_smoothing: F(lib).cross_entropy(
                x, lib.tensor(_TARGET_3), reduction=r, label_smoothing=s), (Leaf((3, 5)),)),
            (f"weight-ignore-{_s}", lambda lib, x, r=_reduction, s=_smoothing: F(
                lib).cross_entropy(x, lib.tensor(_TARGET_3), _weight(lib), ignore_index=4,
                                   reduction=r, label_smoothing=s), (Leaf((3, 5)),)),
            (f"spatial-{_s}", lambda lib, x, r=_reduction, s=_smoothing: F(lib).cross_entropy(
                x, lib.tensor(_TARGET_2x3), _weight(lib), ignore_index=2, reduction=r,
                label_smoothing=s), (Leaf((2, 5, 3)),)),
            (f"spatial-unweighted-{_s}", lambda lib, x, r=_reduction, s=_smoothing: F(
                lib).cross_entropy(x, lib.tensor(_TARGET_2x3), reduction=r, label_smoothing=s),
             (Leaf((2, 5, 3)),)),
            (f"unbatched-{_s}", lambda lib, x, r=_reduction, s=_smoothing: F(lib).cross_entropy(
                x, lib.tensor(np.array(3)), reduction=r, label_smoothing=s), (Leaf((5,)),)),
            (f"probabilities-{_s}", lambda lib, x, t, r=_reduction, s=_smoothing: F(
                lib).cross_entropy(x, F(lib).softmax(t, 1), reduction=r, label_smoothing=s),
             (Leaf((3, 5)), Leaf((3, 5)))),
            (f"probabilities-weight-{_s}", lambda lib, x, t, r=_reduction, s=_smoothing: F(
                lib).cross_entropy(x, F(lib).softmax(t, 1), _weight(lib), reduction=r,
                                   label_smoothing=s), (Leaf((2, 5, 2)), Leaf((2, 5, 2)))),
            (f"large-logits-{_s}", lambda lib, x, r=_reduction, s=_smoothing: F(
                lib).cross_entropy(x * 1e4, lib.tensor(_TARGET_3), reduction=r,
                                   label_smoothing=s), (Leaf((3, 5)),),
             {"rtol": 1e-6, "atol": 1e-5}),
        )
    add_torch_cases(
        "F.binary_cross_entropy_with_logits",
        (_reduction, lambda lib, x, y, r=_reduction: F(lib).binary_cross_entropy_with_logits(
            x * 3, y.sigmoid(), reduction=r), (Leaf((3, 4)), Leaf((3, 4)))),
        (f"weights-{_reduction}", lambda lib, x, y, w, p, r=_reduction: F(
            lib).binary_cross_entropy_with_logits(x * 3, y.sigmoid(), w, reduction=r,
                                                  pos_weight=p),
         (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 1), "positive", requires_grad=False),
          Leaf((4,), "positive", requires_grad=False))),
        (f"large-logits-{_reduction}", lambda lib, x, y, r=_reduction: F(
            lib).binary_cross_entropy_with_logits(x * 1e4, y.sigmoid(), reduction=r),
         (Leaf((3, 4)), Leaf((3, 4))), {"rtol": 1e-6, "atol": 1e-5}),
    )


# -- the fused VJPs of softmax and log_softmax, as ops of their own --------------------------

def _softmax_like(name):
    from oxmera.ops import activation
    return getattr(activation, name)


for _name, _domain in (("softmax_backward", "positive"), ("log_softmax_backward", "real")):
    _f = _softmax_like(_name)
    add_cases(_name,
              ("3x4-dim1", lambda g, o, _f=_f: _f(g, o, 1), (Leaf((3, 4)), Leaf((3, 4), _domain))),
              ("3x4-dim0", lambda g, o, _f=_f: _f(g, o, 0), (Leaf((3, 4)), Leaf((3, 4), _domain))),
              ("0d", lambda g, o, _f=_f: _f(g.reshape(1), o.reshape(1), 0),
               (Leaf(()), Leaf((), _domain))),
              ("size-0", lambda g, o, _f=_f: _f(g, o, 1), (Leaf((0, 3)), Leaf((0, 3), _domain))),
              ("transposed", lambda g, o, _f=_f: _f(g, o, -1), (T((3, 4)), S((3, 4), _domain))))
add_torch_cases(
    "softmax_backward",
    ("3x4", lambda lib, g, o: (_softmax_like("softmax_backward")(g, o, 1) if lib is oxmera
                               else lib.ops.aten._softmax_backward_data(g, o, 1, o.dtype)),
     (Leaf((3, 4)), Leaf((3, 4), "positive"))))
add_torch_cases(
    "log_softmax_backward",
    ("3x4", lambda lib, g, o: (_softmax_like("log_softmax_backward")(g, o, 1) if lib is oxmera
                               else lib.ops.aten._log_softmax_backward_data(g, o, 1, o.dtype)),
     (Leaf((3, 4)), Leaf((3, 4)))))
