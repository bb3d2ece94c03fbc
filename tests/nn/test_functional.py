"""``oxmera.nn.functional`` (but the losses, in ``test_losses.py``): forward
values against NumPy closed forms, gradients of the composed functions to
second order, softmax stability, dropout's seeded masks, batch_norm's running
statistics, embedding's gradients, pad against ``np.pad``, errors.

The fused ops' gradient cases and the PyTorch comparisons of every function
are in ``tests/ops/_cases_nn.py``.
"""
import doctest
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oxmera
import oxmera.nn.functional as F
from oxmera.autograd import grad, gradcheck, gradgradcheck
from ops._helpers import leaf, unchanged

from ._gradient_cases import CASES

F32, F64 = oxmera.float32, oxmera.float64


def _np(t):
    return t.detach().numpy()


def _erf(x):
    return np.vectorize(math.erf)(x)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


# -- gradients of the composed functions -----------------------------------------------------

def _outputs(result):
    return (result,) if isinstance(result, oxmera.Tensor) else tuple(result)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_gradients(case):
    inputs = case.build()
    assert gradcheck(case.fn, inputs, **case.tolerances)
    if case.second_order:
        assert gradgradcheck(case.fn, inputs, **case.tolerances)
    # A backward runs (gradcheck runs none for size-0 inputs), and gives each
    # input a finite gradient of its own shape and dtype.
    targets = [t for t in inputs if isinstance(t, oxmera.Tensor) and t.requires_grad]
    out = _outputs(case.fn(*inputs))[0]
    for t, g in zip(targets, grad(out.sum(), targets, allow_unused=True)):
        if g is not None:
            assert g.shape == t.shape and g.dtype == t.dtype
            assert np.isfinite(_np(g)).all()


def test_every_function_has_gradient_cases():
    covered = {case.id.split(":")[0].split("-")[0] for case in CASES}
    composed = set(F.__all__) - {"softmax", "log_softmax", "softplus", "binary_cross_entropy",
                                 "one_hot", "conv1d", "conv2d", "max_pool2d", "avg_pool2d"}
    assert composed <= covered, composed - covered


def test_docstring_examples_run():
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(F, F.__name__):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 20 and result.failed == 0


def test_every_function_is_exported():
    for name in F.__all__:
        assert callable(getattr(F, name)), name
    assert oxmera.softmax is F.softmax and oxmera.log_softmax is F.log_softmax
    assert not hasattr(oxmera, "softplus")     # torch has no torch.softplus either


# -- activations ---------------------------------------------------------------------------

X = np.linspace(-4, 4, 17).reshape(1, 17)

ACTIVATIONS = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "leaky_relu": (F.leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x)),
    "leaky_relu-slope": (lambda x: F.leaky_relu(x, negative_slope=0.3),
                         lambda x: np.where(x > 0, x, 0.3 * x)),
    "elu": (F.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "elu-alpha": (lambda x: F.elu(x, alpha=2.0), lambda x: np.where(x > 0, x, 2 * np.expm1(x))),
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "gelu-tanh": (lambda x: F.gelu(x, approximate="tanh"),
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "silu": (F.silu, lambda x: x * _sigmoid(x)),
    "softplus": (F.softplus, lambda x: np.log1p(np.exp(x))),
    "softplus-beta": (lambda x: F.softplus(x, beta=2, threshold=3),
                      lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2)),
    "sigmoid": (F.sigmoid, _sigmoid),
    "tanh": (F.tanh, np.tanh),
}


@pytest.mark.parametrize("dtype", [F32, F64])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activations_match_closed_forms(name, dtype):
    fn, reference = ACTIVATIONS[name]
    out = fn(oxmera.tensor(X, dtype=dtype))
    assert out.dtype == dtype and out.shape == X.shape
    np.testing.assert_allclose(_np(out), reference(X), rtol=1e-6 if dtype == F64 else 2e-6,
                               atol=1e-7)


@pytest.mark.parametrize("name", ["elu", "softplus", "silu", "gelu", "leaky_relu"])
def test_activations_are_finite_for_huge_inputs(name):
    x = leaf([-1e4, -100.0, 100.0, 1e4], dtype=F32)
    out = ACTIVATIONS[name][0](x)
    out.sum().backward()
    assert np.isfinite(_np(out)).all() and np.isfinite(_np(x.grad)).all()
    np.testing.assert_allclose(_np(out)[2:], [100.0, 1e4], rtol=1e-6)


def test_softplus_keeps_tiny_values():
    # log(1 + exp(x)) in float32 would round 1 + exp(-50) to 1 and give 0.
    out = F.softplus(oxmera.tensor([-50.0, -20.0], dtype=F32))
    np.testing.assert_allclose(_np(out), np.exp([-50.0, -20.0]), rtol=1e-6)


def test_softplus_gradient_is_sigmoid():
    x = leaf(X)
    F.softplus(x, beta=1.5, threshold=1.0).sum().backward()
    expected = np.where(1.5 * X > 1.0, 1.0, _sigmoid(1.5 * X))
    np.testing.assert_allclose(_np(x.grad), expected, rtol=1e-12)


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="gelu.*'fast'"):
        F.gelu(oxmera.ones(2), approximate="fast")


INPLACE = {
    "relu": lambda x, inplace: F.relu(x, inplace=inplace),
    "leaky_relu": lambda x, inplace: F.leaky_relu(x, 0.5, inplace=inplace),
    "elu": lambda x, inplace: F.elu(x, inplace=inplace),
    "silu": lambda x, inplace: F.silu(x, inplace=inplace),
    "dropout": lambda x, inplace: F.dropout(x, 0.5, inplace=inplace),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_functions_write_into_their_input(name):
    values = np.linspace(-2, 2, 8)
    oxmera.manual_seed(1)
    reference = leaf(values)
    expected = INPLACE[name](reference, False)
    expected.sum().backward()
    x = leaf(values)
    y = x * 1
    oxmera.manual_seed(1)
    out = INPLACE[name](y, True)
    assert out is y and y._version > 0
    np.testing.assert_array_equal(_np(y), _np(expected))
    # differentiated through the copy: the function's own gradient
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), _np(reference.grad), rtol=1e-12)


def test_inplace_on_a_leaf_that_requires_grad_raises():
    x = leaf([-1.0, 2.0])
    with pytest.raises(RuntimeError, match="leaf"):
        F.relu(x, inplace=True)
    assert x.tolist() == [-1.0, 2.0]


# -- softmax and log_softmax ------------------------------------------------------------------

def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_softmax_matches_numpy(dim):
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    np.testing.assert_allclose(_np(F.softmax(oxmera.tensor(x), dim)), _softmax(x, dim),
                               rtol=1e-12)
    np.testing.assert_allclose(_np(F.log_softmax(oxmera.tensor(x), dim=dim)),
                               np.log(_softmax(x, dim)), rtol=1e-12)
    np.testing.assert_allclose(_np(oxmera.tensor(x).softmax(dim)), _softmax(x, dim), rtol=1e-12)


def test_softmax_rows_sum_to_one_in_float32():
    x = np.random.default_rng(1).standard_normal((64, 1000)).astype(np.float32) * 30
    out = F.softmax(oxmera.tensor(x), dim=1)
    assert out.dtype == F32
    np.testing.assert_allclose(_np(out).sum(axis=1, dtype=np.float64), 1.0, atol=2e-6)


@pytest.mark.parametrize("dtype", [F32, F64])
def test_softmax_is_stable_for_logits_of_magnitude_1e4(dtype):
    x = leaf([[1e4, 0.0, -1e4], [-1e4, -1e4, -1e4], [1e4, 1e4, 1e4 - 1.0]], dtype=dtype)
    out = F.softmax(x, 1)
    log_out = F.log_softmax(x, 1)
    assert np.isfinite(_np(out)).all() and np.isfinite(_np(log_out)).all()
    np.testing.assert_allclose(_np(out)[0], [1, 0, 0])
    np.testing.assert_allclose(_np(out)[1], [1 / 3] * 3, rtol=1e-6)
    np.testing.assert_allclose(_np(log_out)[0], [0, -1e4, -2e4])
    e = math.exp(-1.0)
    np.testing.assert_allclose(_np(log_out)[2], np.log([1, 1, e]) - np.log(2 + e), rtol=1e-6)
    (log_out * oxmera.tensor(np.arange(9.0).reshape(3, 3), dtype=dtype)).sum().backward()
    assert np.isfinite(_np(x.grad)).all()


def test_softmax_dtype_argument():
    x = oxmera.tensor([[1, 2, 3]])
    out = F.softmax(x, 1, dtype=F64)
    assert out.dtype == F64
    np.testing.assert_allclose(_np(out), _softmax(np.array([[1.0, 2, 3]]), 1), rtol=1e-12)
    y = leaf([[1.0, 2.0]], dtype=F32)
    out = F.log_softmax(y, dim=1, dtype=F64)
    assert out.dtype == F64
    out.sum().backward()
    assert y.grad.dtype == F32


def test_softmax_needs_a_float_input():
    with pytest.raises(TypeError, match="softmax.*int64"):
        F.softmax(oxmera.tensor([1, 2]), 0)


def test_softmax_implicit_dim_warns_like_pytorch():
    x = oxmera.ones(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax") as record:
        out = F.softmax(x)
    assert record[0].filename == __file__
    np.testing.assert_allclose(_np(out), 1 / 3)
    with pytest.warns(UserWarning, match="log_softmax") as record:
        assert F.log_softmax(oxmera.ones(3)).shape == (3,)
    assert record[0].filename == __file__


def test_an_ops_deprecation_warning_points_at_the_caller():
    # Op functions run no Python frame of their own: a warning raised in an
    # op's forward counts its frames from there (binary_cross_entropy is an op).
    x, y = oxmera.tensor([0.5, 0.25]), oxmera.tensor([1.0, 0.0])
    with pytest.warns(UserWarning, match="size_average and reduce are deprecated") as record:
        F.binary_cross_entropy(x, y, size_average=False)
    assert record[0].filename == __file__


def test_softmax_dim_out_of_range():
    x = leaf(np.ones((2, 3)))
    with unchanged(x):
        with pytest.raises(IndexError, match="softmax.*range"):
            F.softmax(x, 2)


def test_softmax_of_0d_and_size_0():
    assert F.softmax(oxmera.tensor(3.0), 0).item() == 1.0
    assert F.log_softmax(oxmera.tensor(3.0), -1).item() == 0.0
    assert F.softmax(oxmera.zeros(0, 3), 1).shape == (0, 3)


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_softmax_property(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(len(shape)).standard_normal(shape) * 50
    out = _np(F.softmax(oxmera.tensor(x), dim))
    np.testing.assert_allclose(out.sum(axis=dim), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(_np(F.log_softmax(oxmera.tensor(x), dim))), out,
                               rtol=1e-10, atol=1e-300)


# -- linear --------------------------------------------------------------------------------

def test_linear_matches_numpy():
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4)), rng.standard_normal(5)
    out = F.linear(oxmera.tensor(x), oxmera.tensor(w), oxmera.tensor(b))
    np.testing.assert_allclose(_np(out), x @ w.T + b, rtol=1e-12)
    assert F.linear(oxmera.tensor(x), oxmera.tensor(w)).shape == (2, 3, 5)
    assert F.linear(oxmera.ones(4, dtype=F32), oxmera.ones(5, 4, dtype=F32)).dtype == F32


def test_linear_shape_errors_name_the_shapes():
    x, w = leaf(np.ones((2, 3))), leaf(np.ones((5, 4)))
    with unchanged(x, w):
        with pytest.raises(ValueError, match=r"linear.*\(2, 3\).*\(5, 4\)"):
            F.linear(x, w)
        with pytest.raises(RuntimeError, match=r"linear.*bias.*\(3,\)"):
            F.linear(x, leaf(np.ones((5, 3))), leaf(np.ones(3)))


# -- dropout -------------------------------------------------------------------------------

def test_dropout_is_seeded_and_scaled():
    x = oxmera.ones(2000, dtype=F64)
    oxmera.manual_seed(3)
    a = _np(F.dropout(x, 0.3))
    oxmera.manual_seed(3)
    b = _np(F.dropout(x, 0.3))
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) == {0.0, 1 / 0.7}
    assert abs((a == 0).mean() - 0.3) < 0.05
    assert not np.array_equal(a, _np(F.dropout(x, 0.3)))    # the generator moved on


def test_dropout_gradient_is_the_mask():
    x = leaf(np.arange(1.0, 11.0))
    out = F.dropout(x, 0.5)
    out.sum().backward()
    np.testing.assert_array_equal(_np(x.grad), _np(out) / np.arange(1.0, 11.0))


def test_dropout_p1_eval_and_p0():
    x = leaf([1.0, 2.0])
    assert F.dropout(x, 1.0).tolist() == [0.0, 0.0]
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert F.dropout(oxmera.ones(3, dtype=F32), 0.5).dtype == F32


def test_dropout_errors():
    x = leaf([1.0, 2.0])
    with unchanged(x):
        with pytest.raises(ValueError, match="dropout.*1.5"):
            F.dropout(x, 1.5)
        with pytest.raises(ValueError, match="dropout.*-0.1"):
            F.dropout(x, -0.1)
        with pytest.raises(TypeError, match="dropout.*int64"):
            F.dropout(oxmera.tensor([1, 2]))


# -- layer_norm and batch_norm -----------------------------------------------------------------

def test_layer_norm_matches_numpy():
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4)), rng.standard_normal(
        (3, 4))
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * w + b
    out = F.layer_norm(oxmera.tensor(x), [3, 4], oxmera.tensor(w), oxmera.tensor(b))
    np.testing.assert_allclose(_np(out), expected, rtol=1e-10)
    out = F.layer_norm(oxmera.tensor(x, dtype=F32), 4, eps=0.0)
    assert out.dtype == F32
    np.testing.assert_allclose(_np(out).mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(_np(out).var(-1), 1, rtol=1e-5)


def test_layer_norm_errors():
    x = leaf(np.ones((2, 3)))
    with unchanged(x):
        with pytest.raises(ValueError, match=r"layer_norm.*\(4,\).*\(2, 3\)"):
            F.layer_norm(x, 4)
        with pytest.raises(ValueError, match=r"layer_norm.*weight.*\(2,\)"):
            F.layer_norm(x, 3, weight=leaf(np.ones(2)))


def _batch_stats(x):
    dims = (0,) + tuple(range(2, x.ndim))
    return x.mean(axis=dims), x.var(axis=dims), x.var(axis=dims, ddof=1)


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5)])
def test_batch_norm_training_uses_and_tracks_batch_statistics(shape):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(shape) * 3 + 1
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    mean, biased, unbiased = _batch_stats(x)
    running_mean = oxmera.tensor([0.5, -0.5, 0.0], dtype=F64)
    running_var = oxmera.tensor([1.0, 2.0, 3.0], dtype=F64)
    versions = running_mean._version, running_var._version
    view = (1, 3) + (1,) * (len(shape) - 2)
    out = F.batch_norm(oxmera.tensor(x), running_mean, running_var, oxmera.tensor(w),
                       oxmera.tensor(b), training=True, momentum=0.2, eps=1e-3)
    expected = ((x - mean.reshape(view)) / np.sqrt(biased.reshape(view) + 1e-3) * w.reshape(view)
                + b.reshape(view))
    np.testing.assert_allclose(_np(out), expected, rtol=1e-10)
    np.testing.assert_allclose(_np(running_mean), 0.8 * np.array([0.5, -0.5, 0.0]) + 0.2 * mean)
    np.testing.assert_allclose(_np(running_var), 0.8 * np.array([1.0, 2.0, 3.0]) + 0.2 * unbiased)
    assert running_mean._version > versions[0] and running_var._version > versions[1]


def test_batch_norm_eval_uses_running_statistics():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 2, 3))
    mean, var = np.array([0.3, -1.0]), np.array([0.5, 2.0])
    running_mean, running_var = oxmera.tensor(mean), oxmera.tensor(var)
    out = F.batch_norm(oxmera.tensor(x), running_mean, running_var, eps=0.0)
    np.testing.assert_allclose(_np(out), (x - mean[:, None]) / np.sqrt(var[:, None]),
                               rtol=1e-12)
    np.testing.assert_array_equal(_np(running_mean), mean)     # eval never updates them
    out = F.batch_norm(oxmera.tensor(x, dtype=F32), oxmera.tensor(mean, dtype=F32),
                       oxmera.tensor(var, dtype=F32))
    assert out.dtype == F32


def test_batch_norm_training_without_running_statistics():
    x = np.arange(6.0).reshape(3, 2)
    out = F.batch_norm(oxmera.tensor(x), None, None, training=True, eps=0.0)
    np.testing.assert_allclose(_np(out), (x - x.mean(0)) / x.std(0), rtol=1e-12)


def test_batch_norm_errors_change_nothing():
    x = leaf(np.ones((4, 3)))
    mean, var = oxmera.zeros(3), oxmera.ones(3)
    with unchanged(x, mean, var):
        with pytest.raises(ValueError, match=r"batch_norm.*running_var.*\(2,\).*\(4, 3\)"):
            F.batch_norm(x, mean, oxmera.ones(2), training=True)
        with pytest.raises(ValueError, match=r"batch_norm.*more than 1 value.*\(1, 3\)"):
            F.batch_norm(leaf(np.ones((1, 3))), mean, var, training=True)
        with pytest.raises(ValueError, match="batch_norm.*running_mean"):
            F.batch_norm(x, None, None)
        with pytest.raises(ValueError, match=r"batch_norm.*\(4,\)"):
            F.batch_norm(leaf(np.ones(4)), None, None, training=True)


# -- embedding and one_hot ---------------------------------------------------------------------

def test_embedding_picks_rows_and_accumulates_repeats():
    w = leaf(np.arange(12.0).reshape(4, 3))
    index = oxmera.tensor([[3, 1], [3, 3]])
    out = F.embedding(index, w)
    np.testing.assert_array_equal(_np(out), np.arange(12.0).reshape(4, 3)[[[3, 1], [3, 3]]])
    out.sum().backward()
    np.testing.assert_array_equal(_np(w.grad)[:, 0], [0, 1, 0, 3])


def test_embedding_padding_row_gets_no_gradient():
    w = leaf(np.arange(12.0).reshape(4, 3))
    out = F.embedding(oxmera.tensor([0, 2, 2, 1]), w, padding_idx=2)
    np.testing.assert_array_equal(_np(out)[1], [6, 7, 8])     # still the row's values
    (out * oxmera.tensor(np.arange(12.0).reshape(4, 3))).sum().backward()
    np.testing.assert_array_equal(_np(w.grad)[2], 0)
    np.testing.assert_array_equal(_np(w.grad)[1], [9, 10, 11])
    w.grad = None
    F.embedding(oxmera.tensor([3, 0]), w, padding_idx=-1).sum().backward()
    np.testing.assert_array_equal(_np(w.grad)[:, 0], [1, 0, 0, 0])


def test_embedding_max_norm_renormalizes_the_picked_rows():
    w = oxmera.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    out = F.embedding(oxmera.tensor([0, 1]), w, max_norm=1.0)
    np.testing.assert_allclose(_np(w), [[0.6, 0.8], [0.3, 0.4], [6.0, 8.0]], rtol=1e-6)
    np.testing.assert_allclose(_np(out), [[0.6, 0.8], [0.3, 0.4]], rtol=1e-6)


def test_embedding_errors():
    w = leaf(np.ones((4, 3)))
    with unchanged(w):
        with pytest.raises(TypeError, match="embedding.*float32"):
            F.embedding(oxmera.tensor([1.0]), w)
        with pytest.raises(IndexError, match=r"embedding.*index 4.*\(4, 3\)"):
            F.embedding(oxmera.tensor([0, 4]), w)
        with pytest.raises(IndexError, match="embedding.*-1"):
            F.embedding(oxmera.tensor([-1]), w)
        with pytest.raises(IndexError, match="embedding.*padding_idx 4"):
            F.embedding(oxmera.tensor([0]), w, padding_idx=4)
        with pytest.raises(ValueError, match=r"embedding.*\(4,\)"):
            F.embedding(oxmera.tensor([0]), leaf(np.ones(4)))


def test_one_hot():
    out = F.one_hot(oxmera.tensor([[0, 2], [1, 1]]), 4)
    assert out.dtype == oxmera.int64 and out.shape == (2, 2, 4)
    np.testing.assert_array_equal(_np(out), np.eye(4, dtype=np.int64)[[[0, 2], [1, 1]]])
    assert F.one_hot(oxmera.tensor([2])).tolist() == [[0, 0, 1]]
    assert F.one_hot(oxmera.tensor(1), 2).tolist() == [0, 1]
    assert F.one_hot(oxmera.zeros(0, dtype=oxmera.int64), 3).shape == (0, 3)
    assert not out.requires_grad and out.grad_fn is None


def test_one_hot_errors():
    with pytest.raises(TypeError, match="one_hot.*float32"):
        F.one_hot(oxmera.tensor([1.0]))
    with pytest.raises(ValueError, match="one_hot.*smaller than num_classes.*3"):
        F.one_hot(oxmera.tensor([3]), 3)
    with pytest.raises(ValueError, match="one_hot.*non-negative"):
        F.one_hot(oxmera.tensor([-1]), 3)
    with pytest.raises(ValueError, match="one_hot.*empty"):
        F.one_hot(oxmera.zeros(0, dtype=oxmera.int64))


# -- pad -------------------------------------------------------------------------------------

_NP_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
             "circular": "wrap"}


def _np_pad(x, pad, mode, value=0):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    kwargs = {"constant_values": value} if mode == "constant" else {}
    return np.pad(x, widths, mode=_NP_MODES[mode], **kwargs)


@pytest.mark.parametrize("mode", sorted(_NP_MODES))
@pytest.mark.parametrize("pad", [(1, 2), (0, 3, 2, 0), (1, 1, 2, 2, 1, 0), ()])
def test_pad_matches_numpy(mode, pad):
    x = np.arange(60.0).reshape(3, 4, 5)
    out = F.pad(oxmera.tensor(x), pad, mode=mode)
    np.testing.assert_array_equal(_np(out), _np_pad(x, pad, mode))


def test_pad_constant_value_dtype_and_crop():
    x = np.arange(12).reshape(3, 4)
    out = F.pad(oxmera.tensor(x), (1, -2, -1, 1), value=7)
    assert out.dtype == oxmera.int64
    np.testing.assert_array_equal(_np(out), np.pad(x[1:, :2], ((0, 1), (1, 0)),
                                                   constant_values=7))
    assert F.pad(oxmera.ones(2, dtype=F32), (1, 1), value=0.5).tolist() == [0.5, 1, 1, 0.5]


def test_pad_gradient_sums_over_copies():
    x = leaf([1.0, 2.0, 3.0])
    F.pad(x, (2, 2), mode="reflect").sum().backward()
    assert x.grad.tolist() == [2.0, 3.0, 2.0]     # [3 2 | 1 2 3 | 2 1]
    x.grad = None
    F.pad(x, (2, 1), mode="replicate").sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 2.0]


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=3),
       mode=st.sampled_from(sorted(_NP_MODES)), data=st.data())
def test_pad_property(shape, mode, data):
    dims = data.draw(st.integers(1, len(shape)))
    pad = []
    for i in range(dims):
        size = shape[len(shape) - 1 - i]
        top = {"reflect": size - 1, "circular": size}.get(mode, 4)
        pad += [data.draw(st.integers(0, top)), data.draw(st.integers(0, top))]
    x = np.random.default_rng(0).standard_normal(shape)
    t = leaf(x)
    out = F.pad(t, pad, mode=mode)
    np.testing.assert_array_equal(_np(out), _np_pad(x, pad, mode))
    assert gradcheck(lambda v: F.pad(v, pad, mode=mode), (t,))


def test_pad_errors():
    x = leaf(np.ones((2, 3)))
    with unchanged(x):
        with pytest.raises(ValueError, match="pad.*even"):
            F.pad(x, (1, 2, 3))
        with pytest.raises(ValueError, match=r"pad.*3 dims.*\(2, 3\)"):
            F.pad(x, (1, 1, 1, 1, 1, 1))
        with pytest.raises(ValueError, match="pad.*mode.*'wrap'"):
            F.pad(x, (1, 1), mode="wrap")
        with pytest.raises(ValueError, match=r"pad.*reflect.*\(3, 0\).*size 3"):
            F.pad(x, (3, 0), mode="reflect")
        with pytest.raises(ValueError, match=r"pad.*circular.*\(0, 4\)"):
            F.pad(x, (0, 4, 1, 1), mode="circular")
        with pytest.raises(ValueError, match="pad.*value"):
            F.pad(x, (1, 1), mode="replicate", value=1.0)
        with pytest.raises(ValueError, match=r"pad.*cropping.*\(-2, -2\)"):
            F.pad(x, (-2, -2))


def test_no_warnings_on_ordinary_calls():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.softmax(oxmera.ones(2, 3), 1)
        F.dropout(oxmera.ones(3))
        F.pad(oxmera.ones(2, 3), (1, 1), mode="reflect")
