"""Shape ops: reshape, view, transpose/swapaxes, permute, squeeze, unsqueeze,
expand, broadcast_to, T/mT, cat/concatenate, stack — forward against NumPy,
which results are views (shared memory and version counter), gradient
routing, and errors.

Finite-difference gradient checks are the entries of ``_cases.py``.
"""
import numpy as np
import pytest

import oxmera

from ._helpers import leaf, unchanged

F32, F64, I64 = oxmera.float32, oxmera.float64, oxmera.int64


def _arange(*shape, dtype=np.float64):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def _check(result, expected):
    assert isinstance(result, oxmera.Tensor)
    assert result.shape == np.shape(expected)
    assert result.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(result.detach().numpy(), expected)


# -- forward against NumPy -----------------------------------------------------------------

A = _arange(2, 3, 4)

FORWARD = [
    ("reshape", lambda x: x.reshape(4, 6), lambda a: a.reshape(4, 6)),
    ("reshape-tuple", lambda x: oxmera.reshape(x, (3, -1)), lambda a: a.reshape(3, -1)),
    ("reshape-list", lambda x: x.reshape([-1]), lambda a: a.reshape(-1)),
    ("reshape-0d", lambda x: x[0, 0, 0].reshape(()), lambda a: a[0, 0, 0].reshape(())),
    ("view", lambda x: x.view(6, 4), lambda a: a.reshape(6, 4)),
    ("view-infer", lambda x: oxmera.view(x, -1, 2), lambda a: a.reshape(-1, 2)),
    ("transpose", lambda x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("transpose-negative", lambda x: oxmera.transpose(x, -1, -2), lambda a: a.swapaxes(-1, -2)),
    ("swapaxes", lambda x: oxmera.swapaxes(x, 1, 0), lambda a: a.swapaxes(1, 0)),
    ("swapaxes-method", lambda x: x.swapaxes(0, -1), lambda a: a.swapaxes(0, -1)),
    ("permute", lambda x: x.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    ("permute-tuple", lambda x: oxmera.permute(x, (1, -1, 0)), lambda a: a.transpose(1, 2, 0)),
    ("T", lambda x: x.T, lambda a: a.T),
    ("mT", lambda x: x.mT, lambda a: a.swapaxes(-1, -2)),
    ("squeeze-none", lambda x: x.squeeze(), lambda a: a),
    ("unsqueeze", lambda x: x.unsqueeze(1), lambda a: a[:, None]),
    ("unsqueeze-last", lambda x: x.unsqueeze(3), lambda a: a[..., None]),
    ("unsqueeze-negative", lambda x: x.unsqueeze(-1), lambda a: a[..., None]),
    ("unsqueeze-negative-front", lambda x: oxmera.unsqueeze(x, -4), lambda a: a[None]),
    ("expand", lambda x: x[:, :1].expand(2, 5, 4), lambda a: np.broadcast_to(a[:, :1], (2, 5, 4))),
    ("expand-keep", lambda x: x[:, :1].expand(-1, 3, -1),
     lambda a: np.broadcast_to(a[:, :1], (2, 3, 4))),
    ("expand-leading", lambda x: x.expand(3, 2, 3, 4), lambda a: np.broadcast_to(a, (3, 2, 3, 4))),
    ("expand-tuple", lambda x: oxmera.expand(x, (1, 2, 3, 4)), lambda a: a[None]),
    ("broadcast_to", lambda x: oxmera.broadcast_to(x[0, 0], (3, 4)),
     lambda a: np.broadcast_to(a[0, 0], (3, 4))),
    ("broadcast_to-method", lambda x: x.broadcast_to((5, 2, 3, 4)),
     lambda a: np.broadcast_to(a, (5, 2, 3, 4))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_], ids=str)
@pytest.mark.parametrize("name, op, reference", FORWARD, ids=[f[0] for f in FORWARD])
def test_shape_ops_match_numpy(name, op, reference, dtype):
    a = (A % 3).astype(dtype)
    _check(op(oxmera.tensor(a)), reference(a))


# view needs strides compatible with the new shape: tested on its own below
NOT_VIEW = [f for f in FORWARD if not f[0].startswith("view")]


@pytest.mark.parametrize("name, op, reference", NOT_VIEW, ids=[f[0] for f in NOT_VIEW])
def test_shape_ops_on_non_contiguous_input(name, op, reference):
    a = _arange(4, 3, 2).T            # shape (2, 3, 4), reversed strides
    _check(op(oxmera.from_numpy(a)), reference(a))


SQUEEZES = [
    ((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), -1), ((1, 3, 1), 1), ((1, 3, 1), (0, 2)),
    ((1, 3, 1), (0, 1)), ((2, 3), None), ((), None), ((), 0), ((1,), 0), ((0, 1), None),
    ((1, 1), [0, 1]),
]


@pytest.mark.parametrize("shape, dim", SQUEEZES, ids=str)
def test_squeeze_matches_pytorch_semantics(shape, dim):
    a = _arange(*shape)
    if dim is None:
        expected = np.squeeze(a)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        # PyTorch leaves a named dim alone when its size is not 1
        axes = tuple(d for d in dims if a.ndim and a.shape[d] == 1)
        expected = np.squeeze(a, axis=axes)
    _check(oxmera.tensor(a).squeeze(dim), expected)
    _check(oxmera.squeeze(oxmera.tensor(a), dim), expected)


def test_T_and_mT_of_low_rank():
    x = oxmera.tensor([1.0, 2.0])
    _check(x.T, np.array([1.0, 2.0], np.float32))
    _check(oxmera.tensor(3.0).T, np.float32(3.0))
    with pytest.raises(RuntimeError, match="mT"):
        x.mT


# -- views: shared memory and version counter --------------------------------------------------

VIEWS = {
    "reshape": lambda x: x.reshape(3, 2),
    "view": lambda x: x.view(-1),
    "transpose": lambda x: x.transpose(0, 1),
    "permute": lambda x: x.permute(1, 0),
    "T": lambda x: x.T,
    "mT": lambda x: x.mT,
    "squeeze": lambda x: x.unsqueeze(0).squeeze(0),
    "squeeze-nothing": lambda x: x.squeeze(),
    "squeeze-dim-not-1": lambda x: x.squeeze(0),
    "unsqueeze": lambda x: x.unsqueeze(-1),
    "expand": lambda x: x.expand(4, 2, 3),
    "broadcast_to": lambda x: oxmera.broadcast_to(x, (4, 2, 3)),
    "index-basic": lambda x: x[0],
    "index-ellipsis": lambda x: x[...],
    "contiguous-already": lambda x: x.contiguous(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_memory_and_version_counter(name):
    # A view and its base are one block of memory: an in-place write to
    # either must be seen by the other's saved-tensor check.
    x = oxmera.zeros(2, 3)
    y = VIEWS[name](x)
    assert np.shares_memory(x.numpy(), y.numpy())
    before = x._version
    y._bump_version()
    assert x._version == before + 1
    x._bump_version()
    assert y._version == x._version


def test_reshape_of_non_contiguous_input_copies():
    x = oxmera.from_numpy(_arange(3, 2).T)
    y = x.reshape(-1)
    assert not np.shares_memory(x.numpy(), y.numpy())
    before = x._version
    y._bump_version()
    assert x._version == before
    _check(y, _arange(3, 2).T.reshape(-1))


def test_view_of_compatible_non_contiguous_input():
    a = _arange(4, 3).T
    _check(oxmera.from_numpy(a).view(3, 4), a)
    b = _arange(2, 6)[:, ::2]
    _check(oxmera.from_numpy(b).view(2, 3, 1), b.reshape(2, 3, 1))


def test_view_of_a_transposed_tensor_is_an_error_pointing_to_reshape():
    x = leaf(_arange(2, 3))
    t = x.T
    with unchanged(x, t):
        with pytest.raises(RuntimeError, match="view") as info:
            t.view(-1)
    assert "reshape" in str(info.value)
    _check(t.reshape(-1), _arange(2, 3).T.reshape(-1))


# -- gradients are routed back ------------------------------------------------------------------

def test_shape_op_nodes_are_named():
    x = leaf(_arange(2, 3))
    names = {"reshape": x.reshape(3, 2), "view": x.view(6), "transpose": x.transpose(0, 1),
             "permute": x.permute(1, 0), "squeeze": x.squeeze(), "unsqueeze": x.unsqueeze(0),
             "expand": x.expand(2, 2, 3), "broadcast_to": x.broadcast_to((2, 2, 3)),
             "cat": oxmera.cat([x, x]), "stack": oxmera.stack([x, x])}
    for name, out in names.items():
        expected = "".join(p.capitalize() for p in name.split("_")) + "Backward"
        assert out.grad_fn.name == expected
        assert not out.is_leaf


def test_expand_gradient_sums_over_expanded_dims():
    x = leaf([[1.0], [2.0]])
    x.expand(3, 2, 4).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[12.0], [12.0]])


def test_permute_gradient_is_inverse_permutation():
    x = leaf(_arange(2, 3, 4))
    weights = oxmera.from_numpy(_arange(4, 2, 3))
    (x.permute(2, 0, 1) * weights).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), _arange(4, 2, 3).transpose(1, 2, 0))


@pytest.mark.parametrize("join", ["cat", "stack"])
def test_join_with_inputs_that_do_not_require_grad(join):
    a = leaf(np.ones((2, 3)))
    b = oxmera.ones(2, 3, dtype=F64)                 # no grad
    c = leaf(np.full((2, 3), 2.0))
    fn = getattr(oxmera, join)
    out = fn([a, b, c], dim=-1)
    assert out.requires_grad
    weights = oxmera.from_numpy(_arange(*out.shape))
    (out * weights).sum().backward()
    w = _arange(*out.shape)
    if join == "cat":
        expected_a, expected_c = w[:, 0:3], w[:, 6:9]
    else:
        expected_a, expected_c = w[..., 0], w[..., 2]
    np.testing.assert_array_equal(a.grad.numpy(), expected_a)
    np.testing.assert_array_equal(c.grad.numpy(), expected_c)
    assert b.grad is None
    # none requires grad: nothing recorded
    plain = fn([b, b])
    assert not plain.requires_grad and plain.grad_fn is None


# -- cat and stack against NumPy --------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, -1, -2])
def test_cat_matches_numpy(dim):
    arrays = [_arange(2, 3), _arange(2, 3) + 10, _arange(2, 3) * 2]
    if dim in (1, -1):
        arrays[1] = _arange(2, 1)
    else:
        arrays[1] = _arange(1, 3)
    tensors = [oxmera.tensor(a) for a in arrays]
    expected = np.concatenate(arrays, axis=dim)
    _check(oxmera.cat(tensors, dim), expected)
    _check(oxmera.cat(tuple(tensors), dim=dim), expected)
    _check(oxmera.concatenate(tensors, axis=dim), expected)


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_stack_matches_numpy(dim):
    arrays = [_arange(2, 3), _arange(2, 3) + 10]
    expected = np.stack(arrays, axis=dim)
    _check(oxmera.stack([oxmera.tensor(a) for a in arrays], dim), expected)
    _check(oxmera.stack([oxmera.tensor(a) for a in arrays], dim=dim), expected)


def test_cat_and_stack_of_size_0_and_0d():
    _check(oxmera.cat([oxmera.zeros(0, 3), oxmera.ones(2, 3)]), np.ones((2, 3), np.float32))
    _check(oxmera.stack([oxmera.tensor(1.0), oxmera.tensor(2.0)]),
           np.array([1.0, 2.0], np.float32))
    _check(oxmera.stack([oxmera.zeros(0, 2)] * 3, dim=1), np.zeros((0, 3, 2), np.float32))


@pytest.mark.parametrize("dtypes, expected", [
    ((F32, F64), F64), ((I64, F32), F32), ((I64, oxmera.int32), I64), ((oxmera.bool, I64), I64)],
    ids=str)
def test_cat_and_stack_promote(dtypes, expected):
    tensors = [oxmera.ones(2, dtype=d) for d in dtypes]
    assert oxmera.cat(tensors).dtype == expected
    assert oxmera.stack(tensors).dtype == expected


# -- errors (SPEC §6) ---------------------------------------------------------------------------

def _error_inputs():
    x = leaf(_arange(2, 3))
    x.grad = oxmera.ones(2, 3, dtype=F64)
    return x, x * 1.0


ERRORS = [
    ("reshape-size", lambda x: x.reshape(4, 2), RuntimeError, r"reshape.*\(4, 2\).*\(2, 3\)"),
    ("reshape-two-infer", lambda x: x.reshape(-1, -1), RuntimeError,
     "only one dimension can be inferred"),
    ("reshape-negative", lambda x: x.reshape(-2, 3), RuntimeError, "invalid shape dimension -2"),
    ("reshape-infer-impossible", lambda x: x.reshape(4, -1), RuntimeError, r"reshape.*\(4, -1\)"),
    ("view-size", lambda x: x.view(5), RuntimeError, r"view.*\(5,\)"),
    ("reshape-not-int", lambda x: x.reshape("a"), TypeError, "reshape"),
    ("transpose-dim", lambda x: x.transpose(0, 2), IndexError, r"transpose.*range.*\[-2, 1\]"),
    ("permute-count", lambda x: x.permute(0), RuntimeError, "permute"),
    ("permute-repeated", lambda x: x.permute(0, 0), RuntimeError, "permute.*repeated"),
    ("permute-dim", lambda x: x.permute(0, 2), IndexError, "permute.*range"),
    ("squeeze-dim", lambda x: x.squeeze(2), IndexError, "squeeze.*range"),
    ("unsqueeze-dim", lambda x: x.unsqueeze(3), IndexError, r"unsqueeze.*range.*\[-3, 2\]"),
    ("unsqueeze-negative-dim", lambda x: x.unsqueeze(-4), IndexError, "unsqueeze.*range"),
    ("expand-size", lambda x: x.expand(2, 4), RuntimeError, r"expand.*\(4\).*\(3\)"),
    ("expand-fewer-dims", lambda x: x.expand(3), RuntimeError, "expand.*number of sizes"),
    ("expand-new-minus-1", lambda x: x.expand(-1, 2, 3), RuntimeError, "expand.*-1"),
    ("broadcast_to", lambda x: oxmera.broadcast_to(x, (3, 3)), RuntimeError, "broadcast_to"),
    ("cat-shapes", lambda x: oxmera.cat([x, oxmera.ones(2, 2, dtype=F64)]), RuntimeError,
     r"cat.*\(2, 3\).*\(2, 2\)"),
    ("cat-ranks", lambda x: oxmera.cat([x, oxmera.ones(3, dtype=F64)]), RuntimeError, "cat"),
    ("cat-dim", lambda x: oxmera.cat([x, x], dim=2), IndexError, "cat.*range"),
    ("cat-not-a-sequence", lambda x: oxmera.cat(x), TypeError, "sequence"),
    ("stack-shapes", lambda x: oxmera.stack([x, oxmera.ones(3, 2, dtype=F64)]), RuntimeError,
     r"stack.*\(2, 3\).*\(3, 2\)"),
    ("stack-dim", lambda x: oxmera.stack([x, x], dim=3), IndexError, "stack.*range"),
    ("stack-not-a-sequence", lambda x: oxmera.stack(x), TypeError, "sequence"),
]


@pytest.mark.parametrize("call, error, pattern", [e[1:] for e in ERRORS],
                         ids=[e[0] for e in ERRORS])
def test_errors_change_nothing(call, error, pattern):
    x, y = _error_inputs()
    for t in (x, y):
        with unchanged(x, y):
            with pytest.raises(error, match=pattern):
                call(t)


@pytest.mark.parametrize("join", ["cat", "stack"])
def test_join_of_nothing_is_an_error(join):
    with pytest.raises(RuntimeError, match=f"{join}.*non-empty"):
        getattr(oxmera, join)([])


@pytest.mark.parametrize("source, shape", [
    (np.array(2.0), (3,)),
    (np.arange(3.0), (2, 3)),
    (np.arange(6.0).reshape(2, 1, 3), (4, 2, 5, 3)),
    (np.arange(6.0).reshape(2, 3).T, (2, 3, 2)),        # non-contiguous: NumPy's path
    (np.arange(6.0)[::2], (2, 3)),                      # strided
    (np.zeros((0, 1)), (2, 0, 4)),
])
def test_broadcast_view_matches_numpy_and_is_read_only(source, shape):
    from oxmera.ops._utils import broadcast_view
    out = broadcast_view(source, shape)
    np.testing.assert_array_equal(out, np.broadcast_to(source, shape))
    assert out.shape == shape and not out.flags.writeable
    assert np.shares_memory(out, source) or source.size == 0
