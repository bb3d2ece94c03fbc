"""The losses of ``oxmera.nn._loss_functions`` (kl_div, the likelihoods, the margin
and embedding losses, the triplet losses, ctc_loss) and their modules.

Values and gradients are compared with PyTorch in float64 for every
reduction (skipped without torch); closed forms, shapes, float16, errors and
reprs are checked without it. Gradients to second order: ``_gradient_cases.py``.
"""
import math
import warnings

import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn
from ops._helpers import leaf, unchanged

RNG = np.random.default_rng(5)
REDUCTIONS = ["none", "mean", "sum"]


def _np(t):
    return t.detach().numpy()


# -- the comparison table ------------------------------------------------------------------------
# name -> (function name, builder of the arguments as NumPy arrays / numbers, keyword sets).
# Float arrays are the differentiable inputs; integer arrays are targets.

def _pm1(shape):
    return np.where(RNG.random(shape) < 0.5, -1.0, 1.0)


def _args(name):
    x, y = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    if name == "kl_div":
        return [np.log(RNG.dirichlet(np.ones(5), 4)), RNG.dirichlet(np.ones(5), 4)]
    if name == "kl_div_log_target":
        return [np.log(RNG.dirichlet(np.ones(5), 4)), np.log(RNG.dirichlet(np.ones(5), 4))]
    if name == "kl_div_zero_target":
        target = RNG.dirichlet(np.ones(5), 4)
        target[:, 0] = 0.0
        return [x, target]
    if name == "poisson_nll_loss":
        return [x, RNG.poisson(2.0, (4, 5)).astype(float)]
    if name == "poisson_nll_loss_rate":
        return [RNG.uniform(0.2, 3.0, (4, 5)), RNG.poisson(2.0, (4, 5)).astype(float)]
    if name == "gaussian_nll_loss":
        return [x, y, RNG.uniform(0.2, 2.0, (4, 5))]
    if name == "gaussian_nll_loss_per_sample":
        return [x, y, RNG.uniform(0.2, 2.0, (4,))]
    if name == "gaussian_nll_loss_dim1":
        return [RNG.standard_normal((3, 4, 5)), RNG.standard_normal((3, 4, 5)),
                RNG.uniform(0.2, 2.0, (3, 1, 5))]
    if name == "gaussian_nll_loss_clamped":
        return [x, y, np.array([1e-9, 0.0, 0.5, 2.0, 1.0])[None].repeat(4, 0)]
    if name == "huber_loss":
        return [3 * x, y]
    if name == "huber_loss_weight":
        return [3 * x, y, RNG.uniform(0.5, 2.0, (4, 5))]
    if name == "cosine_embedding_loss":
        return [x, y, np.array([1, -1, 1, -1])]
    if name == "cosine_embedding_loss_unbatched":
        return [x[0], y[0], np.array(-1)]
    if name == "margin_ranking_loss":
        return [x[:, 0], y[:, 0], _pm1(4)]
    if name == "hinge_embedding_loss":
        return [x, _pm1((4, 5))]
    if name == "soft_margin_loss":
        return [x, _pm1((4, 5))]
    if name == "multilabel_soft_margin_loss":
        return [x, (RNG.random((4, 5)) < 0.5).astype(float)]
    if name == "multilabel_soft_margin_loss_weight":
        return [x, (RNG.random((4, 5)) < 0.5).astype(float), RNG.uniform(0.5, 2, (5,))]
    if name == "multilabel_margin_loss":
        return [x, np.array([[3, 0, -1, 1, 2], [4, 4, 1, -1, -1], [-1, 2, 2, 2, 2],
                             [0, 1, 2, 3, 4]])]
    if name == "multilabel_margin_loss_unbatched":
        return [x[0], np.array([2, 1, -1, 0, 0])]
    if name == "multi_margin_loss":
        return [x, np.array([0, 4, 2, 2])]
    if name == "multi_margin_loss_weight":
        return [x, np.array([0, 4, 2, 2]), RNG.uniform(0.5, 2, (5,))]
    if name == "multi_margin_loss_unbatched":
        return [x[0], np.array(3)]
    if name.startswith("triplet_margin"):
        if name.endswith("unbatched"):
            return [x[0], y[0], RNG.standard_normal(5)]
        return [x, y, RNG.standard_normal((4, 5))]
    raise KeyError(name)


def _oxmera_swap_distance(a, b):
    return 1 - F.cosine_similarity(a, b)


def _torch_swap_distance(a, b):
    import torch
    return 1 - torch.nn.functional.cosine_similarity(a, b)


# case -> (function, keyword sets); a keyword "distance" is resolved per library
COMPARED = {
    "kl_div": ("kl_div", [{}, {"reduction": "batchmean"}]),
    "kl_div_log_target": ("kl_div", [{"log_target": True},
                                     {"log_target": True, "reduction": "batchmean"}]),
    "kl_div_zero_target": ("kl_div", [{}]),
    "poisson_nll_loss": ("poisson_nll_loss", [{}, {"full": True}]),
    "poisson_nll_loss_rate": ("poisson_nll_loss", [{"log_input": False},
                                                   {"log_input": False, "full": True,
                                                    "eps": 0.1}]),
    "gaussian_nll_loss": ("gaussian_nll_loss", [{}, {"full": True, "eps": 0.3}]),
    "gaussian_nll_loss_per_sample": ("gaussian_nll_loss", [{}]),
    "gaussian_nll_loss_dim1": ("gaussian_nll_loss", [{}]),
    "gaussian_nll_loss_clamped": ("gaussian_nll_loss", [{}, {"eps": 0.2}]),
    "huber_loss": ("huber_loss", [{}, {"delta": 0.5}]),
    "huber_loss_weight": ("huber_loss", [{"delta": 2.0}]),
    "cosine_embedding_loss": ("cosine_embedding_loss", [{}, {"margin": 0.2}]),
    "cosine_embedding_loss_unbatched": ("cosine_embedding_loss", [{"margin": -0.5}]),
    "margin_ranking_loss": ("margin_ranking_loss", [{}, {"margin": 0.5}]),
    "hinge_embedding_loss": ("hinge_embedding_loss", [{}, {"margin": 0.3}]),
    "soft_margin_loss": ("soft_margin_loss", [{}]),
    "multilabel_soft_margin_loss": ("multilabel_soft_margin_loss", [{}]),
    "multilabel_soft_margin_loss_weight": ("multilabel_soft_margin_loss", [{}]),
    "multilabel_margin_loss": ("multilabel_margin_loss", [{}]),
    "multilabel_margin_loss_unbatched": ("multilabel_margin_loss", [{}]),
    "multi_margin_loss": ("multi_margin_loss", [{}, {"p": 2, "margin": 0.7}]),
    "multi_margin_loss_weight": ("multi_margin_loss", [{}, {"p": 2}]),
    "multi_margin_loss_unbatched": ("multi_margin_loss", [{"margin": 2.0}]),
    "triplet_margin_loss": ("triplet_margin_loss", [{}, {"p": 1, "swap": True, "margin": 2.0},
                                                    {"p": 3, "eps": 0.1}]),
    "triplet_margin_loss_unbatched": ("triplet_margin_loss", [{"swap": True}]),
    "triplet_margin_with_distance_loss": (
        "triplet_margin_with_distance_loss",
        [{}, {"swap": True, "margin": 3.0}, {"distance": True, "swap": True}]),
    "triplet_margin_with_distance_loss_unbatched": ("triplet_margin_with_distance_loss",
                                                    [{"margin": 2.5}]),
}

# PyTorch refuses a target that requires grad there
NO_TARGET_GRADIENT = (F.soft_margin_loss, F.multilabel_soft_margin_loss)

_PARAMS = [(case, i, reduction) for case, (_, kwarg_sets) in COMPARED.items()
           for i, kwargs in enumerate(kwarg_sets)
           for reduction in ([kwargs["reduction"]] if "reduction" in kwargs else REDUCTIONS)]


def _compare(ox_fn, torch_fn, args, kwargs, torch, rtol=1e-10, atol=1e-12):
    """Run both libraries on the same float64 arguments; compare the values and the
    gradients of every float argument (of a random weighting of a 'none' output).

    PyTorch's poisson_nll_loss(full=True) gives a target of 0 a nan gradient
    (the masked Stirling term's log(0)); ours is the masked term's 0 there.
    """
    ox_args = [leaf(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else
               (oxmera.tensor(a) if isinstance(a, np.ndarray) else a) for a in args]
    th_args = [torch.tensor(a, requires_grad=a.dtype.kind == "f" and not
                            (i == 1 and ox_fn in NO_TARGET_GRADIENT))
               if isinstance(a, np.ndarray) else a for i, a in enumerate(args)]
    ox_kwargs = {k: v[0] if isinstance(v, tuple) else v for k, v in kwargs.items()}
    th_kwargs = {k: v[1] if isinstance(v, tuple) else v for k, v in kwargs.items()}
    if ox_fn in (F.huber_loss, F.multi_margin_loss) and len(args) == 3:
        ox_kwargs["weight"], th_kwargs["weight"] = ox_args.pop(), th_args.pop()
        if ox_fn is F.multi_margin_loss:    # PyTorch's has no gradient in weight
            th_kwargs["weight"] = th_kwargs["weight"].detach()
    ours, theirs = ox_fn(*ox_args, **ox_kwargs), torch_fn(*th_args, **th_kwargs)
    assert ours.shape == tuple(theirs.shape)
    assert ours.dtype == oxmera.float64
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), rtol=rtol, atol=atol)
    weights = RNG.uniform(0.5, 1.5, tuple(theirs.shape))
    (ours * oxmera.tensor(weights)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    for i, (o, t) in enumerate(zip(ox_args, th_args)):
        if not (isinstance(t, torch.Tensor) and t.requires_grad):
            continue
        if t.grad is None:              # a target PyTorch only compares with 1 and -1
            assert o.grad is None or not _np(o.grad).any()
            continue
        expected, actual = t.grad.numpy(), _np(o.grad)
        if ox_fn is F.poisson_nll_loss and kwargs.get("full") and i == 1:
            zero = t.detach().numpy() == 0
            assert np.isnan(expected[zero]).all() and np.isfinite(actual).all()
            expected, actual = expected[~zero], actual[~zero]
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("case, which, reduction", _PARAMS)
def test_matches_torch(case, which, reduction):
    torch = pytest.importorskip("torch")
    name, kwarg_sets = COMPARED[case]
    kwargs = dict(kwarg_sets[which])
    if kwargs.pop("distance", False):
        kwargs["distance_function"] = (_oxmera_swap_distance, _torch_swap_distance)
    kwargs.setdefault("reduction", reduction)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # torch's kl_div 'mean' warning
        _compare(getattr(F, name), getattr(torch.nn.functional, name), _args(case), kwargs,
                 torch)


# -- ctc_loss --------------------------------------------------------------------------------

CTC_LENGTHS = [
    # (input_lengths, target_lengths), targets (N=3, S=3) below; T = 6
    ([6, 5, 4], [3, 2, 1]),
    ([6, 6, 6], [3, 2, 1]),
    ([3, 5, 4], [3, 2, 1]),       # sample 0 cannot fit: repeats need 4 frames
    ([6, 0, 4], [3, 0, 1]),       # an empty input with an empty target
    ([6, 0, 4], [3, 1, 1]),       # an empty input with a label: infinite
    ([6, 5, 4], [2, 1, 0]),       # an empty target
    ([1, 2, 4], [1, 1, 1]),
]
CTC_TARGETS = np.array([[1, 2, 2], [1, 1, 3], [3, 0, 0]])


def _torch_ctc_args(torch, logits, targets, concatenated, lengths):
    x = torch.tensor(logits, requires_grad=True)
    if concatenated:
        targets = np.concatenate([row[:n] for row, n in zip(targets, lengths[1])])
    return x, torch.tensor(targets)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("concatenated", [False, True])
@pytest.mark.parametrize("lengths", CTC_LENGTHS, ids=str)
def test_ctc_loss_matches_torch(lengths, concatenated, zero_infinity, reduction):
    torch = pytest.importorskip("torch")
    logits = RNG.standard_normal((6, 3, 4))
    x, targets = _torch_ctc_args(torch, logits, CTC_TARGETS, concatenated, lengths)
    # PyTorch's gradient in log_probs adds exp(log_probs), which assumes
    # log_softmax: compared through it, where it is the true gradient.
    theirs = torch.nn.functional.ctc_loss(x.log_softmax(2), targets, *lengths,
                                          reduction=reduction, zero_infinity=zero_infinity)
    y = leaf(logits)
    ours = F.ctc_loss(y.log_softmax(2), oxmera.tensor(targets.numpy()), *lengths,
                      reduction=reduction, zero_infinity=zero_infinity)
    assert ours.shape == tuple(theirs.shape)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    if np.isfinite(theirs.detach().numpy()).all():
        theirs.sum().backward()
        ours.sum().backward()
        np.testing.assert_allclose(_np(y.grad), x.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_ctc_loss_other_blank_unbatched_and_long_inputs():
    torch = pytest.importorskip("torch")
    # a long input (logsumexp keeps it finite), blank the last class, tensors as lengths
    logits = RNG.standard_normal((50, 2, 6)) * 3
    targets = np.array([[0, 1, 1, 2, 3, 4, 0, 0], [2, 2, 2, 2, 2, 2, 2, 2]])
    lengths = (np.array([50, 41]), np.array([8, 8]))
    x = torch.tensor(logits, requires_grad=True)
    theirs = torch.nn.functional.ctc_loss(x.log_softmax(2), torch.tensor(targets),
                                          torch.tensor(lengths[0]), torch.tensor(lengths[1]),
                                          blank=5)
    y = leaf(logits)
    ours = F.ctc_loss(y.log_softmax(2), oxmera.tensor(targets), oxmera.tensor(lengths[0]),
                      oxmera.tensor(lengths[1]), blank=5)
    np.testing.assert_allclose(_np(ours), theirs.item(), rtol=1e-10)
    theirs.backward()
    ours.backward()
    np.testing.assert_allclose(_np(y.grad), x.grad.numpy(), rtol=1e-8, atol=1e-12)
    # unbatched (T, C): ints as lengths, a 0-d loss
    lp = torch.tensor(logits[:, 0]).log_softmax(1)
    theirs = torch.nn.functional.ctc_loss(lp, torch.tensor(targets[0]), [50], [8],
                                          reduction="none", blank=5)
    ours = F.ctc_loss(oxmera.tensor(lp.numpy()), oxmera.tensor(targets[0]), 50, 8,
                      reduction="none", blank=5)
    assert ours.shape == ()
    np.testing.assert_allclose(_np(ours), theirs.item(), rtol=1e-10)


def test_ctc_loss_counts_the_paths():
    # uniform probabilities: the loss is -log(paths / C**T). For target [1] over
    # T=3 frames with C=2: the collapsing alignments are 011, 001, 111, 110, 100,
    # 010 -> wait, 010 collapses to [1] too; every sequence with at least one 1
    # and no two separate runs of 1: 001, 010, 100, 011, 110, 111 = 6 of 8.
    log_probs = oxmera.full((3, 1, 2), 0.5, dtype=oxmera.float64).log()
    out = F.ctc_loss(log_probs, oxmera.tensor([[1]]), [3], [1], reduction="sum")
    assert out.item() == pytest.approx(-math.log(6 / 8), rel=1e-12)


def test_ctc_loss_float16_and_float32():
    logits = RNG.standard_normal((5, 2, 3))
    wide = F.ctc_loss(oxmera.tensor(logits).log_softmax(2), oxmera.tensor([[1, 2], [2, 2]]),
                      [5, 5], [2, 2])
    half = F.ctc_loss(oxmera.tensor(logits, dtype=oxmera.float16).log_softmax(2),
                      oxmera.tensor([[1, 2], [2, 2]]), [5, 5], [2, 2])
    assert half.dtype == oxmera.float16
    assert half.item() == pytest.approx(wide.item(), rel=2e-3)


@pytest.mark.parametrize("call, error, match", [
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 2]]), [7], [2]), RuntimeError,
     "input_lengths to have value at most 6"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 2]]), [6], [3]), RuntimeError,
     "size at least 3"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 2]]), [6, 6], [2]), RuntimeError,
     "input_lengths must be of size batch_size"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 2]]), [6], [2, 1]), RuntimeError,
     "target_lengths must be of size batch_size"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 2]]), [6], [2], blank=4), RuntimeError,
     "blank must be in label range"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 2]]), oxmera.tensor([6.0]), [2]),
     RuntimeError, "input_lengths must be integral"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 2]]), [6], [-1]), RuntimeError,
     "target_lengths to have value at least 0"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([1, 2, 3]), [6], [2]), RuntimeError,
     "summed target lengths 2"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 5]]), [6], [2]), RuntimeError,
     "5 is out of range for 4 classes"),
    (lambda lp: F.ctc_loss(lp[:, 0], oxmera.tensor([[1, 2]]), [6], [2]), RuntimeError,
     "unbatched"),
    (lambda lp: F.ctc_loss(lp, oxmera.tensor([[1, 2]]), [6], [2], reduction="avg"), ValueError,
     "avg is not a valid value for reduction"),
])
def test_ctc_loss_errors(call, error, match):
    lp = leaf(RNG.standard_normal((6, 1, 4)))
    with unchanged(lp):
        with pytest.raises(error, match=match):
            call(lp)


# -- closed forms, shapes and semantics without torch ---------------------------------------------

def test_kl_div_closed_form_and_batchmean():
    p = RNG.dirichlet(np.ones(5), 4)
    q = RNG.dirichlet(np.ones(5), 4)
    p[0, 1] = 0.0
    each = np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0) - p * np.log(q)
    out = F.kl_div(oxmera.tensor(np.log(q)), oxmera.tensor(p), reduction="batchmean")
    np.testing.assert_allclose(_np(out), each.sum() / 4, rtol=1e-12)
    out = F.kl_div(oxmera.tensor(np.log(q)), oxmera.tensor(np.log(p + 1e-300)),
                   reduction="none", log_target=True)
    np.testing.assert_allclose(_np(out), each, rtol=1e-9, atol=1e-12)
    # a 0-d input: batchmean is the sum
    assert F.kl_div(oxmera.tensor(-1.0), oxmera.tensor(0.5), reduction="batchmean").item() == \
        pytest.approx(0.5 * math.log(0.5) + 0.5)


def test_poisson_stirling_term_only_above_one():
    target = np.array([0.0, 1.0, 1.5, 4.0])
    x = np.zeros(4)
    out = F.poisson_nll_loss(oxmera.tensor(x), oxmera.tensor(target), full=True,
                             reduction="none")
    stirling = np.where(target > 1, target * np.log(np.maximum(target, 1)) - target
                        + 0.5 * np.log(2 * np.pi * np.maximum(target, 1)), 0)
    np.testing.assert_allclose(_np(out), 1 + stirling, rtol=1e-12)
    # the masked entries (target 0) get a finite target gradient
    t = leaf(target)
    F.poisson_nll_loss(oxmera.tensor(x), t, full=True).backward()
    assert np.isfinite(_np(t.grad)).all()


def test_gaussian_nll_var_rules():
    x, y = oxmera.tensor(RNG.standard_normal((3, 4))), oxmera.tensor(RNG.standard_normal((3, 4)))
    per_sample = F.gaussian_nll_loss(x, y, oxmera.ones(3), reduction="none")
    np.testing.assert_allclose(_np(per_sample), 0.5 * (_np(x) - _np(y)) ** 2, rtol=1e-12)
    assert F.gaussian_nll_loss(x, y, 1.0).item() == pytest.approx(per_sample.mean().item())
    with pytest.raises(ValueError, match="var is of incorrect size"):
        F.gaussian_nll_loss(x, y, oxmera.ones(4))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(x, y, -oxmera.ones(3, 4))
    with pytest.raises(ValueError, match="var has negative entry"):
        F.gaussian_nll_loss(x, y, -1.0)
    with pytest.raises(ValueError, match="bad is not valid"):
        F.gaussian_nll_loss(x, y, 1.0, reduction="bad")
    # the clamp changes the value, not the gradient
    var = leaf(np.full((3, 4), 1e-9))
    F.gaussian_nll_loss(x, y, var, eps=0.5, reduction="sum").backward()
    np.testing.assert_allclose(_np(var.grad), 0.5 * (1 / 0.5 - (_np(x) - _np(y)) ** 2 / 0.25),
                               rtol=1e-12)


def test_soft_margin_and_multilabel_soft_margin_are_stable():
    x = leaf([1e4, -1e4])
    out = F.soft_margin_loss(x, oxmera.tensor([-1.0, -1.0]), reduction="none")
    np.testing.assert_allclose(_np(out), [1e4, 0.0])
    out.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [1.0, 0.0])
    out = F.multilabel_soft_margin_loss(oxmera.tensor([[1e4, -1e4]]), oxmera.tensor([[0.0, 1.0]]))
    assert out.item() == pytest.approx(1e4)


def test_multilabel_margin_reads_targets_up_to_the_first_minus_one():
    x = np.array([0.1, 0.2, 0.4, 0.8])
    # targets 3 and 0; non-targets 1 and 2 (the 1 after -1 is ignored)
    expected = sum(max(0, 1 - (x[j] - x[i])) for j in (3, 0) for i in (1, 2)) / 4
    out = F.multilabel_margin_loss(oxmera.tensor(x), oxmera.tensor([3, 0, -1, 1]),
                                   reduction="none")
    assert out.shape == () and out.item() == pytest.approx(expected)


def test_shapes_batched_and_unbatched():
    x = oxmera.tensor(RNG.standard_normal((3, 5)))
    assert F.multi_margin_loss(x, oxmera.tensor([0, 1, 2]), reduction="none").shape == (3,)
    assert F.multi_margin_loss(x[0], oxmera.tensor(1), reduction="none").shape == ()
    assert F.multilabel_soft_margin_loss(x, oxmera.ones(3, 5), reduction="none").shape == (3,)
    assert F.multilabel_soft_margin_loss(x[0], oxmera.ones(5), reduction="none").shape == ()
    assert F.cosine_embedding_loss(x[0], x[1], oxmera.tensor(1), reduction="none").shape == ()
    assert F.triplet_margin_loss(x[0], x[1], x[2], reduction="none").shape == ()
    assert F.triplet_margin_loss(x, x, x, reduction="none").shape == (3,)
    assert F.hinge_embedding_loss(x, oxmera.ones(5), reduction="none").shape == (3, 5)


def test_float16_is_computed_in_float32():
    x = RNG.standard_normal((4, 5))
    y = np.where(RNG.random((4, 5)) < 0.5, -1.0, 1.0)
    for fn in (F.soft_margin_loss, F.hinge_embedding_loss, F.multilabel_soft_margin_loss,
               lambda a, b: F.poisson_nll_loss(a, b.abs()),
               lambda a, b: F.kl_div(a, b.abs() / 5, reduction="batchmean")):
        half = fn(oxmera.tensor(x, dtype=oxmera.float16), oxmera.tensor(y, dtype=oxmera.float16))
        wide = fn(oxmera.tensor(x.astype(np.float16).astype(np.float64)), oxmera.tensor(y))
        assert half.dtype == oxmera.float16
        assert half.item() == pytest.approx(wide.item(), rel=1e-3, abs=1e-3)


LEGACY = {
    "kl_div": lambda **kw: F.kl_div(oxmera.tensor(RNG_FIXED[0]), oxmera.tensor(abs(RNG_FIXED[1])),
                                    **kw),
    "poisson_nll_loss": lambda **kw: F.poisson_nll_loss(
        oxmera.tensor(RNG_FIXED[0]), oxmera.tensor(abs(RNG_FIXED[1])), **kw),
    "cosine_embedding_loss": lambda **kw: F.cosine_embedding_loss(
        oxmera.tensor(RNG_FIXED[0]), oxmera.tensor(RNG_FIXED[1]), oxmera.tensor([1, -1, 1]),
        **kw),
    "margin_ranking_loss": lambda **kw: F.margin_ranking_loss(
        oxmera.tensor(RNG_FIXED[0]), oxmera.tensor(RNG_FIXED[1]), oxmera.ones(3, 4), **kw),
    "hinge_embedding_loss": lambda **kw: F.hinge_embedding_loss(
        oxmera.tensor(RNG_FIXED[0]), -oxmera.ones(3, 4), **kw),
    "soft_margin_loss": lambda **kw: F.soft_margin_loss(oxmera.tensor(RNG_FIXED[0]),
                                                        oxmera.ones(3, 4), **kw),
    "multilabel_soft_margin_loss": lambda **kw: F.multilabel_soft_margin_loss(
        oxmera.tensor(RNG_FIXED[0]), oxmera.ones(3, 4), **kw),
    "multilabel_margin_loss": lambda **kw: F.multilabel_margin_loss(
        oxmera.tensor(RNG_FIXED[0]), oxmera.tensor([[1, -1, 0, 0]] * 3), **kw),
    "multi_margin_loss": lambda **kw: F.multi_margin_loss(
        oxmera.tensor(RNG_FIXED[0]), oxmera.tensor([0, 1, 3]), **kw),
    "triplet_margin_loss": lambda **kw: F.triplet_margin_loss(
        oxmera.tensor(RNG_FIXED[0]), oxmera.tensor(RNG_FIXED[1]), oxmera.zeros(3, 4), **kw),
}
RNG_FIXED = (RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)))


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_size_average_and_reduce(name):
    with pytest.warns(UserWarning, match="deprecated.*'sum'"):
        total = LEGACY[name](size_average=False)
    np.testing.assert_allclose(_np(total), _np(LEGACY[name](reduction="sum")))
    with pytest.warns(UserWarning, match="'none'"):
        each = LEGACY[name](reduce=False)
    np.testing.assert_allclose(_np(each), _np(LEGACY[name](reduction="none")))
    with pytest.raises(ValueError, match="'average'"):
        LEGACY[name](reduction="average")


# -- input errors ----------------------------------------------------------------------------

X = RNG.standard_normal((3, 5))


@pytest.mark.parametrize("call, error, match", [
    (lambda x: F.multi_margin_loss(x, oxmera.tensor([0, 1, 2]), p=3), ValueError,
     "only p == 1 and p == 2"),
    (lambda x: F.multi_margin_loss(x, oxmera.tensor([0, 1, 9])), RuntimeError,
     "target out of range"),
    (lambda x: F.multi_margin_loss(x, oxmera.tensor([0, 1])), RuntimeError,
     r"Expected target size \[3\], but got \[2\]"),
    (lambda x: F.multi_margin_loss(x, oxmera.tensor([0, 1, 2]), weight=oxmera.ones(4)),
     RuntimeError, "inconsistent weight size, expected 5"),
    (lambda x: F.multilabel_margin_loss(x, oxmera.tensor([1, 2, -1, 0, 0])), RuntimeError,
     r"inconsistent target size: \(5,\) for input of size: \(3, 5\)"),
    (lambda x: F.multilabel_margin_loss(x, oxmera.tensor([[1, 7, -1, 0, 0]] * 3)),
     RuntimeError, "target 7 is out of range"),
    (lambda x: F.cosine_embedding_loss(x, x, oxmera.ones(3, 1)), RuntimeError,
     "0D or 1D target tensor expected"),
    (lambda x: F.cosine_embedding_loss(x, x, oxmera.ones(2)), RuntimeError,
     r"target of shape \(2,\) does not match the inputs. batch shape \(3,\)"),
    (lambda x: F.cosine_embedding_loss(x, x, oxmera.tensor(1)), RuntimeError,
     "0D target tensor expects 1D input tensors"),
    (lambda x: F.margin_ranking_loss(x, x[0], oxmera.ones(3, 5)), RuntimeError,
     "All input tensors should have same dimension"),
    (lambda x: F.hinge_embedding_loss(x, oxmera.ones(4)), RuntimeError,
     r"input of shape \(3, 5\), target of shape \(4,\) do not broadcast"),
    (lambda x: F.triplet_margin_loss(x, x[0], x), RuntimeError,
     "anchor 2D, positive 1D, and negative 2D"),
    (lambda x: F.triplet_margin_with_distance_loss(x, x, x, margin=0), ValueError,
     "margin must be greater than 0, got 0"),
    (lambda x: F.kl_div(x, x, reduction="batch"), ValueError, "'batch'"),
    (lambda x: F.huber_loss(x, x, weight=oxmera.ones(5)), ValueError,
     "weights and input must have the same size"),
    (lambda x: F.soft_margin_loss(oxmera.tensor([1, 2]), oxmera.tensor([1, 1])), TypeError,
     "floating point input"),
])
def test_errors(call, error, match):
    x = leaf(X)
    with unchanged(x):
        with pytest.raises(error, match=match):
            call(x)


# -- modules -----------------------------------------------------------------------------------

MODULES = [
    (nn.KLDivLoss(reduction="batchmean", log_target=True),
     lambda x, y: F.kl_div(x, y, reduction="batchmean", log_target=True), 2),
    (nn.PoissonNLLLoss(log_input=False, full=True, eps=0.1, reduction="sum"),
     lambda x, y: F.poisson_nll_loss(x, y, log_input=False, full=True, eps=0.1,
                                     reduction="sum"), 2),
    (nn.GaussianNLLLoss(full=True, eps=0.01),
     lambda x, y, v: F.gaussian_nll_loss(x, y, v, full=True, eps=0.01), 3),
    (nn.CosineEmbeddingLoss(margin=0.1, reduction="none"),
     lambda a, b, t: F.cosine_embedding_loss(a, b, t, 0.1, reduction="none"), 3),
    (nn.MarginRankingLoss(margin=0.2), lambda a, b, t: F.margin_ranking_loss(a, b, t, 0.2), 3),
    (nn.HingeEmbeddingLoss(margin=2.0), lambda x, t: F.hinge_embedding_loss(x, t, 2.0), 2),
    (nn.SoftMarginLoss(reduction="sum"), lambda x, t: F.soft_margin_loss(x, t, reduction="sum"),
     2),
    (nn.MultiLabelSoftMarginLoss(weight=oxmera.tensor([1.0, 2.0, 3.0])),
     lambda x, t: F.multilabel_soft_margin_loss(x, t, oxmera.tensor([1.0, 2.0, 3.0])), 2),
    (nn.MultiLabelMarginLoss(), F.multilabel_margin_loss, 2),
    (nn.MultiMarginLoss(p=2, margin=0.5, weight=oxmera.tensor([1.0, 2.0, 3.0])),
     lambda x, t: F.multi_margin_loss(x, t, 2, 0.5, oxmera.tensor([1.0, 2.0, 3.0])), 2),
    (nn.TripletMarginLoss(margin=0.5, p=1, swap=True),
     lambda a, p, n: F.triplet_margin_loss(a, p, n, 0.5, 1, swap=True), 3),
    (nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1), swap=True),
     lambda a, p, n: F.triplet_margin_with_distance_loss(
         a, p, n, distance_function=lambda u, v: F.pairwise_distance(u, v, 1), swap=True), 3),
]


def _module_inputs(module, count):
    x = RNG.standard_normal((2, 3))
    name = type(module).__name__
    if name in ("MultiLabelMarginLoss",):
        return [oxmera.tensor(x), oxmera.tensor([[2, -1, 0], [0, 1, 2]])]
    if name == "MultiMarginLoss":
        return [oxmera.tensor(x), oxmera.tensor([2, 0])]
    if name == "CosineEmbeddingLoss":
        return [oxmera.tensor(x), oxmera.tensor(x[::-1].copy()), oxmera.tensor([1, -1])]
    if name == "MarginRankingLoss":
        return [oxmera.tensor(x[0]), oxmera.tensor(x[1]), oxmera.tensor([1.0, -1.0, 1.0])]
    if name in ("HingeEmbeddingLoss", "SoftMarginLoss"):
        return [oxmera.tensor(x), oxmera.tensor(np.where(x > 0, 1.0, -1.0))]
    if name in ("PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MultiLabelSoftMarginLoss"):
        rest = [oxmera.tensor(np.abs(RNG.standard_normal((2, 3)))) for _ in range(count - 1)]
        return [oxmera.tensor(np.abs(x))] + rest
    return [oxmera.tensor(RNG.standard_normal((2, 3))) for _ in range(count)]


@pytest.mark.parametrize("module, fn, count", MODULES, ids=lambda v: type(v).__name__
                         if isinstance(v, nn.Module) else "")
def test_modules_call_their_functions(module, fn, count):
    inputs = _module_inputs(module, count)
    np.testing.assert_allclose(_np(module(*inputs)), _np(fn(*inputs)), rtol=1e-12)


def test_ctc_module():
    log_probs = oxmera.tensor(RNG.standard_normal((6, 2, 4))).log_softmax(2)
    targets = oxmera.tensor([[1, 2], [3, 3]])
    loss = nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    np.testing.assert_allclose(_np(loss(log_probs, targets, [6, 2], [2, 2])),
                               _np(F.ctc_loss(log_probs, targets, [6, 2], [2, 2],
                                              reduction="sum", zero_infinity=True)))


def test_module_reprs_buffers_and_errors():
    torch = pytest.importorskip("torch")
    for name in ("KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CosineEmbeddingLoss",
                 "MarginRankingLoss", "HingeEmbeddingLoss", "SoftMarginLoss",
                 "MultiLabelSoftMarginLoss", "MultiLabelMarginLoss", "MultiMarginLoss",
                 "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss"):
        assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())
        assert getattr(nn, name)().reduction == getattr(torch.nn, name)().reduction


def test_module_weights_are_buffers_and_options_checked():
    loss = nn.MultiMarginLoss(weight=oxmera.ones(3))
    assert "weight" in loss.state_dict()
    assert nn.KLDivLoss(reduction="batchmean").reduction == "batchmean"
    with pytest.raises(ValueError, match="only p == 1 and p == 2"):
        nn.MultiMarginLoss(p=3)
    with pytest.raises(ValueError, match="margin to be greater than 0"):
        nn.TripletMarginLoss(margin=0)
    with pytest.raises(ValueError, match="margin to be greater than 0"):
        nn.TripletMarginWithDistanceLoss(margin=-1.0)
    with pytest.raises(ValueError, match="'batchmean'"):
        nn.PoissonNLLLoss(reduction="batchmean")
    with pytest.warns(UserWarning, match="deprecated"):
        assert nn.SoftMarginLoss(size_average=False).reduction == "sum"


def test_kl_div_mean_warns_as_torch_and_legacy_warnings_point_at_the_caller():
    x, y = oxmera.tensor(RNG_FIXED[0]), oxmera.tensor(np.abs(RNG_FIXED[1]))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size") as record:
        F.kl_div(x, y)
    assert record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(x, y, reduction="batchmean")
        F.kl_div(x, y, reduction="sum")
    with pytest.warns(UserWarning, match="deprecated") as record:
        F.soft_margin_loss(x, y, size_average=False)
    assert record[0].filename == __file__


def test_ctc_loss_with_no_frames_stays_on_the_graph():
    lp = leaf(np.zeros((3, 2, 4)))
    out = F.ctc_loss(lp, oxmera.tensor([[1], [2]]), [0, 0], [0, 1], reduction="none")
    np.testing.assert_array_equal(_np(out), [0.0, np.inf])
    F.ctc_loss(lp, oxmera.tensor([[1], [2]]), [0, 0], [0, 1], zero_infinity=True).backward()
    np.testing.assert_array_equal(_np(lp.grad), 0.0)


def test_huber_loss_module_and_broadcast_warning():
    x, y = oxmera.tensor(3 * RNG_FIXED[0]), oxmera.tensor(RNG_FIXED[1])
    np.testing.assert_allclose(_np(nn.HuberLoss(delta=0.7)(x, y)),
                               _np(F.smooth_l1_loss(x, y, beta=0.7)) * 0.7, rtol=1e-12)
    with pytest.warns(UserWarning, match=r"target size \(4,\).*input size \(3, 4\)") as record:
        F.huber_loss(x, y[0])
    assert record[0].filename == __file__


@pytest.mark.parametrize("seed", range(8))
def test_ctc_loss_random_lengths_match_torch(seed):
    # random T, N, C, blank, lengths (some targets too long to fit), reduction.
    # No label equals the blank here: PyTorch's loss takes such a label as a
    # label (so does ours, equal values), but its gradient then disagrees with
    # finite differences of its own loss, where ours agrees (the gradient case
    # "ctc_loss:concatenated-none" has one).
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    steps, batch, classes = rng.integers(1, 12), rng.integers(1, 5), rng.integers(2, 6)
    blank = int(rng.integers(0, classes))
    input_lengths = rng.integers(0, steps + 1, batch)
    target_lengths = rng.integers(0, 6, batch)
    targets = rng.integers(0, classes - 1, (batch, max(int(target_lengths.max()), 1)))
    targets[targets >= blank] += 1
    logits = rng.standard_normal((steps, batch, classes))
    reduction = ["none", "mean", "sum"][seed % 3]
    x = torch.tensor(logits, requires_grad=True)
    theirs = torch.nn.functional.ctc_loss(x.log_softmax(2), torch.tensor(targets),
                                          torch.tensor(input_lengths),
                                          torch.tensor(target_lengths), blank=blank,
                                          reduction=reduction, zero_infinity=True)
    y = leaf(logits)
    ours = F.ctc_loss(y.log_softmax(2), oxmera.tensor(targets), oxmera.tensor(input_lengths),
                      oxmera.tensor(target_lengths), blank=blank, reduction=reduction,
                      zero_infinity=True)
    np.testing.assert_allclose(_np(ours), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    theirs.sum().backward()
    ours.sum().backward()
    np.testing.assert_allclose(_np(y.grad), x.grad.numpy(), rtol=1e-8, atol=1e-12)


def test_ctc_loss_label_equal_to_blank_value_as_torch():
    torch = pytest.importorskip("torch")
    logits = RNG.standard_normal((5, 1, 5))
    theirs = torch.nn.functional.ctc_loss(torch.tensor(logits).log_softmax(2),
                                          torch.tensor([[2, 4, 4]]), [5], [3], blank=4)
    ours = F.ctc_loss(oxmera.tensor(logits).log_softmax(2), oxmera.tensor([[2, 4, 4]]), [5], [3],
                      blank=4)
    np.testing.assert_allclose(_np(ours), theirs.item(), rtol=1e-10)
