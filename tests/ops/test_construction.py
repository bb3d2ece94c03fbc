"""The scatter and construction families (``oxmera.ops.scatter``,
``oxmera.ops.construction``): errors, dtypes and what the gradient cases and
PyTorch comparisons in ``_cases_scatter.py`` / ``_cases_construction.py``
do not reach (Tensor methods, one-argument forms, nothing recorded on error).
"""
import numpy as np
import pytest

import oxmera

from ._helpers import leaf


def _ix(lib, values):
    return lib.tensor(np.array(values, dtype=np.int64))


def _x(lib, *shape):
    """A float32 tensor of ``lib`` (``.double()`` of it is another dtype)."""
    values = np.arange(1.0, 1.0 + np.prod(shape, dtype=np.int64)).reshape(shape)
    return lib.tensor(values.astype(np.float32))


#: Bad calls: (label, op name the message must name, expected error type, call(lib)).
BAD_CALLS = [
    ("index_add-out-of-range", "index_add", IndexError,
     lambda lib: _x(lib, 3).index_add(0, _ix(lib, [3]), _x(lib, 1))),
    ("index_add-source-shape", "index_add", RuntimeError,
     lambda lib: _x(lib, 2, 3).index_add(0, _ix(lib, [0]), _x(lib, 1, 2))),
    ("index_add-dtype", "index_add", RuntimeError,
     lambda lib: _x(lib, 3).index_add(0, _ix(lib, [0]), _x(lib, 1).double())),
    ("index_add-float-index", "index_add", RuntimeError,
     lambda lib: _x(lib, 3).index_add(0, lib.tensor([0.0]), _x(lib, 1))),
    ("index_add-dim", "index_add", IndexError,
     lambda lib: _x(lib, 3).index_add(1, _ix(lib, [0]), _x(lib, 1))),
    ("index_copy-out-of-range", "index_copy", IndexError,
     lambda lib: _x(lib, 2, 2).index_copy(1, _ix(lib, [-1]), _x(lib, 2, 1))),
    ("index_copy-2d-index", "index_copy", IndexError,
     lambda lib: _x(lib, 2, 2).index_copy(0, _ix(lib, [[0]]), _x(lib, 1, 2))),
    ("index_fill-out-of-range", "index_fill", IndexError,
     lambda lib: _x(lib, 2, 2).index_fill(0, _ix(lib, [2]), 1.0)),
    ("index_fill-tensor-value-1d", "masked_fill", RuntimeError,
     lambda lib: _x(lib, 2, 2).index_fill(0, _ix(lib, [1]), _x(lib, 2))),
    ("index_put-out-of-range", "index_put", IndexError,
     lambda lib: _x(lib, 2, 2).index_put((_ix(lib, [2]),), _x(lib, 1))),
    ("index_put-values-shape", "index_put", RuntimeError,
     lambda lib: _x(lib, 2, 3).index_put((_ix(lib, [0, 1]),), _x(lib, 2))),
    ("index_put-dtype", "index_put", RuntimeError,
     lambda lib: _x(lib, 2).index_put((_ix(lib, [0]),), _x(lib, 1).double())),
    ("index_put-not-a-tuple", "index_put", TypeError,
     lambda lib: _x(lib, 2).index_put(_ix(lib, [0]), _x(lib, 1))),
    ("index_fill-float-index", "index_fill", IndexError,
     lambda lib: _x(lib, 2, 2).index_fill(0, lib.tensor([1.0]), 1.0)),
    ("take-float-index", "take", RuntimeError, lambda lib: _x(lib, 2).take(lib.tensor([0.0]))),
    ("put-float-index", "put", RuntimeError,
     lambda lib: _x(lib, 2).put(lib.tensor([0.0]), _x(lib, 1))),
    ("scatter_reduce-float-index", "scatter_reduce", RuntimeError,
     lambda lib: _x(lib, 2).scatter_reduce(0, lib.tensor([0.0]), _x(lib, 1), "sum")),
    ("take-out-of-range", "take", IndexError,
     lambda lib: _x(lib, 2, 2).take(_ix(lib, [4]))),
    ("take-negative-out-of-range", "take", IndexError,
     lambda lib: lib.take(_x(lib, 2, 2), _ix(lib, [-5]))),
    ("put-count", "put", IndexError,
     lambda lib: _x(lib, 2, 2).put(_ix(lib, [0, 1]), _x(lib, 3))),
    ("put-out-of-range", "put", IndexError,
     lambda lib: _x(lib, 2, 2).put(_ix(lib, [4]), _x(lib, 1))),
    ("masked_select-int-mask", "masked_select", RuntimeError,
     lambda lib: _x(lib, 2).masked_select(_ix(lib, [1, 0]))),
    ("masked_select-broadcast", "masked_select", RuntimeError,
     lambda lib: _x(lib, 2, 3).masked_select(lib.tensor([True, False]))),
    ("masked_scatter-too-few", "masked_scatter", RuntimeError,
     lambda lib: _x(lib, 3).masked_scatter(lib.tensor([True, True, False]), _x(lib, 1))),
    ("masked_scatter-dtype", "masked_scatter", RuntimeError,
     lambda lib: _x(lib, 2).masked_scatter(lib.tensor([True, True]), _x(lib, 2).double())),
    ("scatter_reduce-bad-reduce", "scatter_reduce", RuntimeError,
     lambda lib: _x(lib, 2).scatter_reduce(0, _ix(lib, [0]), _x(lib, 1), "foo")),
    ("scatter_reduce-out-of-range", "scatter_reduce", RuntimeError,
     lambda lib: _x(lib, 2).scatter_reduce(0, _ix(lib, [2]), _x(lib, 1), "sum")),
    ("scatter_reduce-dtype", "scatter_reduce", RuntimeError,
     lambda lib: _x(lib, 2).scatter_reduce(0, _ix(lib, [1]), _x(lib, 1).double(), "sum")),
    ("scatter_reduce-ranks", "scatter_reduce", RuntimeError,
     lambda lib: _x(lib, 2, 2).scatter_reduce(0, _ix(lib, [1]), _x(lib, 1), "sum")),
    ("scatter-bad-reduce", "scatter", RuntimeError,
     lambda lib: _x(lib, 2).scatter(0, _ix(lib, [1]), _x(lib, 1), reduce="max")),
    ("diag-3d", "diag", RuntimeError, lambda lib: lib.diag(_x(lib, 2, 2, 2))),
    ("diag_embed-same-dims", "diag_embed", RuntimeError,
     lambda lib: lib.diag_embed(_x(lib, 2, 2), 0, 1, 1)),
    ("trace-1d", "trace", RuntimeError, lambda lib: lib.trace(_x(lib, 3))),
    ("tril_indices-negative", "tril_indices", RuntimeError, lambda lib: lib.tril_indices(-1, 2)),
    ("meshgrid-2d", "meshgrid", RuntimeError, lambda lib: lib.meshgrid(_x(lib, 2, 2),
                                                                       indexing="ij")),
    ("meshgrid-indexing", "meshgrid", RuntimeError,
     lambda lib: lib.meshgrid(_x(lib, 2), indexing="ji")),
    ("cartesian_prod-2d", "cartesian_prod", RuntimeError,
     lambda lib: lib.cartesian_prod(_x(lib, 2, 2), _x(lib, 2))),
    ("combinations-2d", "combinations", RuntimeError, lambda lib: lib.combinations(_x(lib, 2, 2))),
    ("combinations-negative-r", "combinations", RuntimeError,
     lambda lib: lib.combinations(_x(lib, 2), -1)),
    ("block_diag-3d", "block_diag", RuntimeError, lambda lib: lib.block_diag(_x(lib, 1, 1, 1))),
    ("cdist-1d", "cdist", RuntimeError, lambda lib: lib.cdist(_x(lib, 2), _x(lib, 2))),
    ("cdist-columns", "cdist", RuntimeError, lambda lib: lib.cdist(_x(lib, 2, 2), _x(lib, 2, 3))),
    ("cdist-negative-p", "cdist", RuntimeError,
     lambda lib: lib.cdist(_x(lib, 2, 2), _x(lib, 2, 2), p=-1.0)),
    ("cdist-int", "cdist", RuntimeError,
     lambda lib: lib.cdist(_x(lib, 2, 2).long(), _x(lib, 2, 2).long())),
    ("cross-size", "cross", RuntimeError, lambda lib: lib.cross(_x(lib, 2, 2), _x(lib, 2, 2),
                                                                dim=1)),
    ("cross-broadcast", "cross", RuntimeError,
     lambda lib: lib.cross(_x(lib, 2, 3), _x(lib, 3, 3), dim=1)),
    ("linalg-cross-dim", "linalg.cross", RuntimeError,
     lambda lib: lib.linalg.cross(_x(lib, 3, 2), _x(lib, 3, 2))),
    ("repeat_interleave-negative", "repeat_interleave", RuntimeError,
     lambda lib: _x(lib, 2).repeat_interleave(-1)),
    ("repeat_interleave-count-size", "repeat_interleave", RuntimeError,
     lambda lib: _x(lib, 3).repeat_interleave(_ix(lib, [1, 2]), dim=0)),
    ("repeat_interleave-output-size", "repeat_interleave", RuntimeError,
     lambda lib: _x(lib, 3).repeat_interleave(2, dim=0, output_size=5)),
    ("rot90-1d", "rot90", RuntimeError, lambda lib: lib.rot90(_x(lib, 3))),
    ("rot90-same-dims", "rot90", RuntimeError, lambda lib: lib.rot90(_x(lib, 2, 2), 1, [1, 1])),
    ("rot90-three-dims", "rot90", RuntimeError,
     lambda lib: lib.rot90(_x(lib, 2, 2, 2), 1, [0, 1, 2])),
    ("flipud-0d", "flipud", RuntimeError, lambda lib: lib.flipud(lib.tensor(1.0))),
    ("fliplr-1d", "fliplr", RuntimeError, lambda lib: lib.fliplr(_x(lib, 2))),
    ("hstack-tensor", "hstack", TypeError, lambda lib: lib.hstack(_x(lib, 2))),
    ("vstack-empty", "vstack", RuntimeError, lambda lib: lib.vstack([])),
    ("tensor_split-0d", "tensor_split", RuntimeError,
     lambda lib: lib.tensor_split(lib.tensor(1.0), 2)),
    ("tensor_split-zero-sections", "tensor_split", RuntimeError,
     lambda lib: lib.tensor_split(_x(lib, 3), 0)),
    ("tensor_split-float-tensor", "tensor_split", RuntimeError,
     lambda lib: lib.tensor_split(_x(lib, 3), lib.tensor([1.0]))),
    ("hsplit-indivisible", "hsplit", RuntimeError, lambda lib: lib.hsplit(_x(lib, 2, 3), 2)),
    ("vsplit-1d", "vsplit", RuntimeError, lambda lib: lib.vsplit(_x(lib, 4), 2)),
    ("dsplit-2d", "dsplit", RuntimeError, lambda lib: lib.dsplit(_x(lib, 2, 2), 2)),
]


@pytest.mark.parametrize("label, opname, error, call", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_calls_raise_the_error_pytorch_raises(label, opname, error, call):
    with pytest.raises(error) as info:
        call(oxmera)
    assert f"{opname}(" in str(info.value) or f"{opname}:" in str(info.value), str(info.value)
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(Exception) as theirs:
        call(torch)
    # ours may be an OpError (both ValueError and RuntimeError) where PyTorch raises either
    assert isinstance(info.value, type(theirs.value)), (type(info.value), type(theirs.value))


def test_a_failed_call_records_nothing_and_changes_nothing():
    x = leaf([1.0, 2.0, 3.0])
    source = leaf([5.0])
    with pytest.raises(IndexError):
        oxmera.index_add(x, 0, oxmera.tensor([7]), source)
    with pytest.raises(RuntimeError):
        oxmera.masked_scatter(x, oxmera.tensor([True, True, False]), source)
    assert x.tolist() == [1.0, 2.0, 3.0] and x._version == 0 and x.grad is None
    assert source.grad is None and source._version == 0


def test_out_of_place_ops_leave_their_input_alone():
    x = oxmera.zeros(3)
    for out in (x.index_add(0, oxmera.tensor([1]), oxmera.ones(1)),
                x.index_copy(0, oxmera.tensor([1]), oxmera.ones(1)),
                x.index_fill(0, oxmera.tensor([1]), 1.0),
                x.index_put((oxmera.tensor([1]),), oxmera.tensor(1.0)),
                x.put(oxmera.tensor([1]), oxmera.ones(1)),
                x.masked_scatter(oxmera.tensor([False, True, False]), oxmera.ones(1)),
                x.scatter_reduce(0, oxmera.tensor([1]), oxmera.ones(1), "sum")):
        assert out.tolist() == [0.0, 1.0, 0.0]
    assert x.tolist() == [0.0, 0.0, 0.0] and x._version == 0


def test_scatter_reduce_amax_without_self_ignores_a_tie_with_the_forgotten_value():
    # out[0] comes from src alone; input's equal value takes no part (PyTorch 2.13
    # splits the gradient with it all the same, losing half; we give src all of it)
    x = leaf([3.0, 0.0])
    src = leaf([3.0])
    out = x.scatter_reduce(0, oxmera.tensor([0]), src, "amax", include_self=False)
    out.sum().backward()
    assert src.grad.tolist() == [1.0] and x.grad.tolist() == [0.0, 1.0]


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32, np.bool_])
def test_scatter_reduce_keeps_the_dtype(dtype):
    x = oxmera.tensor(np.array([1, 0, 1], dtype=dtype))
    src = oxmera.tensor(np.array([1, 1], dtype=dtype))
    for reduce in ("sum", "prod", "amax", "amin") + (("mean",) if dtype != np.bool_ else ()):
        out = x.scatter_reduce(0, oxmera.tensor([1, 1]), src, reduce, include_self=False)
        assert out.dtype == dtype


def test_tril_and_triu_indices_match_numpy():
    for row, col, offset in [(4, 3, 0), (3, 5, -2), (2, 2, 3), (0, 0, 0)]:
        for ours, theirs in ((oxmera.tril_indices, np.tril_indices),
                             (oxmera.triu_indices, np.triu_indices)):
            got = ours(row, col, offset)
            assert got.dtype == np.int64 and got.shape[0] == 2
            assert np.array_equal(got.numpy(), np.stack(theirs(row, offset, col)))


def test_index_builders_refuse_other_devices():
    assert oxmera.tril_indices(2, 2, device="cpu").shape == (2, 3)
    with pytest.raises(RuntimeError, match="CPU"):
        oxmera.triu_indices(2, 2, device="cuda")


def test_one_tensor_in_atleast_gives_a_tensor_several_give_a_tuple():
    x = oxmera.tensor(1.0)
    assert isinstance(oxmera.atleast_2d(x), oxmera.Tensor)
    assert isinstance(oxmera.atleast_2d([x]), tuple)
    assert [t.shape for t in oxmera.atleast_3d(x, oxmera.ones(2))] == [(1, 1, 1), (1, 2, 1)]


def test_splits_are_views_of_their_input():
    x = oxmera.arange(6.0)
    first, _ = x.tensor_split(2)
    first[0] = 9.0
    assert x[0].item() == 9.0


def test_repeat_interleave_counts_only_form():
    out = oxmera.repeat_interleave(oxmera.tensor([1, 0, 2]))
    assert out.tolist() == [0, 2, 2] and out.dtype == np.int64


def test_cdist_gradient_at_zero_distance_is_zero():
    x = leaf([[1.0, 2.0], [1.0, 2.0]])
    oxmera.cdist(x, x.detach()).sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))
    assert x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_tensor_methods_exist_where_pytorch_has_them():
    for name in ("index_add", "index_copy", "index_fill", "index_put", "masked_select",
                 "masked_scatter", "scatter_reduce", "take", "put", "diag", "diag_embed",
                 "diagflat", "trace", "cross", "kron", "repeat_interleave", "rot90", "flipud",
                 "fliplr", "hsplit", "vsplit", "dsplit", "tensor_split"):
        assert callable(getattr(oxmera.Tensor, name)), name
