"""Everyday PyTorch calls that must work as a PyTorch user writes them (issue 12).

- ``max(a, b)`` / ``min(a, b)`` (and ``other=``, and the Tensor methods) are
  the elementwise maximum / minimum, differentiable, while ``max(x)``,
  ``max(x, dim)`` and ``max(x, dim, keepdim)`` still reduce;
- ``axis`` is accepted for ``dim`` by every reduction and norm, ``cat`` and
  ``stack`` take ``axis`` and ``concatenate`` takes ``dim``;
- ``flip`` / ``tile`` methods take ``dims=`` as a keyword;
- a boolean mask of the wrong shape is an IndexError naming the mask's shape
  and the tensor's, on reads and writes, and changes nothing;
- ``binary_cross_entropy``'s gradient in the target is PyTorch's
  ``log(1 - p) - log(p)``, unclamped (+-inf at p = 0 or 1);
- ``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``.
"""
import math

import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera.autograd import gradcheck, gradgradcheck

from ops._helpers import leaf, unchanged  # (tests/ is on sys.path: pytest rootdir-style packages)

F64 = oxmera.float64


def _check_gradients(fn, *inputs):
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


# -- max(a, b), min(a, b) ------------------------------------------------------------------

_PAIRS = {
    "same-shape": ((2, 3), (2, 3)),
    "broadcast": ((2, 3), (3,)),
    "0-d": ((), ()),
    "0-d-other": ((2, 3), ()),
    "empty": ((0, 3), (3,)),
}


@pytest.mark.parametrize("name, elementwise", [("max", np.maximum), ("min", np.minimum)])
@pytest.mark.parametrize("shapes", list(_PAIRS.values()), ids=list(_PAIRS))
def test_max_min_of_two_tensors_is_the_elementwise_form(name, elementwise, shapes):
    rng = np.random.default_rng(0)
    a, b = (leaf(rng.uniform(-2, 2, s)) for s in shapes)
    fn = getattr(oxmera, name)
    expected = elementwise(a.detach().numpy(), b.detach().numpy())
    for out in (fn(a, b), fn(a, other=b), getattr(a, name)(b), getattr(a, name)(other=b)):
        assert out.grad_fn is not None
        np.testing.assert_array_equal(out.detach().numpy(), expected)
    _check_gradients(fn, a, b)
    _check_gradients(lambda x, y: getattr(x, name)(y), a, b)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_of_two_tensors_split_a_tie_as_maximum_does(name):
    a, b = leaf([1.0, 2.0, 3.0]), leaf([1.0, 5.0, 0.0])
    getattr(oxmera, name)(a, b).sum().backward()
    wins = [0.0, 1.0, 0.0] if name == "max" else [0.0, 0.0, 1.0]
    np.testing.assert_array_equal(b.grad.numpy(), [0.5] + wins[1:])
    np.testing.assert_array_equal(a.grad.numpy(), [0.5] + [1 - w for w in wins[1:]])


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_reductions_are_unchanged(name):
    x = oxmera.tensor([[1.0, 5.0], [7.0, 2.0]])
    fn = getattr(oxmera, name)
    pick, arg = (np.max, np.argmax) if name == "max" else (np.min, np.argmin)
    data = x.numpy()
    assert fn(x).item() == pick(data)
    values, indices = fn(x, 1)
    np.testing.assert_array_equal(values.numpy(), pick(data, 1))
    np.testing.assert_array_equal(indices.numpy(), arg(data, 1))
    assert fn(x, 1, True).values.shape == (2, 1)
    assert getattr(x, name)(dim=0, keepdim=True).indices.shape == (1, 2)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_elementwise_form_refuses_reduction_arguments(name):
    a, b = leaf([1.0, 2.0]), leaf([2.0, 1.0])
    with unchanged(a, b):
        with pytest.raises(TypeError, match=rf"{name}\(\).*elementwise.*dim"):
            getattr(oxmera, name)(a, b, True)
        with pytest.raises(TypeError, match=rf"{name}\(\)"):
            getattr(oxmera, name)(a, 0, other=b)


# -- axis for dim --------------------------------------------------------------------------

_X = np.array([[1.0, -2.0, 0.5], [3.0, 4.0, -1.0]])

#: name -> a call taking ``dim`` (by keyword ``key``); each must give the same with axis.
_REDUCTIONS = {
    "sum": oxmera.sum, "mean": oxmera.mean, "prod": oxmera.prod, "amax": oxmera.amax,
    "amin": oxmera.amin, "argmax": oxmera.argmax, "argmin": oxmera.argmin, "var": oxmera.var,
    "std": oxmera.std, "logsumexp": oxmera.logsumexp, "norm": oxmera.norm,
    "cumsum": oxmera.cumsum, "cumprod": oxmera.cumprod, "all": oxmera.all, "any": oxmera.any,
    "max": lambda x, **k: oxmera.max(x, **k).values,
    "min": lambda x, **k: oxmera.min(x, **k).values,
    "linalg.norm": oxmera.linalg.norm, "linalg.vector_norm": oxmera.linalg.vector_norm,
}


def _same(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("name", sorted(_REDUCTIONS))
def test_every_reduction_accepts_axis_for_dim(name):
    fn = _REDUCTIONS[name]
    x = oxmera.tensor(_X)
    _same(fn(x, axis=1), fn(x, dim=1))
    _same(fn(x, axis=0), fn(x, dim=0))
    method = getattr(x, name, None)
    if method is not None and name not in ("max", "min"):
        _same(method(axis=1), method(dim=1))


@pytest.mark.parametrize("name", ["sum", "norm", "linalg.norm", "linalg.vector_norm", "mean",
                                  "var", "logsumexp", "amax"])
def test_axis_works_with_a_tuple_and_keepdim(name):
    fn = _REDUCTIONS[name]
    x = oxmera.tensor(_X)
    _same(fn(x, axis=(0, 1), keepdim=True), fn(x, dim=(0, 1), keepdim=True))


def test_matrix_norm_accepts_axis():
    x = oxmera.tensor(np.arange(12.0).reshape(2, 3, 2))
    for ord in ("fro", 1, math.inf):
        _same(oxmera.linalg.matrix_norm(x, ord, axis=(0, 2)),
              oxmera.linalg.matrix_norm(x, ord, dim=(0, 2)))
    _same(oxmera.linalg.norm(x, axis=(0, 2)), oxmera.linalg.norm(x, dim=(0, 2)))


@pytest.mark.parametrize("call", [
    lambda x: oxmera.norm(x, dim=0, axis=1),
    lambda x: oxmera.linalg.norm(x, dim=0, axis=1),
    lambda x: oxmera.linalg.matrix_norm(x, dim=(0, 1), axis=(1, 0)),
    lambda x: oxmera.cat([x, x], 1, axis=0),
    lambda x: oxmera.concatenate([x, x], 1, dim=0),
])
def test_dim_and_axis_together_are_refused(call):
    x = leaf(_X)
    with unchanged(x):
        with pytest.raises(TypeError, match="dim or axis, not both"):
            call(x)


def test_cat_stack_take_axis_and_concatenate_takes_dim():
    a, b = leaf(_X), leaf(_X * 2)
    expected = np.concatenate([_X, _X * 2], axis=1)
    for out in (oxmera.cat([a, b], axis=1), oxmera.concatenate([a, b], dim=1),
                oxmera.concatenate([a, b], 1), oxmera.concatenate([a, b], axis=-1)):
        np.testing.assert_array_equal(out.detach().numpy(), expected)
    np.testing.assert_array_equal(oxmera.stack([a, b], axis=1).detach().numpy(),
                                  np.stack([_X, _X * 2], axis=1))
    _check_gradients(lambda x, y: oxmera.cat([x, y], axis=1), a, b)
    _check_gradients(lambda x, y: oxmera.concatenate([x, y], dim=0), a, b)
    _check_gradients(lambda x, y: oxmera.stack([x, y], axis=-1), a, b)


# -- flip and tile with dims= ------------------------------------------------------------------

def test_flip_takes_dims_as_a_keyword():
    x = leaf(_X)
    expected = _X[::-1, ::-1]
    for out in (x.flip(dims=(0, 1)), x.flip(dims=[0, 1]), x.flip(0, 1), x.flip((0, 1)),
                oxmera.flip(x, dims=(0, 1)), oxmera.flip(input=x, dims=(0, 1))):
        np.testing.assert_array_equal(out.detach().numpy(), expected)
    np.testing.assert_array_equal(x.flip(dims=1).detach().numpy(), _X[:, ::-1])
    _check_gradients(lambda t: t.flip(dims=(1,)), x)


def test_tile_method_takes_dims_as_a_keyword():
    x = oxmera.tensor(_X)
    np.testing.assert_array_equal(x.tile(dims=(2, 1)).numpy(), np.tile(_X, (2, 1)))
    np.testing.assert_array_equal(x.tile(dims=2).numpy(), np.tile(_X, 2))


@pytest.mark.parametrize("call", [lambda x: x.flip(0, dims=(1,)), lambda x: x.flip(dim=0),
                                  lambda x: x.tile(2, dims=(2,))])
def test_flip_tile_methods_refuse_mixed_or_unknown_keywords(call):
    x = leaf(_X)
    with unchanged(x):
        with pytest.raises(TypeError, match=r"Tensor\.(flip|tile)\(\).*dims"):
            call(x)


# -- the shape of a boolean mask ----------------------------------------------------------------

_BAD_MASKS = {
    "first-dim": (lambda: oxmera.tensor([True, False, True]), lambda m: (m,), r"\(3,\)", 0),
    "second-dim": (lambda: oxmera.tensor([True, False, True]), lambda m: (slice(None), m),
                   r"\(3,\)", 1),
    "after-ellipsis": (lambda: oxmera.tensor([True, False, True]), lambda m: (Ellipsis, m),
                       r"\(3,\)", 1),
    "2-d": (lambda: oxmera.tensor([[True, False, True]]), lambda m: (m,), r"\(1, 3\)", 0),
    "numpy": (lambda: np.array([True, False, True]), lambda m: (m,), r"\(3,\)", 0),
}


def _wrong_mask(case):
    make_mask, make_index, mask_shape, dim = _BAD_MASKS[case]
    return make_index(make_mask()), mask_shape, dim


@pytest.mark.parametrize("case", sorted(_BAD_MASKS))
def test_a_mask_of_the_wrong_shape_names_both_shapes_when_reading(case):
    x = leaf(np.ones((2, 2)))
    index, mask_shape, dim = _wrong_mask(case)
    with unchanged(x):
        with pytest.raises(IndexError, match=rf"index: .*mask {mask_shape} at index {dim}"
                                             rf".*indexed tensor \(2, 2\)"):
            x[index]


@pytest.mark.parametrize("recording", [False, True], ids=["no-grad", "recorded"])
@pytest.mark.parametrize("case", sorted(_BAD_MASKS))
def test_a_mask_of_the_wrong_shape_names_both_shapes_when_writing(case, recording):
    x = oxmera.ones(2, 2, dtype=F64)
    value = leaf(5.0, requires_grad=recording)
    index, mask_shape, dim = _wrong_mask(case)
    with unchanged(x, value):
        with pytest.raises(IndexError, match=rf"(setitem|index_put): .*mask {mask_shape} at "
                                             rf"index {dim}.*indexed tensor \(2, 2\)"):
            x[index] = value


def test_masked_fill_names_both_shapes():
    x = leaf(np.ones((2, 2)))
    with unchanged(x):
        with pytest.raises(RuntimeError, match=r"masked_fill.*\(3,\).*\(2, 2\)"):
            x.masked_fill(oxmera.tensor([True, False, True]), 0.0)


def test_masks_that_fit_still_index():
    x = oxmera.tensor(_X)
    np.testing.assert_array_equal(x[oxmera.tensor([True, False])].numpy(), _X[[True, False]])
    np.testing.assert_array_equal(x[:, oxmera.tensor([True, False, True])].numpy(),
                                  _X[:, [True, False, True]])
    np.testing.assert_array_equal(x[x > 0].numpy(), _X[_X > 0])
    with pytest.raises(IndexError, match=r"out of bounds.*tensor of shape \(2, 3\)"):
        x[5]


# -- binary_cross_entropy's gradient in the target --------------------------------------------

def _bce_grads(p, y, reduction, weight=None):
    p, y = leaf(p), leaf(y)
    loss = F.binary_cross_entropy(p, y, weight, reduction=reduction)
    loss.sum().backward()
    return p.grad.numpy(), y.grad.numpy()


@pytest.mark.parametrize("reduction, scale", [("none", 1.0), ("sum", 1.0), ("mean", 1 / 4)])
def test_bce_target_gradient_is_unclamped_at_0_and_1(reduction, scale):
    p, y = [0.0, 1.0, 0.25, 0.5], [0.3, 0.3, 0.3, 1.0]
    grad_p, grad_y = _bce_grads(p, y, reduction)
    assert grad_y[0] == math.inf and grad_y[1] == -math.inf
    np.testing.assert_allclose(grad_y[2:], scale * np.array([math.log(3.0), 0.0]), atol=1e-15)
    # The input gradient stays PyTorch's (x - y) / max(x (1 - x), 1e-12): finite.
    np.testing.assert_allclose(grad_p, scale * np.array([-0.3e12, 0.7e12, -0.05 / 0.1875,
                                                         -2.0]))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_bce_gradient_in_the_target_alone(reduction):
    # The input needs no gradient: the VJP asked the node for its shape, which it
    # keeps only for inputs that need one ("input 0 needs no gradient").
    p = oxmera.tensor([0.2, 0.7], dtype=oxmera.float64)
    y = leaf([0.5, 0.25])
    F.binary_cross_entropy(p, y, reduction=reduction).sum().backward()
    scale = 0.5 if reduction == "mean" else 1.0
    np.testing.assert_allclose(y.grad.numpy(), scale * np.log([0.8 / 0.2, 0.3 / 0.7]))


def test_bce_target_gradient_with_a_weight():
    _, grad_y = _bce_grads([0.0, 1.0, 0.25], [0.5, 0.5, 0.5], "none", oxmera.tensor(2.0))
    assert grad_y[0] == math.inf and grad_y[1] == -math.inf
    np.testing.assert_allclose(grad_y[2], 2 * math.log(3.0))


def test_bce_target_gradient_matches_finite_differences_inside():
    p = leaf([0.2, 0.7, 0.45])
    y = leaf([0.1, 0.9, 0.5])
    for reduction in ("none", "mean", "sum"):
        _check_gradients(lambda a, b, r=reduction: F.binary_cross_entropy(a, b, reduction=r),
                         p, y)


def test_bce_target_gradient_against_torch():
    torch = pytest.importorskip("torch")
    p, y = [0.0, 1.0, 0.25, 0.5], [0.3, 0.3, 0.3, 1.0]
    for reduction in ("none", "mean", "sum"):
        tp = torch.tensor(p, dtype=torch.float64, requires_grad=True)
        ty = torch.tensor(y, dtype=torch.float64, requires_grad=True)
        torch.nn.functional.binary_cross_entropy(tp, ty, reduction=reduction).sum().backward()
        grad_p, grad_y = _bce_grads(p, y, reduction)
        np.testing.assert_allclose(grad_p, tp.grad.numpy())
        np.testing.assert_allclose(grad_y, ty.grad.numpy())


# -- where(condition) ----------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    [[1.0, -2.0, 0.5], [-3.0, 4.0, -1.0]],   # 2-d
    [1.0, -2.0, 3.0],                        # 1-d
    2.0,                                     # 0-d: one dim, as nonzero(as_tuple=True) gives
    np.zeros((0, 3)),                        # empty
])
def test_where_with_only_a_condition_is_nonzero_as_tuple(data):
    x = oxmera.tensor(np.asarray(data, dtype=np.float64))
    out = oxmera.where(x > 0)
    expected = oxmera.nonzero(x > 0, as_tuple=True)
    assert isinstance(out, tuple) and len(out) == len(expected) == max(x.ndim, 1)
    for got, want in zip(out, expected):
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    array = np.asarray(data) > 0
    for got, want in zip(out, np.nonzero(array.reshape(-1) if array.ndim == 0 else array)):
        np.testing.assert_array_equal(got.numpy(), want)
    # and it indexes what the condition selects
    if x.ndim:
        np.testing.assert_array_equal(x[out].numpy(), x.numpy()[np.asarray(data) > 0])


def test_where_with_only_a_condition_takes_any_dtype_like_nonzero():
    out = oxmera.where(oxmera.tensor([0, 3, 0, 5]))
    np.testing.assert_array_equal(out[0].numpy(), [1, 3])


def test_where_with_one_of_input_and_other_missing_is_a_type_error():
    c = oxmera.tensor([True, False])
    x = leaf([1.0, 2.0])
    with unchanged(x):
        with pytest.raises(TypeError, match=r"where\(\).*other"):
            oxmera.where(c, x)
        with pytest.raises(TypeError, match=r"where\(\).*input"):
            oxmera.where(c, other=x)


def test_where_with_three_arguments_is_unchanged():
    c = oxmera.tensor([[True, False, True], [False, True, False]])
    x, y = leaf(_X), leaf(-_X)
    np.testing.assert_array_equal(oxmera.where(c, x, y).detach().numpy(), np.where(c.numpy(),
                                                                                    _X, -_X))
    np.testing.assert_array_equal(x.where(c, y).detach().numpy(), np.where(c.numpy(), _X, -_X))
    _check_gradients(lambda a, b: oxmera.where(c, a, b), x, y)
