"""Shape ops: reshape, view, flatten/unflatten, transpose/swapaxes, permute,
movedim/moveaxis, squeeze, unsqueeze, expand, broadcast_to, repeat, tile,
flip, roll, T/mT, cat/concatenate, stack, split, chunk, unbind, diagonal,
tril, triu — forward against NumPy, which results are views (shared memory
and version counter) and which copies, gradient routing, errors, and
hypothesis properties over random shapes.

Finite-difference gradient checks are the entries of ``_cases.py``.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    ("flatten", lambda x: x.flatten(), lambda a: a.reshape(-1)),
    ("flatten-start", lambda x: oxmera.flatten(x, 1), lambda a: a.reshape(2, 12)),
    ("flatten-range", lambda x: x.flatten(0, -2), lambda a: a.reshape(6, 4)),
    ("flatten-one-dim", lambda x: x.flatten(1, 1), lambda a: a),
    ("unflatten", lambda x: x.unflatten(2, (2, 2)), lambda a: a.reshape(2, 3, 2, 2)),
    ("unflatten-infer", lambda x: oxmera.unflatten(x, -1, [-1, 1, 2]),
     lambda a: a.reshape(2, 3, 2, 1, 2)),
    ("movedim", lambda x: x.movedim(0, -1), lambda a: np.moveaxis(a, 0, -1)),
    ("movedim-tuple", lambda x: oxmera.movedim(x, (0, 2), (1, 0)),
     lambda a: np.moveaxis(a, (0, 2), (1, 0))),
    ("moveaxis", lambda x: x.moveaxis(-1, 1), lambda a: np.moveaxis(a, -1, 1)),
    ("repeat", lambda x: x.repeat(2, 1, 3), lambda a: np.tile(a, (2, 1, 3))),
    ("repeat-new-dims", lambda x: oxmera.repeat(x, 2, 1, 1, 2), lambda a: np.tile(a, (2, 1, 1, 2))),
    ("tile", lambda x: oxmera.tile(x, (2,)), lambda a: np.tile(a, (2,))),
    ("tile-method", lambda x: x.tile(2, 1, 1, 1), lambda a: np.tile(a, (2, 1, 1, 1))),
    ("flip", lambda x: x.flip(0, 2), lambda a: a[::-1, :, ::-1]),
    ("flip-function", lambda x: oxmera.flip(x, [-2]), lambda a: a[:, ::-1]),
    ("roll", lambda x: x.roll(5), lambda a: np.roll(a, 5)),
    ("roll-dims", lambda x: oxmera.roll(x, (1, -3), (0, 2)), lambda a: np.roll(a, (1, -3), (0, 2))),
    ("roll-dim", lambda x: x.roll(-7, -2), lambda a: np.roll(a, -7, -2)),
    ("diagonal", lambda x: x.diagonal(), lambda a: np.diagonal(a)),
    ("diagonal-dims", lambda x: oxmera.diagonal(x, 1, 2, 1), lambda a: np.diagonal(a, 1, 2, 1)),
    ("diagonal-negative", lambda x: x.diagonal(-1, dim1=-1, dim2=0),
     lambda a: np.diagonal(a, -1, -1, 0)),
    ("diagonal-beyond", lambda x: x.diagonal(9, 1, 2), lambda a: np.diagonal(a, 9, 1, 2)),
    ("tril", lambda x: x.tril(), lambda a: np.tril(a)),
    ("tril-offset", lambda x: oxmera.tril(x, -1), lambda a: np.tril(a, -1)),
    ("triu", lambda x: x.triu(1), lambda a: np.triu(a, 1)),
    ("triu-negative", lambda x: oxmera.triu(x, diagonal=-2), lambda a: np.triu(a, -2)),
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
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (3, 1)),
    "movedim": lambda x: x.movedim(0, 1),
    "split": lambda x: x.split(2, 1)[1],
    "split-single": lambda x: x.split(5)[0],
    "chunk": lambda x: x.chunk(2)[0],
    "unbind": lambda x: x.unbind(1)[2],
    "diagonal": lambda x: x.diagonal(1),
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


#: Ops that copy, as in PyTorch (NumPy's flip and tile would share memory).
COPIES = {
    "repeat-ones": lambda x: x.repeat(1, 1),
    "tile-ones": lambda x: x.tile(1),
    "flip": lambda x: x.flip(0),
    "flip-nothing": lambda x: x.flip(()),
    "roll": lambda x: x.roll(1),
    "roll-zero": lambda x: x.roll(0),
    "tril": lambda x: x.tril(),
    "triu": lambda x: x.triu(),
}


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copying_ops_give_fresh_writable_memory(name):
    x = oxmera.zeros(2, 3)
    y = COPIES[name](x)
    assert not np.shares_memory(x.numpy(), y.numpy())
    assert y.numpy().flags.writeable
    before = x._version
    y._bump_version()
    assert x._version == before


def test_diagonal_is_a_writable_view():
    # As in PyTorch: a write into the diagonal reaches the input (NumPy's
    # own diagonal view is read-only).
    x = oxmera.zeros(3, 3)
    d = x.diagonal()
    assert d.numpy().flags.writeable
    d.numpy()[...] = [1.0, 2.0, 3.0]
    np.testing.assert_array_equal(x.numpy(), np.diag([1.0, 2.0, 3.0]))
    # the diagonal of a read-only (broadcast) view stays read-only
    b = oxmera.zeros(3).expand(3, 3)
    assert not b.diagonal().numpy().flags.writeable


def test_split_pieces_share_the_input_version_counter():
    x = oxmera.zeros(4, 2)
    pieces = x.split(2)
    before = x._version
    pieces[1]._bump_version()
    assert x._version == pieces[0]._version == before + 1


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
             "cat": oxmera.cat([x, x]), "stack": oxmera.stack([x, x]),
             "repeat": x.repeat(2, 1), "flip": x.flip(0), "roll": x.roll(1),
             "split": x.split(1)[0], "unbind": x.unbind()[1], "diagonal": x.diagonal(),
             "tril": x.tril(), "triu": x.triu()}
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
    ("squeeze-repeated", lambda x: x.squeeze((0, -2)), RuntimeError, "squeeze.*dim 0.*multiple"),
    ("flatten-order", lambda x: x.flatten(1, 0), RuntimeError, "flatten.*start_dim"),
    ("flatten-dim", lambda x: x.flatten(2), IndexError, "flatten.*range"),
    ("unflatten-sizes", lambda x: x.unflatten(1, (2, 2)), RuntimeError,
     r"unflatten.*\(2, 2\).*dim 1 \(3\).*\(2, 3\)"),
    ("unflatten-two-infer", lambda x: x.unflatten(1, (-1, -1)), RuntimeError, "unflatten"),
    ("unflatten-empty", lambda x: x.unflatten(1, ()), RuntimeError, "unflatten.*non-empty"),
    ("unflatten-dim", lambda x: x.unflatten(2, (3,)), IndexError, "unflatten.*range"),
    ("movedim-lengths", lambda x: x.movedim((0, 1), 0), RuntimeError, "movedim.*same number"),
    ("movedim-repeated", lambda x: x.movedim((0, 0), (0, 1)), RuntimeError,
     "movedim.*multiple"),
    ("movedim-dim", lambda x: x.movedim(2, 0), IndexError, "movedim.*range"),
    ("repeat-too-few", lambda x: x.repeat(2), RuntimeError, r"repeat.*\(1\).*\(2, 3\)"),
    ("repeat-negative", lambda x: x.repeat(-1, 1), RuntimeError, "repeat.*non-negative"),
    ("repeat-not-int", lambda x: x.repeat(1.5, 1), TypeError, "repeat"),
    ("tile-negative", lambda x: x.tile(-2), RuntimeError, "non-negative"),
    ("flip-repeated", lambda x: x.flip(0, -2), RuntimeError, "flip.*dim 0.*multiple"),
    ("flip-dim", lambda x: x.flip(2), IndexError, "flip.*range"),
    ("roll-no-dims-two-shifts", lambda x: x.roll((1, 2)), RuntimeError, "roll.*align"),
    ("roll-misaligned", lambda x: x.roll(1, (0, 1)), RuntimeError, "roll.*align"),
    ("roll-dim", lambda x: x.roll(1, 2), IndexError, "roll.*range"),
    ("split-sizes", lambda x: x.split([1, 2]), RuntimeError, r"split.*\(1, 2\).*2.*\(2, 3\)"),
    ("split-negative-size", lambda x: x.split([3, -1], 1), RuntimeError, "split"),
    ("split-zero", lambda x: x.split(0), RuntimeError, "split.*size 2"),
    ("split-dim", lambda x: x.split(1, 2), IndexError, "split.*range"),
    ("chunk-zero", lambda x: x.chunk(0), RuntimeError, "chunk.*greater than 0"),
    ("chunk-dim", lambda x: x.chunk(2, -3), IndexError, "chunk.*range"),
    ("unbind-dim", lambda x: x.unbind(2), IndexError, "unbind.*range"),
    ("diagonal-same-dims", lambda x: x.diagonal(0, 1, -1), RuntimeError,
     "diagonal.*identical"),
    ("diagonal-dim", lambda x: x.diagonal(0, 0, 2), IndexError, "diagonal.*range"),
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


# -- split, chunk, unbind ------------------------------------------------------------------------

def _pieces(result):
    assert isinstance(result, tuple)
    return [p.numpy() for p in result]


@pytest.mark.parametrize("size, split_size", [(5, 2), (6, 3), (3, 5), (4, 1), (0, 2), (0, 0)])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_split_by_size_matches_numpy(size, split_size, dim):
    shape = [2, 2]
    shape[dim] = size
    a = _arange(*shape)
    d = dim % 2
    bounds = list(range(split_size, size, split_size)) if split_size else []
    expected = np.split(a, bounds, axis=d)
    for got in (oxmera.tensor(a).split(split_size, dim), oxmera.split(oxmera.tensor(a),
                                                                       split_size, dim=dim)):
        pieces = _pieces(got)
        assert len(pieces) == len(expected)
        for p, e in zip(pieces, expected):
            np.testing.assert_array_equal(p, e)
            assert p.shape == e.shape


def test_split_by_sizes():
    a = _arange(2, 6)
    pieces = _pieces(oxmera.tensor(a).split([1, 0, 5], dim=1))
    for p, e in zip(pieces, (a[:, :1], a[:, 1:1], a[:, 1:])):
        np.testing.assert_array_equal(p, e)
    assert oxmera.zeros(0).split([]) == ()
    assert len(oxmera.zeros(3).split((3,))) == 1


@pytest.mark.parametrize("size, chunks, expected", [
    (5, 3, [2, 2, 1]), (6, 4, [2, 2, 2]), (6, 3, [2, 2, 2]), (2, 5, [1, 1]), (1, 1, [1]),
    (0, 3, [0, 0, 0]), (7, 1, [7])])
def test_chunk_sizes_follow_pytorch(size, chunks, expected):
    pieces = oxmera.arange(size).chunk(chunks)
    assert [p.shape[0] for p in pieces] == expected
    if size:
        np.testing.assert_array_equal(np.concatenate([p.numpy() for p in pieces]),
                                      np.arange(size))


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_unbind_matches_numpy(dim):
    a = _arange(2, 3, 4)
    pieces = oxmera.tensor(a).unbind(dim)
    expected = [np.take(a, i, axis=dim) for i in range(a.shape[dim])]
    assert len(pieces) == len(expected)
    for p, e in zip(pieces, expected):
        _check(p, e)
    assert oxmera.zeros(0, 3).unbind() == ()
    assert [p.shape for p in oxmera.tensor([1.0, 2.0]).unbind()] == [(), ()]


def test_split_is_one_node_and_unused_pieces_get_zero_gradient():
    x = leaf(_arange(6, 2))
    a, b, c = x.split(2)
    assert a.grad_fn is b.grad_fn is c.grad_fn
    assert a.grad_fn.name == "SplitBackward"
    (b * 3).sum().backward()
    expected = np.zeros((6, 2))
    expected[2:4] = 3
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_unbind_gradient_with_some_slices_used():
    x = leaf(_arange(3, 2))
    rows = x.unbind()
    (rows[0] * rows[2]).sum().backward()
    a = _arange(3, 2)
    np.testing.assert_array_equal(x.grad.numpy(), [a[2], [0.0, 0.0], a[0]])


def test_split_and_unbind_of_tensors_without_grad_record_nothing():
    x = oxmera.ones(4, 2)
    assert all(p.grad_fn is None and not p.requires_grad for p in x.split(1))
    assert all(p.grad_fn is None for p in x.unbind())


# -- the rest: 0-d and size-0 inputs, dtypes, errors that need their own inputs --------------------

def test_0d_and_size_0_inputs():
    s = oxmera.tensor(3.0)
    _check(s.flatten(), np.array([3.0], np.float32))
    _check(s.movedim(0, 0), np.float32(3.0))
    _check(s.repeat(2, 1), np.full((2, 1), 3.0, np.float32))
    _check(s.repeat(()), np.float32(3.0))
    _check(oxmera.tile(s, (3,)), np.full(3, 3.0, np.float32))
    _check(s.flip(0), np.float32(3.0))
    _check(s.roll(4), np.float32(3.0))
    e = oxmera.zeros(0, 3)
    _check(e.flatten(), np.zeros(0, np.float32))
    _check(e.repeat(2, 2), np.zeros((0, 6), np.float32))
    _check(e.roll(2), np.zeros((0, 3), np.float32))
    _check(e.roll(1, 0), np.zeros((0, 3), np.float32))
    _check(e.diagonal(), np.zeros(0, np.float32))
    _check(e.tril(), np.zeros((0, 3), np.float32))


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.bool_], ids=str)
def test_copying_ops_keep_the_dtype(dtype):
    x = oxmera.tensor((_arange(3, 3) % 2).astype(dtype))
    for out in (x.repeat(2, 1), x.tile(2), x.flip(0), x.roll(1), x.tril(), x.triu(),
                x.diagonal(), x.split(1)[0], x.unbind()[0], x.flatten()):
        assert out.dtype == dtype


LOW_RANK_ERRORS = [
    ("split-0d", lambda: oxmera.tensor(1.0, requires_grad=True).split(1), RuntimeError,
     "split.*1-dimensional"),
    ("chunk-0d", lambda: oxmera.tensor(1.0, requires_grad=True).chunk(1), RuntimeError,
     "chunk.*1-dimensional"),
    ("unbind-0d", lambda: oxmera.tensor(1.0, requires_grad=True).unbind(), IndexError,
     "unbind.*no dimensions"),
    ("unflatten-0d", lambda: oxmera.tensor(1.0, requires_grad=True).unflatten(0, (1,)),
     IndexError, "unflatten.*no dimensions"),
    ("diagonal-1d", lambda: oxmera.ones(3, requires_grad=True).diagonal(), IndexError,
     "diagonal.*at least 2 dimensions"),
    ("tril-1d", lambda: oxmera.ones(3, requires_grad=True).tril(), RuntimeError,
     r"tril.*at least 2 dimensions.*\(3,\)"),
    ("triu-0d", lambda: oxmera.triu(oxmera.tensor(1.0, requires_grad=True)), RuntimeError,
     "triu.*at least 2 dimensions"),
]


@pytest.mark.parametrize("call, error, pattern", [e[1:] for e in LOW_RANK_ERRORS],
                         ids=[e[0] for e in LOW_RANK_ERRORS])
def test_ops_that_need_dimensions_reject_low_rank_inputs(call, error, pattern):
    with unchanged():
        with pytest.raises(error, match=pattern):
            call()


# -- properties over random shapes ---------------------------------------------------------------

_shapes = st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple)


@settings(max_examples=40, deadline=None)
@given(shape=_shapes, data=st.data())
def test_split_then_cat_is_the_identity_and_gradients_route_back(shape, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[dim]
    split_size = data.draw(st.integers(1, 5)) if size else 0
    a = np.random.default_rng(0).standard_normal(shape)
    x = leaf(a)
    pieces = x.split(split_size, dim)
    np.testing.assert_array_equal(oxmera.cat(pieces, dim).detach().numpy(), a)
    assert sum(p.shape[dim] for p in pieces) == size
    used = data.draw(st.lists(st.integers(0, len(pieces) - 1), max_size=3))
    expected = np.zeros_like(a)
    start = [0]
    for p in pieces:
        start.append(start[-1] + p.shape[dim])
    if used:
        total = sum((pieces[i] * (i + 1)).sum() for i in used)
        total.backward()
        for i in used:
            index = [slice(None)] * len(shape)
            index[dim % len(shape)] = slice(start[i], start[i + 1])
            expected[tuple(index)] += i + 1
        np.testing.assert_array_equal(x.grad.numpy(), expected)


@settings(max_examples=40, deadline=None)
@given(shape=_shapes, data=st.data())
def test_movedim_flip_roll_repeat_match_numpy(shape, data):
    ndim = len(shape)
    a = np.arange(int(np.prod(shape))).reshape(shape)
    x = oxmera.tensor(a)
    count = data.draw(st.integers(0, ndim))
    source = data.draw(st.permutations(range(ndim)))[:count]
    destination = data.draw(st.permutations(range(ndim)))[:count]
    _check(x.movedim(tuple(source), tuple(destination)), np.moveaxis(a, source, destination))
    dims = tuple(data.draw(st.permutations(range(ndim)))[:data.draw(st.integers(0, ndim))])
    _check(x.flip(dims), np.flip(a, dims) if dims else a)
    shifts = tuple(data.draw(st.integers(-6, 6)) for _ in dims)
    if dims:
        _check(x.roll(shifts, dims), np.roll(a, shifts, dims))
        _check(x.roll(shifts, dims).roll(tuple(-s for s in shifts), dims), a)
    reps = tuple(data.draw(st.integers(0, 3)) for _ in range(ndim + data.draw(st.integers(0, 2))))
    _check(x.repeat(reps), np.tile(a, reps))


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(0, 4), min_size=2, max_size=4).map(tuple), data=st.data())
def test_diagonal_matches_numpy_and_its_gradient_scatters_back(shape, data):
    ndim = len(shape)
    dim1, dim2 = data.draw(st.permutations(range(ndim)))[:2]
    offset = data.draw(st.integers(-5, 5))
    a = np.random.default_rng(1).standard_normal(shape)
    x = leaf(a)
    d = x.diagonal(offset, dim1, dim2)
    expected = np.diagonal(a, offset, dim1, dim2)
    _check(d.detach(), expected)
    weights = np.random.default_rng(2).standard_normal(expected.shape)
    (d * oxmera.from_numpy(weights)).sum().backward()
    reference = np.zeros_like(a)
    view = np.diagonal(reference, offset, dim1, dim2)
    view.flags.writeable = True
    view[...] = weights
    np.testing.assert_array_equal(x.grad.numpy(), reference)
