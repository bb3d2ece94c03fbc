"""Gradient cases of the functions ``oxmera.nn.functional`` composes from ops.

The ops with VJPs of their own (softmax, log_softmax, softplus,
binary_cross_entropy) have theirs in ``tests/ops/_cases_nn.py``, where the
registry test asks for them; these functions are not ops, so the registry
cannot see them, and this list is their gradient test (run by
``test_functional.py`` to first and second order, like the op cases). Each
entry covers, where the function can take them, a 0-d, a size-0 and a
non-contiguous input.
"""
import warnings

import numpy as np

import oxmera
import oxmera.nn.functional as F
from ops._case_table import Case, Leaf, S, T, const

__all__ = ["CASES"]

CASES = []


def add(name, *entries):
    for label, fn, inputs, *options in entries:
        CASES.append(Case(f"{name}:{label}", fn, tuple(inputs), **(options[0] if options else {})))


def _index(values):
    return oxmera.tensor(np.array(values))


_TARGET_3 = [1, 0, 4]
_TARGET_2x3 = [[1, 0, 4], [3, 3, 2]]
_WEIGHT_5 = (0.5, 1.0, 2.0, 1.5, 3.0)


def _weight():
    return oxmera.tensor(np.array(_WEIGHT_5))


add("linear",
    ("bias", F.linear, (Leaf((3, 4)), Leaf((5, 4)), Leaf((5,)))),
    ("no-bias", F.linear, (Leaf((2, 3, 4)), Leaf((2, 4)))),
    ("1d-input", F.linear, (Leaf((4,)), Leaf((2, 4)), Leaf((2,)))),
    ("1d-weight", F.linear, (Leaf((3, 4)), Leaf((4,)), Leaf(()))),
    ("size-0-batch", F.linear, (Leaf((0, 4)), Leaf((2, 4)), Leaf((2,)))),
    ("transposed", F.linear, (T((3, 4)), T((5, 4)), S((5,)))))
for _name, _fn in (("relu", F.relu), ("leaky_relu", lambda x: F.leaky_relu(x, 0.2)),
                   ("elu", lambda x: F.elu(x, alpha=0.7)), ("gelu", F.gelu),
                   ("gelu-tanh", lambda x: F.gelu(x, approximate="tanh")), ("silu", F.silu),
                   ("sigmoid", F.sigmoid), ("tanh", F.tanh)):
    add(_name,
        ("3x4", _fn, (Leaf((3, 4)),)),
        ("0d", _fn, (Leaf(()),)),
        ("size-0", _fn, (Leaf((0, 3)),)),
        ("transposed", _fn, (T((3, 4)),)),
        ("strided", _fn, (S((2, 3)),)))
add("elu",
    ("large", F.elu, (Leaf((4,), values=(-50.0, -0.5, 0.5, 800.0)),)))


def _dropout(p):
    def fn(x):
        oxmera.manual_seed(7)    # the same mask on every call the checks make
        return F.dropout(x, p)
    return fn


add("dropout",
    ("half", _dropout(0.5), (Leaf((4, 5)),)),
    ("p1", _dropout(1.0), (Leaf((3,)),)),
    ("0d", _dropout(0.3), (Leaf(()),)),
    ("size-0", _dropout(0.3), (Leaf((0, 3)),)),
    ("transposed", _dropout(0.2), (T((3, 4)),)))
add("layer_norm",
    ("last", lambda x: F.layer_norm(x, (4,)), (Leaf((3, 4)),)),
    ("affine", lambda x, w, b: F.layer_norm(x, (3, 4), w, b),
     (Leaf((2, 3, 4)), Leaf((3, 4)), Leaf((3, 4)))),
    ("eps", lambda x, w: F.layer_norm(x, 5, w, eps=0.5), (Leaf((2, 5)), S((5,)))),
    ("3d-over-last", lambda x, w, b: F.layer_norm(x, 3, w, b),
     (Leaf((2, 2, 3)), Leaf((3,)), Leaf((3,)))),
    ("size-0-batch", lambda x: F.layer_norm(x, (3,)), (Leaf((0, 3)),)),
    ("transposed", lambda x: F.layer_norm(x, (3,)), (T((4, 3)),)))


def _batch_norm(training):
    def fn(x, *params):
        channels = x.shape[1]
        mean, var = oxmera.zeros(channels, dtype=oxmera.float64), oxmera.ones(
            channels, dtype=oxmera.float64) * 1.5
        return F.batch_norm(x, mean, var, *params, training=training)
    return fn


add("batch_norm",
    ("train-2d", _batch_norm(True), (Leaf((4, 3)),)),
    ("train-4d-affine", _batch_norm(True), (Leaf((2, 3, 2, 2)), Leaf((3,)), Leaf((3,)))),
    ("train-transposed", _batch_norm(True), (T((4, 3)), S((3,)), Leaf((3,)))),
    ("eval", _batch_norm(False), (Leaf((2, 3, 4)), Leaf((3,)), Leaf((3,)))),
    ("eval-running-stats", lambda x, m, v: F.batch_norm(x, m, v),
     (Leaf((3, 2)), Leaf((2,)), Leaf((2,), "positive"))),
    ("eval-size-0", _batch_norm(False), (Leaf((0, 3)),)),
    ("train-size-0-spatial-0d-params", lambda x, w, b: F.batch_norm(
        x, None, None, w.expand(3), b.expand(3), training=True),
     (Leaf((2, 3, 0, 2)), Leaf(()), Leaf(()))))
add("embedding",
    ("repeats", lambda w: F.embedding(_index([[0, 2, 2], [4, 1, 0]]), w), (Leaf((5, 3)),)),
    # The padding row's output is its values but its gradient is 0 by design:
    # finite differences see the values, so those outputs are masked out.
    ("padding", lambda w: F.embedding(_index([0, 2, 2, 4]), w, padding_idx=2)
     * oxmera.tensor([[1.0], [0.0], [0.0], [1.0]], dtype=oxmera.float64), (Leaf((5, 3)),)),
    ("0d-index", lambda w: F.embedding(_index(3), w), (Leaf((5, 3)),)),
    ("size-0-index", lambda w: F.embedding(oxmera.zeros(0, 2, dtype=oxmera.int64), w),
     (Leaf((5, 3)),)),
    ("transposed", lambda w: F.embedding(_index([1, 1, 3]), w, padding_idx=0), (T((4, 3)),)))
for _mode in ("constant", "reflect", "replicate", "circular"):
    add("pad",
        (f"{_mode}-2d", lambda x, m=_mode: F.pad(x, (1, 2, 2, 0), mode=m), (Leaf((2, 3, 4)),)),
        (f"{_mode}-crop", lambda x, m=_mode: F.pad(x, (-1, 2, 1, -1), mode=m), (T((3, 4)),)),
        (f"{_mode}-3d", lambda x, m=_mode: F.pad(x, (1, 0, 0, 2, 2, 1), mode=m),
         (S((3, 3, 3)),)))
add("pad",
    ("constant-size-0", lambda x: F.pad(x, (1, 1), value=2.0), (Leaf((0, 3)),)),
    ("constant-size-0-dim", lambda x: F.pad(x, (0, 0, 1, 2)), (Leaf((0, 3)),)),
    ("constant-0d-value", lambda x: F.pad(x, ()), (Leaf(()),)))
for _name in ("mse_loss", "l1_loss", "smooth_l1_loss"):
    _fn = getattr(F, _name)
    add(_name,
        ("mean", _fn, (Leaf((3, 4)), Leaf((3, 4)))),
        ("sum", lambda x, y, fn=_fn: fn(x, y, reduction="sum"), (Leaf((5,)), Leaf((5,)))),
        ("none", lambda x, y, fn=_fn: fn(x, y, reduction="none"), (T((3, 4)), S((3, 4)))),
        ("0d", _fn, (Leaf(()), Leaf(()))),
        ("size-0", lambda x, y, fn=_fn: fn(x, y, reduction="sum"), (Leaf((0, 3)), Leaf((0, 3)))),
        ("target-no-grad", _fn, (Leaf((2, 3)), const((2, 3)))))
for _name in ("mse_loss", "l1_loss"):
    add(_name, ("weight", lambda x, y, w, n=_name: getattr(F, n)(x, y, weight=w),
                (Leaf((2, 3)), Leaf((2, 3)), Leaf((2, 3), "positive"))))
add("smooth_l1_loss",
    ("beta", lambda x, y: F.smooth_l1_loss(x, y, beta=0.6), (Leaf((3, 4)), Leaf((3, 4)))),
    ("beta0", lambda x, y: F.smooth_l1_loss(x, y, beta=0.0), (Leaf((3, 4)), const((3, 4)))))
add("nll_loss",
    ("mean", lambda x: F.nll_loss(x, _index(_TARGET_3)), (Leaf((3, 5)),)),
    ("weight-ignore", lambda x: F.nll_loss(x, _index(_TARGET_3), _weight(), ignore_index=0),
     (T((3, 5)),)),
    ("weight-differentiable", lambda x, w: F.nll_loss(x, _index(_TARGET_3), w),
     (Leaf((3, 5)), Leaf((5,), "positive"))),
    ("spatial-sum", lambda x: F.nll_loss(x, _index(_TARGET_2x3), reduction="sum"),
     (S((2, 5, 3)),)),
    ("unbatched-none", lambda x: F.nll_loss(x, _index(2), reduction="none"), (Leaf((5,)),)),
    ("size-0", lambda x: F.nll_loss(x, _index(np.zeros(0, np.int64)), reduction="sum"),
     (Leaf((0, 5)),)))


def _cross_entropy(target, **kwargs):
    return lambda x: F.cross_entropy(x, _index(target), **kwargs)


add("cross_entropy",
    ("mean", _cross_entropy(_TARGET_3), (Leaf((3, 5)),)),
    ("none", _cross_entropy(_TARGET_3, reduction="none"), (T((3, 5)),)),
    ("weight-ignore-smoothing", _cross_entropy(_TARGET_3, weight=_weight(), ignore_index=4,
                                               label_smoothing=0.2), (Leaf((3, 5)),)),
    ("spatial-smoothing-sum", _cross_entropy(_TARGET_2x3, reduction="sum", label_smoothing=0.1),
     (S((2, 5, 3)),)),
    ("unbatched", _cross_entropy(3), (Leaf((5,)),)),
    ("size-0-sum", _cross_entropy(np.zeros(0, np.int64), reduction="sum"), (Leaf((0, 5)),)),
    ("large-logits", _cross_entropy([0, 2, 1]),
     (Leaf((3, 3), values=(1e4, 0.0, -1e4, -1e4, 1e4, 0.5, 3.0, 2.0, 1e4)),)),
    ("probabilities", lambda x, t: F.cross_entropy(x, F.softmax(t, 1), label_smoothing=0.3),
     (Leaf((3, 5)), Leaf((3, 5)))),
    ("probabilities-weight-none", lambda x, t: F.cross_entropy(
        x, t, _weight(), reduction="none"), (Leaf((2, 5, 2)), Leaf((2, 5, 2), "positive"))),
    ("probabilities-size-0", lambda x, t: F.cross_entropy(x, t, reduction="sum"),
     (Leaf((0, 4)), Leaf((0, 4)))))
add("binary_cross_entropy_with_logits",
    ("mean", F.binary_cross_entropy_with_logits, (Leaf((3, 4)), Leaf((3, 4)))),
    ("weights", lambda x, y, w, p: F.binary_cross_entropy_with_logits(
        x, y, w, reduction="sum", pos_weight=p),
     (T((3, 4)), Leaf((3, 4)), Leaf((3, 1), "positive"), Leaf((4,), "positive"))),
    ("large-logits", lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"),
     (Leaf((4,), values=(-1e4, -50.0, 50.0, 1e4)), Leaf((4,)))),
    ("0d", F.binary_cross_entropy_with_logits, (Leaf(()), Leaf(()))),
    ("size-0", lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="sum"),
     (Leaf((0, 3)), S((0, 3)))))


# -- the rest of torch.nn.functional's activations (kinks avoided: "real" values are
# at least 0.25 from 0; the shifted pieces are checked away from their ends) ---------------
for _name, _fn in (("relu6", lambda x: F.relu6(x * 4)),
                   ("hardtanh", lambda x: F.hardtanh(x, -0.5, 1.5)),
                   ("hardsigmoid", lambda x: F.hardsigmoid(x * 2.3)),
                   ("hardswish", lambda x: F.hardswish(x * 2.3)),
                   ("mish", F.mish), ("selu", F.selu), ("celu", lambda x: F.celu(x, 1.5)),
                   ("softsign", F.softsign), ("logsigmoid", F.logsigmoid),
                   ("tanhshrink", F.tanhshrink), ("softshrink", lambda x: F.softshrink(x, 0.1)),
                   ("hardshrink", lambda x: F.hardshrink(x, 0.1)),
                   ("threshold", lambda x: F.threshold(x, 0.1, -3.0)),
                   ("rrelu", F.rrelu),
                   ("softmin", lambda x: F.softmin(x, dim=-1)),
                   ("glu", lambda x: F.glu(x.repeat(1, 2) if x.ndim == 2 else x.repeat(2)))):
    add(_name,
        ("3x4", _fn, (Leaf((3, 4)),)),
        ("size-0", _fn, (Leaf((0, 3)),)),
        ("transposed", _fn, (T((3, 4)),)),
        ("strided", _fn, (S((2, 3)),)))
    if _name not in ("glu",):
        add(_name, ("0d", _fn, (Leaf(()),)))
add("prelu",
    ("channels", F.prelu, (Leaf((2, 3, 4)), Leaf((3,)))),
    ("one", F.prelu, (T((3, 4)), Leaf((1,)))),
    ("size-0", F.prelu, (Leaf((0, 3)), Leaf((3,)))))
add("scaled_dot_product_attention",
    ("causal", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
     (Leaf((2, 3, 2)), Leaf((2, 4, 2)), T((2, 4, 3)))),
    ("size-0", F.scaled_dot_product_attention, (Leaf((0, 3, 2)), Leaf((0, 4, 2)),
                                                Leaf((0, 4, 3)))))
add("multi_head_attention_forward",
    ("plain", lambda x, w, b, ow: F.multi_head_attention_forward(
        x, x, x, 4, 2, w, b, None, None, False, 0.0, ow, None)[0],
     (Leaf((3, 1, 4)), Leaf((12, 4)), Leaf((12,)), T((4, 4)))))
# In-place forms, on a clone (a leaf that requires grad cannot be modified in place).
for _name, _fn in (("relu_", F.relu_), ("elu_", F.elu_),
                   ("leaky_relu_", lambda x: F.leaky_relu_(x, 0.3)),
                   ("hardtanh_", lambda x: F.hardtanh_(x, -0.5, 1.5)), ("rrelu_", F.rrelu_),
                   ("selu_", F.selu_), ("celu_", F.celu_),
                   ("threshold_", lambda x: F.threshold_(x, 0.1, -3.0))):
    add(_name,
        ("3x4", lambda x, fn=_fn: fn(x.clone()), (Leaf((3, 4)),)),
        ("transposed", lambda x, fn=_fn: fn(x.clone()), (T((3, 4)),)))
# Normalizations, distances and (in eval, or with p=0 where random) the dropout variants.
add("normalize",
    ("dim1", lambda x: F.normalize(x, dim=1), (Leaf((3, 4)),)),
    ("p1-last", lambda x: F.normalize(x, p=1.0, dim=-1), (T((3, 4)),)),
    ("size-0", F.normalize, (Leaf((0, 3)),)))
add("group_norm",
    ("affine", lambda x, w, b: F.group_norm(x, 2, w, b), (Leaf((2, 4, 3)), Leaf((4,)),
                                                         Leaf((4,)))),
    ("plain", lambda x: F.group_norm(x, 1), (T((3, 2)),)))
add("instance_norm",
    ("affine", lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
     (Leaf((2, 3, 4)), Leaf((3,)), Leaf((3,)))),
    ("strided", F.instance_norm, (S((2, 2, 3)),)))
add("rms_norm",
    ("weight", lambda x, w: F.rms_norm(x, (4,), w), (Leaf((3, 4)), Leaf((4,)))),
    ("two-dims", lambda x: F.rms_norm(x, (3, 4), eps=1e-6), (T((3, 4)),)),
    ("size-0", lambda x: F.rms_norm(x, (3,)), (Leaf((0, 3)),)))
add("local_response_norm",
    ("size3", lambda x: F.local_response_norm(x, 3, alpha=0.5), (Leaf((2, 4, 3)),)),
    ("4d", lambda x: F.local_response_norm(x, 2, alpha=0.5, k=2.0), (Leaf((1, 3, 2, 2)),)))
add("cosine_similarity",
    ("dim1", F.cosine_similarity, (Leaf((3, 4)), Leaf((3, 4)))),
    ("broadcast", lambda a, b: F.cosine_similarity(a, b, dim=-1), (T((3, 4)), Leaf((4,)))))
add("pairwise_distance",
    ("p2", F.pairwise_distance, (Leaf((3, 4)), Leaf((3, 4)))),
    ("p1-keepdim", lambda a, b: F.pairwise_distance(a, b, p=1.5, keepdim=True),
     (T((3, 4)), Leaf((4,)))))
for _name in ("dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
    _fn = getattr(F, _name)
    _shape = {"dropout1d": (2, 3, 4), "dropout2d": (2, 3, 2, 2),
              "dropout3d": (1, 2, 2, 2, 2)}.get(_name, (2, 3, 4))
    add(_name,
        ("eval", lambda x, fn=_fn: fn(x, 0.5, training=False), (Leaf(_shape),)),
        ("p0", lambda x, fn=_fn: fn(x, 0.0, training=True), (Leaf(_shape),)))


# -- the losses of nn/_loss_functions.py -------------------------------------------------------

def _signs(values):
    return oxmera.tensor(np.array(values, dtype=np.float64))


_PM_3x4 = [[1, -1, 1, -1], [-1, -1, 1, 1], [1, 1, -1, 1]]

def _kl_div(**kwargs):
    def fn(x, y):
        with warnings.catch_warnings():     # PyTorch's warning about 'mean'
            warnings.simplefilter("ignore")
            return F.kl_div(x, y, **kwargs)
    return fn


for _label, _kwargs in (("mean", {}), ("log-target", {"log_target": True}),
                        ("batchmean", {"reduction": "batchmean"})):
    add("kl_div", (_label, _kl_div(**_kwargs), (Leaf((3, 4)), Leaf((3, 4), "positive"))))
add("kl_div",
    ("none-transposed", lambda x, y: F.kl_div(x, y, reduction="none"),
     (T((3, 4)), S((3, 4), "positive"))),
    ("0d", lambda x, y: F.kl_div(x, y, reduction="batchmean"), (Leaf(()), Leaf((), "positive"))),
    ("size-0", lambda x, y: F.kl_div(x, y, reduction="sum"), (Leaf((0, 3)), Leaf((0, 3)))))
add("poisson_nll_loss",
    ("log-input", F.poisson_nll_loss, (Leaf((3, 4)), Leaf((3, 4), "positive"))),
    ("rate-full", lambda x, y: F.poisson_nll_loss(x, y, log_input=False, full=True,
                                                  reduction="sum"),
     (Leaf((3, 4), "positive"), Leaf((3, 4), values=np.linspace(0.0, 4.0, 12)))),
    ("none-strided", lambda x, y: F.poisson_nll_loss(x, y, full=True, reduction="none"),
     (S((2, 3)), T((2, 3), "positive"))),
    ("0d", F.poisson_nll_loss, (Leaf(()), Leaf((), "positive"))),
    ("size-0", lambda x, y: F.poisson_nll_loss(x, y, reduction="sum"),
     (Leaf((0, 2)), Leaf((0, 2)))))
add("gaussian_nll_loss",
    ("same-shape", lambda x, y, v: F.gaussian_nll_loss(x, y, v, full=True),
     (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 4), "positive"))),
    ("per-sample-var", lambda x, y, v: F.gaussian_nll_loss(x, y, v, reduction="none"),
     (T((3, 4)), Leaf((3, 4)), Leaf((3,), "positive"))),
    ("clamped-var", lambda x, y, v: F.gaussian_nll_loss(x, y, v, eps=0.6, reduction="sum"),
     (Leaf((2, 3)), Leaf((2, 3)), Leaf((2, 1), "positive"))),
    ("float-var", lambda x, y: F.gaussian_nll_loss(x, y, 0.7), (S((2, 3)), Leaf((2, 3)))),
    ("0d", lambda x, y, v: F.gaussian_nll_loss(x, y, v), (Leaf(()), Leaf(()),
                                                         Leaf((), "positive"))),
    ("size-0", lambda x, y, v: F.gaussian_nll_loss(x, y, v, reduction="sum"),
     (Leaf((0, 3)), Leaf((0, 3)), Leaf((0, 3), "positive"))))
add("huber_loss",
    ("mean", lambda x, y: F.huber_loss(x, y, delta=0.8), (Leaf((3, 4)), Leaf((3, 4)))),
    ("weight-none", lambda x, y, w: F.huber_loss(x, y, "none", 1.5, w),
     (T((3, 4)), S((3, 4)), Leaf((3, 4), "positive"))),
    ("0d", F.huber_loss, (Leaf(()), Leaf(()))),
    ("size-0", lambda x, y: F.huber_loss(x, y, "sum"), (Leaf((0, 3)), Leaf((0, 3)))))
add("cosine_embedding_loss",
    ("mean", lambda a, b: F.cosine_embedding_loss(a, b, _signs([1, -1, -1])),
     (Leaf((3, 4)), Leaf((3, 4)))),
    ("margin-none", lambda a, b: F.cosine_embedding_loss(a, b, _signs([-1, 1, -1]), -0.9,
                                                         reduction="none"),
     (T((3, 4)), S((3, 4)))),
    ("unbatched", lambda a, b: F.cosine_embedding_loss(a, b, _signs(-1), margin=-1.0),
     (Leaf((4,)), Leaf((4,)))),
    ("size-0", lambda a, b: F.cosine_embedding_loss(a, b, _signs(np.zeros(0)), reduction="sum"),
     (Leaf((0, 4)), Leaf((0, 4)))))
add("margin_ranking_loss",
    ("mean", lambda a, b: F.margin_ranking_loss(a, b, _signs(_PM_3x4), margin=5.0),
     (Leaf((3, 4)), Leaf((3, 4)))),
    ("target-differentiable", lambda a, b, t: F.margin_ranking_loss(a, b, t, margin=5.0,
                                                                   reduction="none"),
     (T((3, 4)), S((3, 4)), Leaf((3, 4)))),
    ("0d", lambda a, b: F.margin_ranking_loss(a, b, _signs(1.0), margin=5.0),
     (Leaf(()), Leaf(()))),
    ("size-0", lambda a, b: F.margin_ranking_loss(a, b, _signs(np.zeros(0))),
     (Leaf((0,)), Leaf((0,)))))
add("hinge_embedding_loss",
    ("mean", lambda x: F.hinge_embedding_loss(x, _signs(_PM_3x4), margin=3.0), (Leaf((3, 4)),)),
    ("broadcast-none", lambda x: F.hinge_embedding_loss(x, _signs([1, -1, -1, 1]), margin=3.0,
                                                        reduction="none"), (S((3, 4)),)),
    ("0d", lambda x: F.hinge_embedding_loss(x, _signs(-1.0), margin=3.0), (Leaf(()),)),
    ("size-0", lambda x: F.hinge_embedding_loss(x, _signs(np.zeros((0, 2)))), (Leaf((0, 2)),)))
add("soft_margin_loss",
    ("mean", lambda x: F.soft_margin_loss(x, _signs(_PM_3x4)), (Leaf((3, 4)),)),
    ("target-differentiable", lambda x, y: F.soft_margin_loss(x, y, reduction="none"),
     (T((3, 4)), S((3, 4)))),
    ("0d", lambda x: F.soft_margin_loss(x, _signs(-1.0)), (Leaf(()),)),
    ("size-0", lambda x: F.soft_margin_loss(x, _signs(np.zeros(0)), reduction="sum"),
     (Leaf((0,)),)))
_LABELS_3x4 = np.array([[1, 0, 0, 1], [0, 1, 1, 1], [0, 0, 0, 1]], dtype=np.float64)
add("multilabel_soft_margin_loss",
    ("mean", lambda x: F.multilabel_soft_margin_loss(x, oxmera.tensor(_LABELS_3x4)),
     (Leaf((3, 4)),)),
    ("weight-none", lambda x, w: F.multilabel_soft_margin_loss(
        x, oxmera.tensor(_LABELS_3x4), w, reduction="none"), (T((3, 4)), Leaf((4,), "positive"))),
    ("unbatched", lambda x, y: F.multilabel_soft_margin_loss(x, y), (S((4,)), Leaf((4,)))),
    ("size-0", lambda x: F.multilabel_soft_margin_loss(x, oxmera.zeros(0, 4, dtype=oxmera.float64),
                                                       reduction="sum"), (Leaf((0, 4)),)))
_MULTILABEL = [[3, 0, -1, 1], [1, 1, 2, -1], [-1, 2, 2, 2]]
add("multilabel_margin_loss",
    ("mean", lambda x: F.multilabel_margin_loss(x, _index(_MULTILABEL)), (Leaf((3, 4)),)),
    ("none-transposed", lambda x: F.multilabel_margin_loss(x, _index(_MULTILABEL),
                                                           reduction="none"), (T((3, 4)),)),
    ("unbatched", lambda x: F.multilabel_margin_loss(x, _index([2, -1, 0, 0])), (S((4,)),)),
    ("size-0", lambda x: F.multilabel_margin_loss(x, _index(np.zeros((0, 4), np.int64)),
                                                  reduction="sum"), (Leaf((0, 4)),)))
add("multi_margin_loss",
    ("mean", lambda x: F.multi_margin_loss(x, _index([0, 3, 3]), margin=3.0), (Leaf((3, 4)),)),
    ("p2-weight", lambda x, w: F.multi_margin_loss(x, _index([2, 0, 1]), p=2, margin=3.0,
                                                   weight=w, reduction="none"),
     (T((3, 4)), Leaf((4,), "positive"))),
    ("unbatched", lambda x: F.multi_margin_loss(x, _index(1), margin=3.0), (S((4,)),)),
    ("size-0", lambda x: F.multi_margin_loss(x, _index(np.zeros(0, np.int64)), reduction="sum"),
     (Leaf((0, 4)),)))
add("triplet_margin_loss",
    ("mean", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=6.0),
     (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 4)))),
    ("p1-swap-none", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=9.0, p=1, swap=True,
                                                           reduction="none"),
     (T((3, 4)), S((3, 4)), Leaf((3, 4)))),
    ("unbatched", lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=6.0),
     (Leaf((4,)), Leaf((4,)), Leaf((4,)))),
    ("size-0", lambda a, p, n: F.triplet_margin_loss(a, p, n, reduction="sum"),
     (Leaf((0, 4)), Leaf((0, 4)), Leaf((0, 4)))))
add("triplet_margin_with_distance_loss",
    ("default", lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, margin=6.0),
     (Leaf((3, 4)), Leaf((3, 4)), Leaf((3, 4)))),
    ("cosine-swap", lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=3.0,
        swap=True, reduction="none"), (T((3, 4)), S((3, 4)), Leaf((3, 4)))),
    ("size-0", lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, reduction="sum"),
     (Leaf((0, 4)), Leaf((0, 4)), Leaf((0, 4)))))


def _ctc(targets, input_lengths, target_lengths, **kwargs):
    return lambda lp: F.ctc_loss(lp, _index(targets), input_lengths, target_lengths, **kwargs)


add("ctc_loss",
    ("mean", _ctc([[1, 2, 2], [2, 1, 0]], [5, 4], [3, 2]), (Leaf((5, 2, 3)),)),
    ("sum-short-and-empty", _ctc([[1, 1], [2, 0]], [3, 2], [2, 0], reduction="sum"),
     (T((5, 2, 3)),)),
    ("concatenated-none", _ctc([1, 2, 2, 1], [5, 5], [3, 1], reduction="none", blank=2),
     (S((5, 2, 3)),)),
    ("zero-infinity", _ctc([[1, 1, 1], [2, 1, 0]], [4, 5], [3, 2], zero_infinity=True),
     (Leaf((5, 2, 3)),)),
    ("unbatched", _ctc([1, 2], 4, 2), (Leaf((4, 3)),)))
# (scale_grad_by_freq is by design not the derivative: tests/nn/test_embedding_bag.py
# compares it with torch.)
_BAG = [1, 2, 4, 0, 4, 3, 2]
_PSW = (0.5, -1.0, 2.0, 1.5, 0.25, 3.0, -0.5)
add("embedding_bag",
    ("sum-offsets", lambda w: F.embedding_bag(_index(_BAG), w, _index([0, 2, 2, 5]),
                                              mode="sum"), (Leaf((5, 3)),)),
    ("mean-2d", lambda w: F.embedding_bag(_index([[1, 2, 2], [0, 4, 3]]), w), (Leaf((5, 3)),)),
    ("max", lambda w: F.embedding_bag(_index(_BAG), w, _index([0, 3, 3]), mode="max"),
     (Leaf((5, 3)),)),
    ("per-sample-weights", lambda w, p: F.embedding_bag(
        _index(_BAG), w, _index([0, 4]), mode="sum", per_sample_weights=p),
     (Leaf((5, 3)), Leaf((7,), values=_PSW))),
    ("mean-padding-last-offset", lambda w: F.embedding_bag(
        _index(_BAG), w, _index([0, 3, 6]), padding_idx=2, include_last_offset=True),
     (Leaf((5, 3)),)),
    ("size-0-input", lambda w: F.embedding_bag(oxmera.zeros(0, dtype=oxmera.int64), w,
                                               _index([0, 0]), mode="sum"), (Leaf((5, 3)),)),
    ("transposed", lambda w: F.embedding_bag(_index(_BAG), w, _index([0, 2])),
     (T((5, 3)),)))
# -- transposed convolutions, sliding blocks, resampling, shuffles ------------------------
add("conv_transpose1d",
    ("stride-output-padding", lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1,
                                                                 output_padding=1),
     (Leaf((2, 2, 3)), Leaf((2, 3, 3)), Leaf((3,)))),
    ("dilation-output-padding", lambda x, w: F.conv_transpose1d(x, w, output_padding=1,
                                                                dilation=2),
     (Leaf((1, 2, 3)), Leaf((2, 1, 2)))),
    ("groups-unbatched", lambda x, w: F.conv_transpose1d(x, w, groups=2), (T((4, 3)),
                                                                            Leaf((4, 1, 2)))),
    ("size-0-batch", F.conv_transpose1d, (Leaf((0, 2, 3)), Leaf((2, 2, 2)))))
add("conv_transpose2d",
    ("geometry", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 1), padding=(1, 0),
                                                    output_padding=(1, 0), groups=2,
                                                    dilation=(1, 2)),
     (Leaf((1, 4, 2, 3)), Leaf((4, 1, 2, 2)), Leaf((2,)))),
    ("transposed-weight", lambda x, w: F.conv_transpose2d(x, w, stride=2),
     (Leaf((2, 2, 2, 2)), T((2, 2, 2, 2)))),
    ("size-0-batch", F.conv_transpose2d, (Leaf((0, 2, 2, 2)), Leaf((2, 1, 2, 2)))))
add("conv_transpose3d",
    ("stride-output-padding", lambda x, w: F.conv_transpose3d(x, w, stride=2, padding=1,
                                                              output_padding=1),
     (Leaf((1, 2, 2, 2, 1)), Leaf((2, 1, 2, 2, 2)))),
    ("unbatched-strided", F.conv_transpose3d, (S((1, 2, 1, 2)), Leaf((1, 2, 1, 2, 2)))),
    ("size-0-batch", F.conv_transpose3d, (Leaf((0, 1, 2, 2, 2)), Leaf((1, 1, 1, 1, 1)))))
add("unfold",
    ("geometry", lambda x: F.unfold(x, (2, 2), dilation=(1, 2), padding=1, stride=2),
     (T((1, 2, 3, 4)),)),
    ("size-0", lambda x: F.unfold(x, 2), (Leaf((0, 1, 3, 3)),)))
add("fold",
    ("overlap", lambda c: F.fold(c, (3, 4), 2), (S((1, 8, 6)),)),
    ("size-0", lambda c: F.fold(c, (3, 3), 2), (Leaf((0, 4, 4)),)))
for _mode, _shape in (("nearest", (1, 2, 3)), ("nearest-exact", (1, 1, 3, 2)),
                      ("linear", (2, 1, 3)), ("bilinear", (1, 2, 3, 2)),
                      ("bicubic", (1, 1, 3, 3)), ("trilinear", (1, 1, 2, 2, 3)),
                      ("area", (1, 2, 5))):
    _corners = {} if _mode in ("nearest", "nearest-exact", "area") else {"align_corners": False}
    add("interpolate",
        (f"{_mode}-scale", lambda x, m=_mode, c=_corners: F.interpolate(
            x, scale_factor=1.7, mode=m, **c), (Leaf(_shape),)),
        (f"{_mode}-size", lambda x, m=_mode, c=_corners, n=len(_shape) - 2: F.interpolate(
            x, size=(2,) * n, mode=m, **c), (T(_shape),)))
add("interpolate",
    ("bicubic-align-corners", lambda x: F.interpolate(x, size=(4, 5), mode="bicubic",
                                                      align_corners=True), (S((1, 1, 3, 3)),)),
    ("linear-size-0-batch", lambda x: F.interpolate(x, size=4, mode="linear"),
     (Leaf((0, 2, 3)),)),
    ("bilinear-antialias", lambda x: F.interpolate(x, size=(2, 3), mode="bilinear",
                                                   antialias=True), (T((1, 2, 5, 7)),)),
    ("bicubic-antialias", lambda x: F.interpolate(x, scale_factor=0.6, mode="bicubic",
                                                  antialias=True), (Leaf((1, 1, 6, 6)),)))
add("linear_cross_entropy",
    ("indices", lambda x, w, b: F.linear_cross_entropy(x, w, _index([1, 0, 2]), linear_bias=b),
     (Leaf((3, 4)), T((3, 4)), Leaf((3,)))),
    ("unbatched", lambda x, w: F.linear_cross_entropy(x, w, _index(2), label_smoothing=0.2),
     (Leaf((4,)), Leaf((3, 4)))),
    ("k-dim-probabilities", lambda x, w, p: F.linear_cross_entropy(
        x, w, p.softmax(1), reduction="sum"), (Leaf((2, 3)), Leaf((4, 2, 3)), Leaf((2, 4, 2)))),
    ("size-0-batch", lambda x, w: F.linear_cross_entropy(x, w, _index(np.zeros(0, np.int64)),
                                                         reduction="sum"),
     (Leaf((0, 3)), Leaf((2, 3)))))


def _quietly(fn, **kwargs):
    """``fn(x, **kwargs)`` without its deprecation warning."""
    def call(x):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(x, **kwargs)
    return call


add("upsample",
    ("bilinear", _quietly(F.upsample, scale_factor=2, mode="bilinear"), (Leaf((1, 1, 2, 2)),)))
add("upsample_nearest", ("size", _quietly(F.upsample_nearest, size=3), (Leaf((1, 1, 2)),)))
add("upsample_bilinear",
    ("scale", _quietly(F.upsample_bilinear, scale_factor=1.5), (T((1, 1, 2, 3)),)))
add("pixel_shuffle",
    ("batched", lambda x: F.pixel_shuffle(x, 2), (T((2, 8, 2, 3)),)),
    ("no-batch-size-0", lambda x: F.pixel_shuffle(x, 2), (Leaf((4, 0, 2)),)))
add("pixel_unshuffle",
    ("batched", lambda x: F.pixel_unshuffle(x, 2), (S((1, 2, 2, 4)),)),
    ("extra-batch-dims", lambda x: F.pixel_unshuffle(x, 3), (Leaf((2, 1, 1, 3, 3)),)))
add("channel_shuffle",
    ("4d", lambda x: F.channel_shuffle(x, 3), (T((2, 6, 2, 1)),)),
    ("size-0", lambda x: F.channel_shuffle(x, 2), (Leaf((0, 4, 2)),)))
# conv3d is an op (its cases are in tests/ops/_cases_conv_nd.py); one here for the F name.
add("conv3d", ("groups", lambda x, w: F.conv3d(x, w, groups=2),
               (Leaf((1, 2, 2, 2, 2)), Leaf((2, 1, 1, 2, 2)))))
for _mode, _padding in (("bilinear", "zeros"), ("bilinear", "reflection"), ("nearest", "border"),
                        ("bicubic", "zeros"), ("bicubic", "reflection")):
    add("grid_sample",
        (f"{_mode}-{_padding}", lambda x, g, m=_mode, p=_padding: F.grid_sample(
            x, g * 1.3, mode=m, padding_mode=p, align_corners=False),
         (Leaf((1, 2, 3, 4)), T((1, 2, 3, 2)))))
add("grid_sample",
    ("trilinear-border-align-corners", lambda x, g: F.grid_sample(
        x, g, padding_mode="border", align_corners=True),
     (S((1, 1, 2, 3, 2)), Leaf((1, 2, 1, 2, 3)))),
    ("size-0-grid", lambda x, g: F.grid_sample(x, g, align_corners=False),
     (Leaf((2, 1, 2, 2)), Leaf((2, 0, 3, 2)))))
add("affine_grid",
    ("2d", lambda t: F.affine_grid(t, (2, 1, 3, 4), align_corners=False), (T((2, 2, 3)),)),
    ("3d-align-corners", lambda t: F.affine_grid(t, (1, 2, 2, 3, 2), align_corners=True),
     (Leaf((1, 3, 4)),)))
add("native_channel_shuffle", ("3d", lambda x: F.native_channel_shuffle(x, 2), (T((2, 4, 3)),)))
add("conv_tbc",
    ("pad", lambda x, w, b: F.conv_tbc(x, w, b, 1), (Leaf((4, 2, 3)), T((2, 3, 2)), Leaf((2,)))),
    ("size-0-batch", lambda x, w, b: F.conv_tbc(x, w, b), (Leaf((3, 0, 2)), Leaf((2, 2, 1)),
                                                           Leaf((1,)))))
# -- pooling (oxmera/ops/pooling.py): the wrappers of its ops and the composed functions -------

def _first(fn):
    return lambda *args: fn(*args)[0]


add("max_pool1d",
    ("return-indices", lambda x: F.max_pool1d(x, 3, 2, 1, return_indices=True)[0],
     (Leaf((2, 2, 7), "distinct"),)),
    ("transposed", lambda x: F.max_pool1d(x, 2, ceil_mode=True), (T((2, 5), "distinct"),)))
add("max_pool3d",
    ("return-indices", lambda x: F.max_pool3d(x, 2, 1, return_indices=True)[0],
     (Leaf((1, 2, 2, 3, 3), "distinct"),)),
    ("size-0", lambda x: F.max_pool3d(x, (1, 2, 2)), (Leaf((0, 1, 2, 2, 2)),)))
for _n in (1, 2, 3):
    add(f"max_pool{_n}d_with_indices",
        ("plain", _first(lambda x, n=_n: getattr(F, f"max_pool{n}d_with_indices")(x, 2)),
         (S((1, 2) + (2,) * _n, "distinct"),)))
    add(f"adaptive_max_pool{_n}d",
        ("uneven", lambda x, n=_n: getattr(F, f"adaptive_max_pool{n}d")(x, 2),
         (Leaf((2,) + (3,) * _n, "distinct"),)),
        ("size-0", lambda x, n=_n: getattr(F, f"adaptive_max_pool{n}d")(x, 1, True)[0],
         (Leaf((0, 1) + (2,) * _n),)))
    add(f"adaptive_max_pool{_n}d_with_indices",
        ("plain", _first(lambda x, n=_n: getattr(F, f"adaptive_max_pool{n}d_with_indices")(x, 2)),
         (T((1, 2) + (3,) * _n, "distinct"),)))
add("avg_pool1d",
    ("plain", lambda x: F.avg_pool1d(x, 2), (Leaf((2, 2, 6)),)),
    ("exclude-pad-ceil", lambda x: F.avg_pool1d(x, 3, 2, 1, True, False), (Leaf((1, 2, 6)),)),
    ("unbatched", lambda x: F.avg_pool1d(x, 2, 1), (T((3, 4)),)),
    ("size-0", lambda x: F.avg_pool1d(x, 2), (Leaf((0, 2, 4)),)))
add("avg_pool3d",
    ("plain", lambda x: F.avg_pool3d(x, 2), (Leaf((1, 2, 2, 4, 4)),)),
    ("padding-ceil-exclude", lambda x: F.avg_pool3d(x, (3, 2, 3), (2, 1, 2), (1, 1, 0), True,
                                                    False),
     (Leaf((1, 1, 4, 3, 5)),)),
    ("divisor-override", lambda x: F.avg_pool3d(x, 2, 1, 1, divisor_override=3),
     (Leaf((1, 2, 3, 2)),)),
    ("size-0", lambda x: F.avg_pool3d(x, 2), (Leaf((0, 1, 2, 2, 2)),)),
    ("strided", lambda x: F.avg_pool3d(x, (1, 2, 2)), (S((1, 2, 2, 2, 4)),)))
for _n in (1, 2, 3):
    add(f"adaptive_avg_pool{_n}d",
        ("divides", lambda x, n=_n: getattr(F, f"adaptive_avg_pool{n}d")(x, 2),
         (Leaf((1, 2) + (4,) * _n),)),
        ("overlapping", lambda x, n=_n: getattr(F, f"adaptive_avg_pool{n}d")(x, 3),
         (T((2,) + (4,) * _n),)),
        ("size-0", lambda x, n=_n: getattr(F, f"adaptive_avg_pool{n}d")(x, 2),
         (Leaf((0, 1) + (3,) * _n),)))


def _pooled_indices(n, shape, kernel):
    """Indices as ``max_pool<n>d`` gives them (distinct values, so no tie), for unpooling."""
    values = np.random.default_rng(n).permutation(int(np.prod(shape))).reshape(shape)
    pool = getattr(F, f"max_pool{n}d")
    return pool(oxmera.tensor(values.astype(np.float64)), kernel, return_indices=True)[1]


_UNPOOL_INDICES = {1: _pooled_indices(1, (2, 2, 7), 2), 2: _pooled_indices(2, (1, 2, 4, 5), 2),
                   3: _pooled_indices(3, (2, 2, 2, 4), (1, 2, 2))}
add("max_unpool1d",
    ("output-size", lambda x: F.max_unpool1d(x, _UNPOOL_INDICES[1], 2, output_size=(7,)),
     (Leaf((2, 2, 3)),)),
    ("transposed", lambda x: F.max_unpool1d(x, _UNPOOL_INDICES[1], 2), (T((2, 2, 3)),)))
add("max_unpool2d",
    ("output-size", lambda x: F.max_unpool2d(x, _UNPOOL_INDICES[2], 2, output_size=(1, 2, 4, 5)),
     (Leaf((1, 2, 2, 2)),)),
    ("size-0", lambda x: F.max_unpool2d(x, _UNPOOL_INDICES[2][:0], 2), (Leaf((0, 2, 2, 2)),)))
add("max_unpool3d",
    ("unbatched", lambda x: F.max_unpool3d(x, _UNPOOL_INDICES[3], (1, 2, 2)),
     (S((2, 2, 1, 2)),)))
for _n in (1, 2, 3):
    _lp = getattr(F, f"lp_pool{_n}d")
    add(f"lp_pool{_n}d",
        ("p2", lambda x, fn=_lp: fn(x, 2, 2), (Leaf((1, 2) + (4,) * _n, "positive"),)),
        ("p3-stride-ceil", lambda x, fn=_lp: fn(x, 3.0, 2, 1, True),
         (T((2,) + (3,) * _n, "positive"),)),
        ("inf", lambda x, fn=_lp: fn(x, float("inf"), 2), (Leaf((1, 1) + (2,) * _n, "positive"),)),
        ("size-0", lambda x, fn=_lp: fn(x, 1, 2), (Leaf((0, 1) + (2,) * _n, "positive"),)))
for _n in (2, 3):
    _samples = oxmera.tensor(np.random.default_rng(_n).random((2, 2, _n)))
    add(f"fractional_max_pool{_n}d",
        ("samples", lambda x, n=_n, u=_samples: getattr(F, f"fractional_max_pool{n}d")(
            x, 2, 2, _random_samples=u), (Leaf((2, 2) + (_n + 1,) * _n, "distinct"),)),
        ("size-0", lambda x, n=_n, u=_samples: getattr(F, f"fractional_max_pool{n}d")(
            x, 1, output_ratio=0.5, _random_samples=u), (Leaf((0, 2) + (2,) * _n),)))
    add(f"fractional_max_pool{_n}d_with_indices",
        ("samples", _first(lambda x, n=_n, u=_samples: getattr(
            F, f"fractional_max_pool{n}d_with_indices")(x, 2, 2, _random_samples=u[:1])),
         (T((2,) + (_n + 1,) * _n, "distinct"),)))
