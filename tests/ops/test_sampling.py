"""Random sampling (``oxmera.ops.sampling``): the argument forms, shapes, dtypes and
errors of PyTorch (compared with torch where installed), the distributions (moments
of many samples drawn with fixed seeds, against closed forms), reproducibility, the
in-place rules of the samplers, ``fork_rng`` and threads.

The numbers themselves are NumPy's streams, not PyTorch's: values are never
compared with torch.
"""
import math
import threading

import numpy as np
import pytest

import oxmera
from oxmera.nn import init

try:
    import torch
except ImportError:        # the suite runs without torch; those comparisons skip
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")
F32, F64, I64 = oxmera.float32, oxmera.float64, oxmera.int64


def _np(t):
    return t.detach().numpy()


def _gen(lib, seed=0):
    return lib.Generator().manual_seed(seed)


# -- forms: shape, dtype and requires_grad as PyTorch's ---------------------------------

# Each form is written once for both libraries: ``lib`` is oxmera or torch.
FORMS = {
    "rand-varargs": lambda lib: lib.rand(2, 3),
    "rand-tuple": lambda lib: lib.rand((2, 3)),
    "rand-list": lambda lib: lib.rand([4]),
    "rand-size-kw": lambda lib: lib.rand(size=(2, 1)),
    "rand-0d": lambda lib: lib.rand(()),
    "rand-empty": lambda lib: lib.rand(0, 3),
    "rand-f64-grad": lambda lib: lib.rand(2, dtype=lib.float64, requires_grad=True),
    "rand-f16": lambda lib: lib.rand(3, dtype=lib.float16),
    "rand-generator-device": lambda lib: lib.rand(2, generator=_gen(lib), device="cpu"),
    "randn-varargs": lambda lib: lib.randn(3, 2),
    "randn-size-kw": lambda lib: lib.randn(size=[5]),
    "randn-grad": lambda lib: lib.randn(2, requires_grad=True),
    "randint-high-size": lambda lib: lib.randint(5, (2, 3)),
    "randint-high-size-kw": lambda lib: lib.randint(5, size=(4,)),
    "randint-low-high-size": lambda lib: lib.randint(-3, 5, (4,)),
    "randint-keywords": lambda lib: lib.randint(low=1, high=5, size=(2,)),
    "randint-high-kw": lambda lib: lib.randint(high=5, size=(2,)),
    "randint-float-grad": lambda lib: lib.randint(0, 5, (2,), dtype=lib.float32,
                                                  requires_grad=True),
    "randint-bool": lambda lib: lib.randint(0, 2, (3,), dtype=lib.bool),
    "randint-uint8": lambda lib: lib.randint(0, 256, (3,), dtype=lib.uint8),
    "randint-generator": lambda lib: lib.randint(3, (2,), generator=_gen(lib)),
    "normal-tensors": lambda lib: lib.normal(lib.zeros(3), lib.ones(3)),
    "normal-broadcast": lambda lib: lib.normal(lib.zeros(2, 1), lib.ones(3)),
    "normal-tensor-mean": lambda lib: lib.normal(lib.zeros(2, 2)),
    "normal-tensor-mean-float-std": lambda lib: lib.normal(lib.zeros(2), 3.0),
    "normal-float-mean-tensor-std": lambda lib: lib.normal(1.0, lib.ones(4)),
    "normal-promotes": lambda lib: lib.normal(lib.zeros(2, dtype=lib.float64), lib.ones(2)),
    "normal-0d": lambda lib: lib.normal(lib.tensor(0.0), lib.tensor(1.0)),
    "normal-size": lambda lib: lib.normal(2.0, 3.0, (2, 3)),
    "normal-size-kw-ints": lambda lib: lib.normal(2, 3, size=(2,)),
    "normal-size-dtype-grad": lambda lib: lib.normal(0.0, 1.0, (2,), dtype=lib.float64,
                                                     requires_grad=True),
    "normal-grad-mean": lambda lib: lib.normal(lib.zeros(3, requires_grad=True), 1.0),
    "normal-grad-std": lambda lib: lib.normal(0.0, lib.ones(3, requires_grad=True)),
    "normal-generator": lambda lib: lib.normal(lib.zeros(2), lib.ones(2), generator=_gen(lib)),
    "rand_like": lambda lib: lib.rand_like(lib.zeros(2, 3, dtype=lib.float64)),
    "rand_like-grad": lambda lib: lib.rand_like(lib.zeros(2, requires_grad=True)),
    "randn_like-dtype-grad": lambda lib: lib.randn_like(lib.zeros(2), dtype=lib.float64,
                                                        requires_grad=True),
    "randint_like-high": lambda lib: lib.randint_like(lib.zeros(2), 5),
    "randint_like-low-high": lambda lib: lib.randint_like(lib.zeros(2, dtype=lib.int32), 1, 5),
    "randint_like-keywords": lambda lib: lib.randint_like(lib.zeros(2), low=1, high=5),
    "randperm": lambda lib: lib.randperm(5),
    "randperm-0": lambda lib: lib.randperm(0),
    "randperm-float-grad": lambda lib: lib.randperm(4, dtype=lib.float32, requires_grad=True),
    "randperm-generator": lambda lib: lib.randperm(n=6, generator=_gen(lib)),
    "multinomial-1d": lambda lib: lib.multinomial(lib.tensor([1.0, 2.0, 3.0]), 2),
    "multinomial-all": lambda lib: lib.multinomial(lib.tensor([1.0, 2.0, 3.0]), 3),
    "multinomial-replacement": lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 5, True),
    "multinomial-2d": lambda lib: lib.multinomial(lib.ones(3, 4, dtype=lib.float64), 2),
    "multinomial-no-rows": lambda lib: lib.multinomial(lib.zeros(0, 3), 1),
    "multinomial-zero-weights-left": lambda lib: lib.multinomial(lib.tensor([1.0, 0.0, 0.0]), 2),
    "multinomial-method": lambda lib: lib.tensor([1.0, 2.0]).multinomial(1, generator=_gen(lib)),
    "bernoulli": lambda lib: lib.bernoulli(lib.tensor([0.5, 0.2])),
    "bernoulli-f64": lambda lib: lib.bernoulli(lib.tensor([0.5, 0.2], dtype=lib.float64)),
    "bernoulli-p": lambda lib: lib.bernoulli(lib.zeros(2, 2), 0.3),
    "bernoulli-p-int": lambda lib: lib.bernoulli(lib.tensor([1, 0]), p=0.5),
    "bernoulli-grad": lambda lib: lib.bernoulli(lib.tensor([0.5, 0.2], requires_grad=True)),
    "bernoulli-method": lambda lib: lib.tensor([0.5]).bernoulli(generator=_gen(lib)),
    "poisson": lambda lib: lib.poisson(lib.tensor([1.0, 2.0])),
    "poisson-f64-generator": lambda lib: lib.poisson(lib.ones(2, dtype=lib.float64), _gen(lib)),
    "poisson-grad": lambda lib: lib.poisson(lib.ones(2, requires_grad=True)),
    "uniform_": lambda lib: lib.zeros(3).uniform_(2, 3),
    "uniform_-equal": lambda lib: lib.zeros(3).uniform_(2, 2),
    "normal_": lambda lib: lib.zeros(3, dtype=lib.float64).normal_(mean=1, std=2),
    "bernoulli_-p": lambda lib: lib.zeros(3).bernoulli_(0.3),
    "bernoulli_-tensor-p": lambda lib: lib.zeros(2, 3).bernoulli_(lib.tensor([0.1, 0.9, 1.0])),
    "bernoulli_-int": lambda lib: lib.zeros(3, dtype=lib.int64).bernoulli_(0.5),
    "bernoulli_-bool": lambda lib: lib.zeros(3, dtype=lib.bool).bernoulli_(0.5),
    "random_": lambda lib: lib.zeros(3).random_(),
    "random_-to": lambda lib: lib.zeros(3).random_(10),
    "random_-to-kw": lambda lib: lib.zeros(3).random_(to=4),
    "random_-from-to": lambda lib: lib.zeros(3, dtype=lib.int8).random_(-5, 5),
    "random_-from-none": lambda lib: lib.zeros(3, dtype=lib.int32).random_(5, None),
    "random_-uint8": lambda lib: lib.zeros(3, dtype=lib.uint8).random_(),
    "random_-bool": lambda lib: lib.zeros(3, dtype=lib.bool).random_(),
    "exponential_": lambda lib: lib.zeros(3).exponential_(lambd=2.0),
    "cauchy_": lambda lib: lib.zeros(3).cauchy_(median=1, sigma=2),
    "log_normal_": lambda lib: lib.zeros(3).log_normal_(1, 2),
    "geometric_": lambda lib: lib.zeros(3).geometric_(0.5),
    "geometric_-int": lambda lib: lib.zeros(3, dtype=lib.uint8).geometric_(0.01),
    "sampler-generator": lambda lib: lib.zeros(3).normal_(generator=_gen(lib)),
}


def _summary(t):
    return tuple(t.shape), str(t.dtype).replace("torch.", ""), t.requires_grad


@needs_torch
@pytest.mark.parametrize("form", sorted(FORMS))
def test_forms_match_pytorch(form):
    ours, theirs = FORMS[form](oxmera), FORMS[form](torch)
    assert _summary(ours) == _summary(theirs)
    assert (ours.grad_fn is None) == (theirs.grad_fn is None)


ERRORS = {
    "rand-int-dtype": lambda lib: lib.rand(2, dtype=lib.int64),
    "rand-negative": lambda lib: lib.rand(-1),
    "rand-float-size": lambda lib: lib.rand(2.0),
    "rand-no-size": lambda lib: lib.rand(),
    "randn_like-int": lambda lib: lib.randn_like(lib.zeros(2, dtype=lib.int64)),
    "rand_like-int": lambda lib: lib.rand_like(lib.zeros(2, dtype=lib.int64)),
    "randint-int-size": lambda lib: lib.randint(5, 2),
    "randint-no-size": lambda lib: lib.randint(5),
    "randint-empty-range": lambda lib: lib.randint(5, 5, (2,)),
    "randint-reversed": lambda lib: lib.randint(5, 1, (2,)),
    "randint-float-high": lambda lib: lib.randint(5.5, (2,)),
    "randint-int-grad": lambda lib: lib.randint(0, 5, (2,), requires_grad=True),
    "randint-uint8-overflow": lambda lib: lib.randint(0, 300, (2,), dtype=lib.uint8),
    "randint-uint8-negative": lambda lib: lib.randint(-1, 2, (2,), dtype=lib.uint8),
    "randperm-negative": lambda lib: lib.randperm(-1),
    "randperm-float": lambda lib: lib.randperm(5.0),
    "randperm-bool": lambda lib: lib.randperm(2, dtype=lib.bool),
    "randperm-uint8-overflow": lambda lib: lib.randperm(300, dtype=lib.uint8),
    "normal-no-size": lambda lib: lib.normal(0.0, 1.0),
    "normal-int-size": lambda lib: lib.normal(0.0, 1.0, size=3),
    "rand-size-twice": lambda lib: lib.rand(2, size=(3,)),
    "normal-nan-in-std": lambda lib: lib.normal(lib.zeros(2), lib.tensor([math.nan, 1.0])),
    "normal-tensor-and-size": lambda lib: lib.normal(lib.zeros(2), 1.0, (3,)),
    "normal-negative-std": lambda lib: lib.normal(0.0, -1.0, (2,)),
    "normal-negative-std-tensor": lambda lib: lib.normal(lib.zeros(2),
                                                         lib.tensor([-1.0, 1.0])),
    "normal-nan-std": lambda lib: lib.normal(lib.zeros(2), float("nan")),
    "normal-no-broadcast": lambda lib: lib.normal(lib.zeros(2), lib.ones(3)),
    "normal-int-mean": lambda lib: lib.normal(lib.zeros(2, dtype=lib.int64), 1.0),
    "normal-int-dtype": lambda lib: lib.normal(2, 3, size=(2,), dtype=lib.int64),
    "multinomial-too-many": lambda lib: lib.multinomial(lib.tensor([1.0, 2.0, 3.0]), 4),
    "multinomial-zero-row": lambda lib: lib.multinomial(lib.tensor([[1.0, 2.0], [0.0, 0.0]]),
                                                        1),
    "multinomial-zero-row-replacement": lambda lib: lib.multinomial(lib.zeros(3), 2, True),
    "multinomial-negative": lambda lib: lib.multinomial(lib.tensor([1.0, -2.0, 3.0]), 2),
    "multinomial-inf": lambda lib: lib.multinomial(lib.tensor([1.0, math.inf, 3.0]), 2),
    "multinomial-nan": lambda lib: lib.multinomial(lib.tensor([1.0, math.nan, 3.0]), 2),
    "multinomial-zero-samples": lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 0),
    "multinomial-negative-samples": lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), -1),
    "multinomial-3d": lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
    "multinomial-0d": lambda lib: lib.multinomial(lib.ones(()), 1),
    "multinomial-int": lambda lib: lib.multinomial(lib.tensor([1, 2, 3]), 1),
    "multinomial-float-samples": lambda lib: lib.multinomial(lib.tensor([1.0, 2.0]), 1.0),
    "bernoulli-above-one": lambda lib: lib.bernoulli(lib.tensor([1.5, 0.2])),
    "bernoulli-negative": lambda lib: lib.bernoulli(lib.tensor([-0.5, 0.2])),
    "bernoulli-nan": lambda lib: lib.bernoulli(lib.tensor([math.nan, 0.2])),
    "bernoulli-bad-p": lambda lib: lib.bernoulli(lib.zeros(2), p=1.3),
    "bernoulli-int": lambda lib: lib.bernoulli(lib.tensor([1, 0])),
    "poisson-negative": lambda lib: lib.poisson(lib.tensor([-1.0, 2.0])),
    "poisson-nan": lambda lib: lib.poisson(lib.tensor([math.nan, 2.0])),
    "poisson-int": lambda lib: lib.poisson(lib.tensor([1, 2])),
    "uniform_-reversed": lambda lib: lib.zeros(3).uniform_(3, 2),
    "uniform_-infinite": lambda lib: lib.zeros(3).uniform_(-math.inf, 2),
    "uniform_-int": lambda lib: lib.zeros(3, dtype=lib.int64).uniform_(),
    "uniform_-leaf": lambda lib: lib.zeros(3, requires_grad=True).uniform_(),
    "normal_-negative-std": lambda lib: lib.zeros(3).normal_(1, -2),
    "normal_-int": lambda lib: lib.zeros(3, dtype=lib.int64).normal_(),
    "normal_-leaf": lambda lib: lib.zeros(3, requires_grad=True).normal_(),
    "bernoulli_-bad-p": lambda lib: lib.zeros(3).bernoulli_(1.3),
    "bernoulli_-bad-tensor-p": lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0.1, 2, 0.3])),
    "bernoulli_-int-tensor-p": lambda lib: lib.zeros(3).bernoulli_(lib.tensor([1, 0, 1])),
    "bernoulli_-p-shape": lambda lib: lib.zeros(3).bernoulli_(lib.tensor([0.1, 0.2])),
    "bernoulli_-p-larger": lambda lib: lib.zeros(1).bernoulli_(lib.tensor([0.1, 0.9, 1.0])),
    "random_-reversed": lambda lib: lib.zeros(3).random_(10, 5),
    "random_-to-zero": lambda lib: lib.zeros(3).random_(0),
    "random_-uint8-negative": lambda lib: lib.zeros(3, dtype=lib.uint8).random_(-5, 5),
    "random_-uint8-overflow": lambda lib: lib.zeros(3, dtype=lib.uint8).random_(300),
    "random_-bool-overflow": lambda lib: lib.zeros(3, dtype=lib.bool).random_(3),
    "random_-half-overflow": lambda lib: lib.zeros(3, dtype=lib.float16).random_(100000),
    "random_-float-bound": lambda lib: lib.zeros(3).random_(1.5),
    "exponential_-zero": lambda lib: lib.zeros(3).exponential_(0.0),
    "exponential_-negative": lambda lib: lib.zeros(3).exponential_(-1.0),
    "cauchy_-zero-sigma": lambda lib: lib.zeros(3).cauchy_(1, 0),
    "log_normal_-zero-std": lambda lib: lib.zeros(3).log_normal_(1, 0),
    "log_normal_-int": lambda lib: lib.zeros(3, dtype=lib.int64).log_normal_(),
    "geometric_-one": lambda lib: lib.zeros(3).geometric_(1),
    "geometric_-zero": lambda lib: lib.zeros(3).geometric_(0),
    "geometric_-missing-p": lambda lib: lib.zeros(3).geometric_(),
    "geometric_-bool": lambda lib: lib.zeros(3, dtype=lib.bool).geometric_(0.5),
    "sampler-expanded": lambda lib: lib.zeros(3).expand(2, 3).normal_(),
}


def _error_of(make, lib):
    with pytest.raises(Exception) as info:
        make(lib)
    return info.type


@needs_torch
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_pytorch(case):
    assert _error_of(ERRORS[case], oxmera) is _error_of(ERRORS[case], torch)


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_a_refused_call_draws_nothing(case):
    oxmera.manual_seed(5)
    with pytest.raises((TypeError, RuntimeError, NotImplementedError)):
        ERRORS[case](oxmera)
    after = oxmera.rand(4).tolist()
    oxmera.manual_seed(5)
    assert oxmera.rand(4).tolist() == after


@pytest.mark.parametrize("make, message", [
    (lambda: oxmera.multinomial(oxmera.tensor([1.0, 2.0, 3.0]), 4),
     r"cannot sample n_sample > prob_dist.size\(-1\) samples without replacement"),
    (lambda: oxmera.multinomial(oxmera.tensor([[1.0], [0.0]]), 1),
     r"invalid multinomial distribution \(sum of probabilities <= 0\)"),
    (lambda: oxmera.multinomial(oxmera.tensor([1.0, -1.0]), 1),
     "probability tensor contains either `inf`, `nan` or element < 0"),
    (lambda: oxmera.multinomial(oxmera.tensor([1.0]), 0), "cannot sample n_sample <= 0 samples"),
    (lambda: oxmera.multinomial(oxmera.ones(1, 1, 1), 1), "prob_dist must be 1 or 2 dim"),
    (lambda: oxmera.multinomial(oxmera.tensor([1, 2]), 1),
     "only supports floating-point dtypes for input"),
    (lambda: oxmera.randint(5, 1, (2,)), "expects 'from' to be less than 'to'"),
    (lambda: oxmera.zeros(3, dtype=oxmera.uint8).random_(300), "to - 1 = 299 is out of bounds"),
    (lambda: oxmera.normal(0.0, -1.0, (2,)), r"expects std >= 0.0, but found std -1"),
    (lambda: oxmera.zeros(3).geometric_(1), r"expects p to be in \(0, 1\)"),
    (lambda: oxmera.rand(2, device="cuda"), "oxmera computes on the CPU"),
    (lambda: oxmera.randperm(3, device="mps"), "oxmera computes on the CPU"),
    (lambda: oxmera.rand(2, out=oxmera.zeros(2)), "out= is not supported"),
    (lambda: oxmera.normal(oxmera.zeros(2), out=oxmera.zeros(2)), "out= is not supported"),
])
def test_messages_name_the_op_and_the_fault(make, message):
    with pytest.raises((RuntimeError, TypeError)) as info:
        make()
    assert info.match(message)


# -- distributions: moments of many samples with fixed seeds -----------------------------

N = 200_000


def _moments(values, mean, var, rel=0.02, abs_=0.01):
    values = np.asarray(values, dtype=np.float64).ravel()
    assert values.mean() == pytest.approx(mean, rel=rel, abs=abs_)
    assert values.var() == pytest.approx(var, rel=4 * rel, abs=abs_)


def test_continuous_distributions():
    g = oxmera.Generator().manual_seed(1234)
    u = _np(oxmera.rand(N, generator=g))
    assert u.min() >= 0 and u.max() < 1
    _moments(u, 0.5, 1 / 12)
    _moments(_np(oxmera.randn(N, generator=g, dtype=F64)), 0.0, 1.0)
    _moments(_np(oxmera.normal(3.0, 2.0, (N,), generator=g)), 3.0, 4.0)
    mean = oxmera.tensor([-5.0, 5.0]).reshape(2, 1)
    n = _np(oxmera.normal(mean, oxmera.full((N,), 0.5), generator=g))
    _moments(n[0], -5.0, 0.25)
    _moments(n[1], 5.0, 0.25)
    _moments(_np(oxmera.normal(oxmera.zeros(N), 3.0, generator=g)), 0.0, 9.0)
    _moments(_np(oxmera.normal(1.0, oxmera.full((N,), 2.0), generator=g)), 1.0, 4.0)
    x = oxmera.zeros(N, dtype=F64)
    _moments(_np(x.uniform_(-2, 4, generator=g)), 1.0, 3.0)
    assert _np(x).min() >= -2 and _np(x).max() < 4
    _moments(_np(x.normal_(-1, 0.5, generator=g)), -1.0, 0.25)
    _moments(_np(x.exponential_(4.0, generator=g)), 0.25, 1 / 16)
    _moments(_np(x.log_normal_(0.0, 0.5, generator=g)), math.exp(0.125),
             (math.exp(0.25) - 1) * math.exp(0.25))
    c = _np(x.cauchy_(2.0, 3.0, generator=g))
    assert np.median(c) == pytest.approx(2.0, abs=0.05)
    q1, q3 = np.percentile(c, [25, 75])          # the quartiles are median -+ sigma
    assert (q1, q3) == pytest.approx((-1.0, 5.0), abs=0.1)


def test_rand_in_low_precision_stays_below_one():
    # float64 draws just below 1 round up to 1.0 in float16: they must not.
    u = _np(oxmera.rand(N, dtype=oxmera.float16, generator=oxmera.Generator().manual_seed(0)))
    assert u.max() < 1 and u.min() >= 0
    x = oxmera.zeros(N, dtype=oxmera.float16).uniform_(0, 0.001)
    assert _np(x).max() < np.float16(0.001)


def test_discrete_distributions():
    g = oxmera.Generator().manual_seed(99)
    r = _np(oxmera.randint(-2, 3, (N,), generator=g))
    assert set(np.unique(r)) == {-2, -1, 0, 1, 2}
    _moments(r, 0.0, 2.0)
    _moments(_np(oxmera.bernoulli(oxmera.full((N,), 0.3), generator=g)), 0.3, 0.21)
    _moments(_np(oxmera.bernoulli(oxmera.zeros(N), p=0.8, generator=g)), 0.8, 0.16)
    p = oxmera.tensor([0.1, 0.9]).expand(N, 2).contiguous()
    b = _np(oxmera.zeros(N, 2).bernoulli_(p, generator=g))
    _moments(b[:, 0], 0.1, 0.09)
    _moments(b[:, 1], 0.9, 0.09)
    _moments(_np(oxmera.zeros(N).bernoulli_(generator=g)), 0.5, 0.25)
    _moments(_np(oxmera.poisson(oxmera.full((N,), 4.5), generator=g)), 4.5, 4.5)
    _moments(_np(oxmera.zeros(N, dtype=I64).geometric_(0.25, generator=g)), 4.0, 0.75 / 0.0625)
    d = _np(oxmera.zeros(N).random_(3, 7, generator=g))
    assert set(np.unique(d)) == {3, 4, 5, 6}
    _moments(d, 4.5, 1.25)
    _moments(_np(oxmera.zeros(N, dtype=oxmera.bool).random_(generator=g)), 0.5, 0.25)
    u8 = _np(oxmera.zeros(N, dtype=oxmera.uint8).random_(generator=g))
    assert u8.max() == 255 and u8.min() == 0
    top = 2 ** 24                                 # float32's no-argument range: [0, 2**24]
    f = _np(oxmera.zeros(N).random_(generator=g))
    assert f.max() <= top and f.mean() == pytest.approx(top / 2, rel=0.02)
    i64 = _np(oxmera.zeros(N, dtype=I64).random_(generator=g))
    assert i64.min() >= 0 and i64.mean() == pytest.approx(2.0 ** 62, rel=0.02)


def test_randperm_is_a_uniform_permutation():
    g = oxmera.Generator().manual_seed(3)
    firsts = []
    for _ in range(4000):
        p = _np(oxmera.randperm(5, generator=g))
        assert sorted(p) == [0, 1, 2, 3, 4]
        firsts.append(p[0])
    counts = np.bincount(firsts, minlength=5) / 4000
    np.testing.assert_allclose(counts, 0.2, atol=0.03)


def test_multinomial_frequencies():
    g = oxmera.Generator().manual_seed(8)
    weights = oxmera.tensor([[1.0, 0.0, 3.0, 4.0], [0.0, 0.0, 0.0, 2.0]])
    draws = _np(oxmera.multinomial(weights, 40_000, replacement=True, generator=g))
    assert draws.shape == (2, 40_000)
    np.testing.assert_allclose(np.bincount(draws[0], minlength=4) / 40_000,
                               [0.125, 0.0, 0.375, 0.5], atol=0.01)
    assert set(np.unique(draws[1])) == {3}
    # Without replacement: distinct per row, the first pick distributed as the weights,
    # categories of weight 0 only after every positive one.
    picks = np.array([_np(oxmera.multinomial(weights[0], 3, generator=g)) for _ in range(8000)])
    assert all(len(set(row)) == 3 for row in picks)
    assert not (picks == 1).any()
    np.testing.assert_allclose(np.bincount(picks[:, 0], minlength=4) / 8000,
                               [0.125, 0.0, 0.375, 0.5], atol=0.02)
    everything = _np(oxmera.multinomial(weights[0], 4, generator=g))
    assert sorted(everything) == [0, 1, 2, 3] and everything[-1] == 1
    rows = _np(oxmera.multinomial(oxmera.ones(50, 6), 6, generator=g))
    assert all(sorted(row) == list(range(6)) for row in rows)


# -- reproducibility -------------------------------------------------------------------

SAMPLERS = {
    "rand": lambda g: oxmera.rand(5, generator=g),
    "randn": lambda g: oxmera.randn(5, generator=g),
    "randint": lambda g: oxmera.randint(0, 100, (5,), generator=g),
    "normal": lambda g: oxmera.normal(oxmera.zeros(5), 1.0, generator=g),
    "normal-size": lambda g: oxmera.normal(0.0, 1.0, (5,), generator=g),
    "rand_like": lambda g: oxmera.rand_like(oxmera.zeros(5), generator=g),
    "randn_like": lambda g: oxmera.randn_like(oxmera.zeros(5), generator=g),
    "randint_like": lambda g: oxmera.randint_like(oxmera.zeros(5), 100, generator=g),
    "randperm": lambda g: oxmera.randperm(10, generator=g),
    "multinomial": lambda g: oxmera.multinomial(oxmera.ones(10), 5, generator=g),
    "multinomial-replacement": lambda g: oxmera.multinomial(oxmera.ones(10), 5, True,
                                                            generator=g),
    "bernoulli": lambda g: oxmera.bernoulli(oxmera.full((5,), 0.5), generator=g),
    "poisson": lambda g: oxmera.poisson(oxmera.full((5,), 3.0), generator=g),
    "uniform_": lambda g: oxmera.zeros(5).uniform_(generator=g),
    "normal_": lambda g: oxmera.zeros(5).normal_(generator=g),
    "bernoulli_": lambda g: oxmera.zeros(5).bernoulli_(generator=g),
    "random_": lambda g: oxmera.zeros(5).random_(generator=g),
    "exponential_": lambda g: oxmera.zeros(5).exponential_(generator=g),
    "cauchy_": lambda g: oxmera.zeros(5).cauchy_(generator=g),
    "log_normal_": lambda g: oxmera.zeros(5).log_normal_(generator=g),
    "geometric_": lambda g: oxmera.zeros(5).geometric_(0.3, generator=g),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_same_seed_same_numbers(name):
    sample = SAMPLERS[name]
    first = [_np(sample(oxmera.Generator().manual_seed(21))).tolist() for _ in range(2)]
    assert first[0] == first[1]
    # with no generator: the default one, which manual_seed seeds
    oxmera.manual_seed(21)
    default = _np(sample(None)).tolist()
    oxmera.manual_seed(21)
    assert _np(sample(None)).tolist() == default
    # an explicit generator leaves the default one alone
    oxmera.manual_seed(21)
    sample(oxmera.Generator().manual_seed(1))
    assert _np(sample(None)).tolist() == default
    # and different seeds draw different numbers (a permutation of 10 too)
    assert _np(sample(oxmera.Generator().manual_seed(22))).tolist() != first[0]


def test_threads_with_their_own_generators_draw_the_same_numbers():
    results = {}

    def draw(k):
        g = oxmera.Generator().manual_seed(2024)
        out = []
        for _ in range(50):
            for name in sorted(SAMPLERS):
                out.append(_np(SAMPLERS[name](g)).astype(np.float64))
        results[k] = np.concatenate(out)

    threads = [threading.Thread(target=draw, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(1, 4):
        np.testing.assert_array_equal(results[k], results[0])


def test_fork_rng_restores_the_default_generator():
    oxmera.manual_seed(4)
    with oxmera.random.fork_rng():
        inside = oxmera.randn(3).tolist()
        oxmera.manual_seed(100)             # even a reseed inside is undone
        oxmera.rand(10)
    assert oxmera.randn(3).tolist() == inside
    assert oxmera.initial_seed() == 4
    oxmera.manual_seed(4)
    with pytest.raises(ZeroDivisionError):
        with oxmera.random.fork_rng(devices=[]):
            oxmera.rand(5)
            1 / 0
    assert oxmera.randn(3).tolist() == inside
    with oxmera.random.fork_rng(enabled=False):
        oxmera.rand(1)
    assert oxmera.randn(3).tolist() != inside

    @oxmera.random.fork_rng()
    def draw():
        return oxmera.rand(2).tolist()
    assert draw() == draw()
    with pytest.raises(RuntimeError, match="CPU"):
        with oxmera.random.fork_rng(devices=[0]):
            pass


def test_random_module_has_torch_random_names():
    names = {"manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
             "fork_rng", "default_generator"}
    assert names <= set(oxmera.random.__all__)
    if torch is not None:
        assert all(hasattr(torch.random, n) for n in names)
    assert oxmera.random.default_generator is oxmera.default_generator


def test_generators_pickle_and_copy_with_their_state():
    import copy
    import pickle
    g = oxmera.Generator().manual_seed(13)
    oxmera.rand(3, generator=g)
    for twin in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert twin.initial_seed() == 13
        assert oxmera.randn(4, generator=twin).tolist() == \
            oxmera.randn(4, generator=copy.deepcopy(g)).tolist()


def test_a_reseed_reaches_a_numpy_generator_taken_before():
    # samplers and data loaders may hold the NumPy generator behind an oxmera one
    g = oxmera.Generator().manual_seed(1)
    held = oxmera.random.numpy_generator(g, "test")
    expected = np.random.Generator(np.random.PCG64(9)).random(3)
    g.manual_seed(9)
    np.testing.assert_array_equal(held.random(3), expected)
    state = g.get_state()
    a = held.random(2)
    g.set_state(state)
    np.testing.assert_array_equal(held.random(2), a)


# -- autograd: samplers record no gradient, in-place rules ------------------------------------

def test_samples_from_tensors_that_require_grad_get_a_zero_gradient():
    mean = oxmera.zeros(2, 1, requires_grad=True)
    std = oxmera.ones(3, requires_grad=True)
    out = oxmera.normal(mean, std)
    assert out.shape == (2, 3) and out.requires_grad
    out.sum().backward()
    assert mean.grad.tolist() == [[0.0], [0.0]] and std.grad.tolist() == [0.0, 0.0, 0.0]
    p = oxmera.tensor([0.2, 0.7], requires_grad=True)
    (oxmera.bernoulli(p) * 3).sum().backward()
    assert p.grad.tolist() == [0.0, 0.0]
    rate = oxmera.tensor([1.0, 2.0], requires_grad=True)
    oxmera.poisson(rate * 2).sum().backward()
    assert rate.grad.tolist() == [0.0, 0.0]
    with oxmera.no_grad():
        assert not oxmera.normal(mean, std).requires_grad
    if torch is not None:
        m = torch.zeros(2, 1, requires_grad=True)
        torch.normal(m, torch.ones(3)).sum().backward()
        assert m.grad.tolist() == [[0.0], [0.0]]


@pytest.mark.parametrize("name", sorted(n for n in SAMPLERS if n.endswith("_")))
def test_in_place_samplers_follow_the_in_place_rules(name):
    method = name
    args = (0.3,) if name == "geometric_" else ()
    x = oxmera.zeros(4)
    version = x._version
    assert getattr(x, method)(*args) is x
    assert x._version == version + 1
    leaf = oxmera.zeros(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        getattr(leaf, method)(*args)
    assert leaf.tolist() == [0.0] * 4 and leaf._version == 0
    with oxmera.no_grad():
        getattr(leaf, method)(*args)
    assert leaf._version == 1 and leaf.is_leaf and leaf.grad_fn is None
    # a tensor with history: its old values get a zero gradient
    w = oxmera.ones(4, requires_grad=True)
    y = w * 2
    getattr(y, method)(*args)
    assert y.grad_fn is not None
    (y * 5).sum().backward()
    assert w.grad.tolist() == [0.0] * 4
    # through a view: the base keeps the gradient outside the written region
    w2 = oxmera.ones(4, requires_grad=True)
    z = w2 * 3
    getattr(z[1:3], method)(*args)
    z.sum().backward()
    assert w2.grad.tolist() == [3.0, 0.0, 0.0, 3.0]


def test_a_sampler_into_a_saved_tensor_breaks_the_backward_that_needs_it():
    w = oxmera.ones(3, requires_grad=True)
    y = w * 1
    loss = (y * y).sum()
    y.normal_()
    with pytest.raises(RuntimeError, match="version"):
        loss.backward()


def test_creation_samples_do_not_require_grad_unless_asked():
    for t in (oxmera.rand(2), oxmera.randn(2), oxmera.normal(0.0, 1.0, (2,)),
              oxmera.randint(3, (2,)), oxmera.randperm(3), oxmera.rand_like(oxmera.zeros(2)),
              oxmera.multinomial(oxmera.ones(3, requires_grad=True), 2)):
        assert not t.requires_grad and t.grad_fn is None
    x = oxmera.randn(3, requires_grad=True)
    assert x.is_leaf and x.requires_grad


# -- nn.init and dropout with generators -----------------------------------------------------

@pytest.mark.parametrize("initializer, args", [
    (init.uniform_, ()), (init.normal_, ()), (init.trunc_normal_, ()),
    (init.orthogonal_, ()), (init.xavier_uniform_, ()), (init.xavier_normal_, ()),
    (init.kaiming_uniform_, ()), (init.kaiming_normal_, ())])
def test_nn_init_takes_an_oxmera_generator(initializer, args):
    a = initializer(oxmera.empty(4, 3), *args, generator=oxmera.Generator().manual_seed(6))
    b = initializer(oxmera.empty(4, 3), *args, generator=oxmera.Generator().manual_seed(6))
    np.testing.assert_array_equal(_np(a), _np(b))
    oxmera.manual_seed(6)
    c = initializer(oxmera.empty(4, 3), *args)
    np.testing.assert_array_equal(_np(c), _np(a))   # the same stream as the default's


def test_dropout_draws_from_the_default_generator():
    x = oxmera.ones(1000)
    oxmera.manual_seed(2)
    a = _np(oxmera.nn.functional.dropout(x, 0.5))
    oxmera.manual_seed(2)
    b = _np(oxmera.nn.functional.dropout(x, 0.5))
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == {0.0, 2.0} and abs((a == 0).mean() - 0.5) < 0.06
