"""The Tensor API PyTorch programs use beyond the ops: ``oxmera.Size``, dtype queries
(``finfo``, ``iinfo``, ``promote_types``, ``result_type``, ``can_cast``), type
queries, print options, the legacy tensor types and ``Tensor.type``, ``tensor()``
from any sequence, and the layout methods (``stride``, ``storage_offset`` ...).

Compared with PyTorch where it is installed (``torch`` fixture: those tests
are skipped without it), and with closed forms or NumPy otherwise.
(The ops among them, ``unfold``, ``view(dtype)`` and the composed views, are
checked in ``tests/ops/_cases_tensor_api.py`` too.)
"""
import collections
import copy
import pickle
import sys
import warnings

import numpy as np
import pytest

import oxmera

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
LEGACY = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
          "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
          "uint8": "ByteTensor", "int8": "CharTensor", "bool": "BoolTensor"}


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def _dtype(lib, name):
    return getattr(lib, name)


@pytest.fixture(autouse=True)
def _restore_print_options():
    saved = oxmera.get_printoptions()
    yield
    oxmera.set_printoptions(**saved)


# -- Size -------------------------------------------------------------------------------

def test_shape_and_size_are_sizes_that_behave_as_tuples():
    t = oxmera.zeros(2, 3, 4)
    for s in (t.shape, t.size()):
        assert type(s) is oxmera.Size and isinstance(s, tuple)
        assert s == (2, 3, 4) and (2, 3, 4) == s and s != (2, 3)
        assert hash(s) == hash((2, 3, 4))
        assert {s: 1}[(2, 3, 4)] == 1
        assert list(s) == [2, 3, 4] and len(s) == 3 and s[-1] == 4
        assert s.numel() == 24 and s.index(3) == 1 and s.count(2) == 1
    assert type(t.size(1)) is int and t.size(1) == 3
    assert oxmera.tensor(1.0).shape == () and oxmera.tensor(1.0).shape.numel() == 1
    assert oxmera.zeros(0, 5).shape.numel() == 0


def test_size_repr_is_pytorchs_and_str_is_the_tuples():
    s = oxmera.zeros(2, 3).shape
    assert repr(s) == "oxmera.Size([2, 3])"
    assert repr(oxmera.tensor(1.0).shape) == "oxmera.Size([])"
    # str (print, f-strings, error messages) keeps the tuple's look
    assert str(s) == "(2, 3)" and f"{s}" == "(2, 3)" and str(oxmera.Size([5])) == "(5,)"


def test_size_slices_sums_and_repeats_are_sizes(torch):
    ours, theirs = oxmera.Size([2, 3, 4]), torch.Size([2, 3, 4])
    for fn in (lambda s: s[1:], lambda s: s[::-1], lambda s: s[:0], lambda s: s + (5,),
               lambda s: (1,) + s, lambda s: s * 2, lambda s: 2 * s, lambda s: s + s):
        a, b = fn(ours), fn(theirs)
        assert type(a) is oxmera.Size and type(b) is torch.Size
        assert tuple(a) == tuple(b)
    assert type(ours[0]) is int
    with pytest.raises(TypeError):
        ours + [5]


def test_size_construction(torch):
    for arg in ([2, 3], (), range(3), oxmera.tensor([2, 3])):
        theirs = torch.Size(torch.tensor([2, 3]) if isinstance(arg, oxmera.Tensor) else arg)
        assert oxmera.Size(arg) == tuple(theirs)
    assert oxmera.Size() == ()
    for bad in ([2.5], ["a"], [None]):
        with pytest.raises(TypeError, match="item 0"):
            oxmera.Size(bad)
        with pytest.raises(TypeError):
            torch.Size(bad)


def test_size_pickles_and_copies_as_a_size():
    s = oxmera.zeros(2, 3).shape
    for other in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert type(other) is oxmera.Size and other == s


def test_shape_stays_cheap():
    # Tensor.shape is read on hot paths, so it runs no Python code: the Size
    # is built in C from the array's shape (measured once: 47 ns against
    # NumPy's 41 ns for its own tuple; a timed bound here would flake under load).
    t = oxmera.zeros(2, 3)
    t.shape
    calls = []
    sys.setprofile(lambda frame, event, arg: calls.append((event, frame.f_code.co_name)))
    try:
        shape = t.shape
    finally:
        sys.setprofile(None)
    assert [c for c in calls if c[0] == "call"] == [], calls
    assert shape == (2, 3) and type(shape) is oxmera.Size


# -- finfo / iinfo / promotion ------------------------------------------------------------

@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_torch(torch, name):
    ours, theirs = oxmera.finfo(_dtype(oxmera, name)), torch.finfo(_dtype(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_finfo_default_and_closed_forms():
    assert oxmera.finfo().dtype == "float32"
    info = oxmera.finfo(oxmera.float32)
    assert info.eps == 2.0 ** -23 and info.tiny == 2.0 ** -126 and info.bits == 32
    assert info.max == float(np.finfo(np.float32).max) and info.min == -info.max
    oxmera.set_default_dtype(oxmera.float64)
    try:
        assert oxmera.finfo().dtype == "float64"
    finally:
        oxmera.set_default_dtype(oxmera.float32)


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8"])
def test_iinfo_matches_torch(torch, name):
    ours, theirs = oxmera.iinfo(_dtype(oxmera, name)), torch.iinfo(_dtype(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(ours, attr) == getattr(theirs, attr), attr
    assert repr(ours) == repr(theirs)


def test_finfo_iinfo_errors(torch):
    for ours, theirs in ((lambda: oxmera.finfo(oxmera.int32), lambda: torch.finfo(torch.int32)),
                         (lambda: oxmera.iinfo(oxmera.float32),
                          lambda: torch.iinfo(torch.float32)),
                         (lambda: oxmera.iinfo(oxmera.bool), lambda: torch.iinfo(torch.bool))):
        with pytest.raises(TypeError):
            theirs()
        with pytest.raises(TypeError, match="info"):
            ours()
    with pytest.raises(TypeError, match="expected a dtype"):
        oxmera.finfo("no such dtype")


@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_and_can_cast_match_torch(torch, a):
    for b in DTYPES:
        ours = oxmera.promote_types(_dtype(oxmera, a), _dtype(oxmera, b))
        theirs = torch.promote_types(_dtype(torch, a), _dtype(torch, b))
        assert ours.name == str(theirs).removeprefix("torch."), (a, b)
        assert oxmera.can_cast(_dtype(oxmera, a), _dtype(oxmera, b)) == \
            torch.can_cast(_dtype(torch, a), _dtype(torch, b)), (a, b)


def test_result_type_matches_torch(torch):
    operands = [lambda lib: lib.tensor([1, 2]), lambda lib: lib.tensor([1.0], dtype=lib.float16),
                lambda lib: lib.tensor(1.0, dtype=lib.float64), lambda lib: lib.tensor(True),
                lambda lib: lib.tensor([1], dtype=lib.uint8), lambda lib: 2.5,
                lambda lib: 3, lambda lib: False]
    for x in operands:
        for y in operands:
            if not isinstance(x(oxmera), oxmera.Tensor) and not isinstance(y(oxmera),
                                                                           oxmera.Tensor):
                continue
            ours = oxmera.result_type(x(oxmera), y(oxmera))
            theirs = torch.result_type(x(torch), y(torch))
            assert ours.name == str(theirs).removeprefix("torch.")
    with pytest.raises(TypeError, match="result_type"):
        oxmera.result_type(oxmera.zeros(1), "a")


# -- type queries ---------------------------------------------------------------------------

def test_type_queries_match_torch(torch):
    for name in DTYPES:
        for lib in (oxmera, torch):
            t = lib.zeros(2, dtype=_dtype(lib, name))
            assert lib.is_tensor(t) and t.is_floating_point() == name.startswith("float")
            assert lib.is_floating_point(t) == name.startswith("float")
            assert lib.is_complex(t) is False and t.is_complex() is False
    assert not oxmera.is_tensor([1.0]) and not oxmera.is_tensor(np.zeros(2))
    assert oxmera.is_tensor(oxmera.nn.Parameter(oxmera.zeros(1)))
    for lib in (oxmera, torch):
        with pytest.raises(TypeError):
            lib.is_floating_point(1.0)
        with pytest.raises(TypeError):
            lib.numel([1, 2])
        assert lib.numel(lib.zeros(2, 3)) == 6


def test_is_nonzero_matches_torch(torch):
    for values in ([0.0], [0.5], 0, 3, True, False, [[-1]]):
        assert oxmera.is_nonzero(oxmera.tensor(values)) == torch.is_nonzero(torch.tensor(values))
        assert oxmera.tensor(values).is_nonzero() == torch.tensor(values).is_nonzero()
    for values in ([1, 2], []):
        with pytest.raises(RuntimeError):
            torch.is_nonzero(torch.tensor(values))
        with pytest.raises(RuntimeError, match="is_nonzero.*ambiguous"):
            oxmera.is_nonzero(oxmera.tensor(values))


# -- print options ------------------------------------------------------------------------

def test_precision_threshold_edgeitems_linewidth():
    x = oxmera.tensor([1.12345, 2.5])
    assert "1.1235" in repr(x)
    oxmera.set_printoptions(precision=2)
    assert "1.12" in repr(x) and "1.123" not in repr(x)
    oxmera.set_printoptions(threshold=5)
    assert repr(oxmera.arange(10)) == "tensor([0, 1, 2, ..., 7, 8, 9], dtype=int64)"
    oxmera.set_printoptions(edgeitems=1)
    assert repr(oxmera.arange(10)) == "tensor([0, ..., 9], dtype=int64)"
    oxmera.set_printoptions(profile="default", linewidth=20)
    lines = repr(oxmera.arange(20)).split("\n")
    assert len(lines) > 3 and all(len(line) <= 20 for line in lines[:-1])
    oxmera.set_printoptions(profile="default")
    assert repr(oxmera.arange(10)).count("\n") == 0


def test_profiles_are_pytorchs(torch):
    import torch._tensor_str as torch_printing
    saved = torch_printing.get_printoptions()
    try:
        for profile in ("short", "full", "default"):
            oxmera.set_printoptions(profile=profile)
            torch.set_printoptions(profile=profile)
            assert oxmera.get_printoptions() == torch_printing.get_printoptions()
        oxmera.set_printoptions(precision=6, sci_mode=True, profile="short")
        torch.set_printoptions(precision=6, sci_mode=True, profile="short")
        assert oxmera.get_printoptions() == torch_printing.get_printoptions()
        oxmera.set_printoptions(threshold=10)     # sci_mode goes back to None, as in torch
        torch.set_printoptions(threshold=10)
        assert oxmera.get_printoptions() == torch_printing.get_printoptions()
    finally:
        torch.set_printoptions(**saved)


def test_full_profile_never_summarizes_and_sci_mode_forces_the_notation():
    big = oxmera.arange(2000)
    assert "..." in repr(big)
    oxmera.set_printoptions(profile="full")
    assert "..." not in repr(big) and "1999" in repr(big)
    oxmera.set_printoptions(profile="default", sci_mode=True)
    assert repr(oxmera.tensor([1.0, 100.0])) == "tensor([1.0000e+00, 1.0000e+02], dtype=float32)"
    assert repr(oxmera.tensor([1, 2])) == "tensor([1, 2], dtype=int64)"
    oxmera.set_printoptions(sci_mode=False)
    assert "e" not in repr(oxmera.tensor([1e-5, 1e5])).replace("tensor", "").replace("dtype", "")


def test_bad_print_options_change_nothing():
    before = oxmera.get_printoptions()
    for kwargs, error in (({"profile": "long"}, ValueError), ({"precision": -1}, ValueError),
                          ({"threshold": 2.5}, TypeError), ({"sci_mode": "yes"}, TypeError),
                          ({"precision": 2, "linewidth": "80"}, TypeError)):
        with pytest.raises(error, match="set_printoptions"):
            oxmera.set_printoptions(**kwargs)
        assert oxmera.get_printoptions() == before


# -- legacy types and Tensor.type -----------------------------------------------------------

@pytest.mark.parametrize("name", DTYPES)
def test_legacy_type_names_and_isinstance_match_torch(torch, name):
    legacy = LEGACY[name]
    ours, theirs = oxmera.zeros(2, dtype=_dtype(oxmera, name)), \
        torch.zeros(2, dtype=_dtype(torch, name))
    assert ours.type() == theirs.type() == f"torch.{legacy}"
    for other in LEGACY.values():
        assert isinstance(ours, getattr(oxmera, other)) == isinstance(theirs,
                                                                      getattr(torch, other))
    assert getattr(oxmera, legacy).dtype == _dtype(oxmera, name)
    assert not isinstance(np.zeros(2), getattr(oxmera, legacy))


@pytest.mark.parametrize("legacy", sorted(LEGACY.values()))
def test_legacy_constructors_match_torch(torch, legacy):
    ours, theirs = getattr(oxmera, legacy), getattr(torch, legacy)
    for args in ((2, 3), (oxmera.Size([2, 3]),), (0,), ()):
        t_args = tuple(torch.Size(a) if isinstance(a, oxmera.Size) else a for a in args)
        a, b = ours(*args), theirs(*t_args)
        assert type(a) is oxmera.Tensor and tuple(a.shape) == tuple(b.shape)
        assert a.dtype.name == str(b.dtype).removeprefix("torch.")
    for data in ([1, 0], [[1.5, 2.0]], (2, 3), collections.deque([1, 1]), range(3),
                 np.array([1, 0], dtype=np.int32)):
        a, b = ours(data), theirs(data)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.dtype.name == str(b.dtype).removeprefix("torch.")


def test_legacy_constructor_of_a_tensor_and_errors(torch):
    x = oxmera.tensor([1.0, 2.0])
    alias = oxmera.FloatTensor(x)
    assert np.shares_memory(alias.numpy(), x.numpy())
    for ours, theirs in ((lambda: oxmera.FloatTensor(oxmera.tensor([1, 2])),
                          lambda: torch.FloatTensor(torch.tensor([1, 2]))),
                         (lambda: oxmera.FloatTensor(2.5), lambda: torch.FloatTensor(2.5))):
        with pytest.raises(TypeError):
            theirs()
        with pytest.raises(TypeError, match="FloatTensor"):
            ours()
    with pytest.raises(RuntimeError):
        torch.LongTensor(-1)
    with pytest.raises(RuntimeError, match="negative dimension -1"):
        oxmera.LongTensor(-1)
    with pytest.raises(RuntimeError, match="CPU"):
        oxmera.FloatTensor(2, device="cuda")
    assert oxmera.FloatTensor(2, device="cpu").shape == (2,)
    assert repr(oxmera.FloatTensor) == "<class 'oxmera.FloatTensor'>"
    assert pickle.loads(pickle.dumps(oxmera.FloatTensor)) is oxmera.FloatTensor


def test_type_converts_like_torch(torch):
    for target in ("torch.IntTensor", "torch.DoubleTensor", "torch.BoolTensor"):
        a = oxmera.tensor([0.0, 1.5]).type(target)
        b = torch.tensor([0.0, 1.5]).type(target)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.type() == b.type() == target
    assert oxmera.zeros(2).type("oxmera.LongTensor").dtype == oxmera.int64
    assert oxmera.zeros(2).type(oxmera.float64).dtype == oxmera.float64
    assert oxmera.zeros(2).type(oxmera.ByteTensor).dtype == oxmera.uint8
    assert oxmera.zeros(2).type(dtype="torch.HalfTensor").dtype == oxmera.float16
    x = oxmera.zeros(2)
    assert x.type(oxmera.float32) is x and x.type("torch.FloatTensor") is x
    with pytest.raises(ValueError):
        torch.zeros(2).type("float")
    with pytest.raises(ValueError, match="invalid type"):
        oxmera.zeros(2).type("float")
    with pytest.raises(RuntimeError, match="CPU"):
        oxmera.zeros(2).type("torch.cuda.FloatTensor")


def test_type_of_float_types_is_differentiable_and_type_as():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = x.type(oxmera.DoubleTensor)
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    assert x.type_as(oxmera.zeros(1, dtype=oxmera.int8)).dtype == oxmera.int8
    with pytest.raises(TypeError, match="type_as"):
        x.type_as(np.zeros(1))


# -- tensor() from any sequence -------------------------------------------------------------

SEQUENCES = [
    lambda lib: collections.deque([1, 2]),
    lambda lib: range(4),
    lambda lib: (lib.tensor(1.0), lib.tensor([2.0])),
    lambda lib: [lib.tensor(1.0, requires_grad=True), 2],
    lambda lib: [lib.tensor(1, dtype=lib.float64), 2],
    lambda lib: [lib.tensor(1, dtype=lib.int32), lib.tensor(2, dtype=lib.int32)],
    lambda lib: [lib.tensor(1, dtype=lib.int32), 2],
    lambda lib: [[lib.tensor(1), 2], (3, 4)],
    lambda lib: [1, lib.tensor(2.5)],
    lambda lib: [lib.tensor(True), 1],
    lambda lib: [(lib.tensor([1.0]), 2), collections.deque([3, 4])],
    lambda lib: [np.float64(1.0), lib.tensor(2.0)],
    lambda lib: [np.float64(1.0), 2.0],
    lambda lib: [[np.int32(1)], [np.int32(2)]],
    lambda lib: [],
    lambda lib: [[], []],
]


@pytest.mark.parametrize("index", range(len(SEQUENCES)))
def test_tensor_from_sequences_matches_torch(torch, index):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # torch warns of the requires-grad element
        theirs = torch.tensor(SEQUENCES[index](torch))
    ours = oxmera.tensor(SEQUENCES[index](oxmera))
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert not ours.requires_grad


def test_tensor_from_sequences_with_dtype_and_errors(torch):
    ours = oxmera.tensor([oxmera.tensor(1.0), 2], dtype=oxmera.float64)
    assert ours.dtype == oxmera.float64 and ours.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError):
        torch.tensor([torch.ones(2), torch.ones(2)])
    with pytest.raises(ValueError, match="one-element"):
        oxmera.tensor([oxmera.ones(2), oxmera.ones(2)])
    with pytest.raises(TypeError, match="could not"):
        oxmera.tensor(x for x in range(3))
    with pytest.raises(TypeError, match="could not"):
        oxmera.tensor([oxmera.tensor(1.0), [1, 2]])


# -- layout: stride, storage_offset, is_contiguous, data_ptr ---------------------------------

VIEWS = [
    ("plain", lambda t: t),
    ("transpose", lambda t: t.transpose(0, 2)),
    ("slice", lambda t: t[:, 1:, ::2]),
    ("select", lambda t: t.select(1, 2)),
    ("narrow", lambda t: t.narrow(2, 1, 2)),
    ("expand", lambda t: t[:, :1].expand(2, 5, 4)),
    ("unfold", lambda t: t.unfold(2, 2, 1)),
    ("unfold-step", lambda t: t[1].unfold(0, 2, 2)),
    ("t-of-row", lambda t: t[0, 0:1].t()),
    ("index-0d", lambda t: t[1, 2, 3]),
    ("permute", lambda t: t.permute(1, 2, 0)),
    ("view-of-slice", lambda t: t[1].view(12)),
    ("squeeze-tuple", lambda t: t[:1, :, :1].squeeze((0, 2))),
    ("none-index", lambda t: t[None, :, None]),
    ("none-last", lambda t: t[..., None]),
    ("expand-new-leading", lambda t: t.expand(1, 2, 3, 4)),
    ("expand-new-leading-broadcast", lambda t: t[1].expand(2, 1, 3, 4)),
    ("unsqueeze", lambda t: t.unsqueeze(1)),
    ("size-0", lambda t: t[:, :0]),
]


@pytest.mark.parametrize("name,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_layout_queries_match_torch(torch, name, fn):
    ours = fn(oxmera.arange(24.0).reshape(2, 3, 4))
    base_t = torch.arange(24.0).reshape(2, 3, 4)
    theirs = fn(base_t)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert ours.stride() == theirs.stride()
    for d in range(-ours.dim(), ours.dim()):
        assert ours.stride(d) == theirs.stride(d)
    assert ours.storage_offset() == theirs.storage_offset()
    assert ours.is_contiguous() == theirs.is_contiguous()
    assert ours.nelement() == theirs.nelement() and ours.ndimension() == theirs.ndimension()


def test_data_ptr_and_storage_offset_follow_the_memory():
    x = oxmera.zeros(3, 4)
    assert x.data_ptr() == x.numpy().ctypes.data
    y = x[1:, 2:]
    assert y.data_ptr() - x.data_ptr() == 6 * x.element_size() == y.storage_offset() * 4
    z = oxmera.from_numpy(np.zeros(10)[3:])          # a user's NumPy view: its owner counts
    assert z.storage_offset() == 3
    assert x.is_contiguous(memory_format=None)
    with pytest.raises(TypeError):
        x.stride(1.5)
    with pytest.raises(IndexError, match="stride"):
        oxmera.tensor(1.0).stride(0)
    with pytest.raises(RuntimeError, match="memory format"):
        x.is_contiguous(memory_format="channels_last")


# -- views share memory and version, as in PyTorch --------------------------------------------

@pytest.mark.parametrize("make", [lambda x: x.narrow(1, 1, 2), lambda x: x.select(0, 1),
                                  lambda x: x.unfold(1, 2, 1), lambda x: x.t(),
                                  lambda x: x.adjoint(), lambda x: x.swapdims(0, 1),
                                  lambda x: x.ravel(), lambda x: x.view_as(x.ravel()),
                                  lambda x: x.view(oxmera.int64)])
def test_views_write_through_and_share_the_version(make):
    x = oxmera.zeros(3, 4, dtype=oxmera.float64)
    v = make(x)
    assert np.shares_memory(v.numpy(), x.numpy())
    before = x._version
    v.zero_()           # a write through the view bumps the base's version
    assert x._version > before


def test_unfold_writes_reach_the_base():
    x = oxmera.arange(6.0)
    w = x.unfold(0, 2, 2)
    w[1, 0] = 10.0
    assert x.tolist() == [0.0, 1.0, 10.0, 3.0, 4.0, 5.0]


# -- view(dtype) -------------------------------------------------------------------------------

@pytest.mark.parametrize("src,dst", [("float32", "int32"), ("float32", "int16"),
                                     ("float32", "float64"), ("int64", "float64"),
                                     ("int8", "bool"), ("float16", "int16"),
                                     ("int16", "uint8"), ("uint8", "float32")])
def test_view_dtype_matches_torch(torch, src, dst):
    values = np.arange(1, 17).reshape(4, 4)
    ours = oxmera.tensor(values, dtype=_dtype(oxmera, src)).view(_dtype(oxmera, dst))
    theirs = torch.tensor(values, dtype=_dtype(torch, src)).view(_dtype(torch, dst))
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_view_dtype_is_not_differentiable_and_its_errors_match_torch(torch):
    x = oxmera.zeros(2, 3, requires_grad=True)
    v = x.view(oxmera.int32)
    assert not v.requires_grad and v.grad_fn is None
    assert x.view(dtype=oxmera.float32).grad_fn is None
    assert x.view(np.float32).dtype == oxmera.float32
    for make in (lambda lib: lib.zeros(2, 3).view(lib.float64),
                 lambda lib: lib.zeros(3, 2).t().view(lib.int16),
                 lambda lib: lib.tensor(1.0).view(lib.int16)):
        with pytest.raises(RuntimeError):
            make(torch)
        with pytest.raises(RuntimeError, match="view"):
            make(oxmera)
    with pytest.raises(TypeError, match="not both"):
        x.view(2, dtype=oxmera.int32)


# -- errors of the composed views match PyTorch's types ----------------------------------------

BAD_CALLS = [
    lambda lib: lib.arange(7.0).unfold(0, 8, 2),
    lambda lib: lib.arange(7.0).unfold(0, 3, 0),
    lambda lib: lib.arange(7.0).unfold(0, -1, 1),
    lambda lib: lib.zeros(2, 5).unfold(2, 2, 1),
    lambda lib: lib.tensor(5.0).unfold(0, 2, 1),
    lambda lib: lib.arange(7.0).narrow(0, 5, 3),
    lambda lib: lib.arange(7.0).narrow(0, 8, 0),
    lambda lib: lib.arange(7.0).narrow(0, 2, -1),
    lambda lib: lib.narrow(lib.tensor(5.0), 0, 0, 1),
    lambda lib: lib.arange(7.0).select(0, 7),
    lambda lib: lib.tensor(5.0).select(0, 0),
    lambda lib: lib.zeros(2, 3, 4).t(),
    lambda lib: lib.zeros(3).adjoint(),
    lambda lib: lib.zeros(2, 3).view_as(lib.zeros(3, 3)),
    lambda lib: lib.zeros(2, 3).expand_as(lib.zeros(3, 3)),
]


@pytest.mark.parametrize("index", range(len(BAD_CALLS)))
def test_errors_are_pytorchs_types(torch, index):
    with pytest.raises(Exception) as theirs:
        BAD_CALLS[index](torch)
    with pytest.raises(type(theirs.value)):
        BAD_CALLS[index](oxmera)


def test_narrow_select_take_0d_integer_tensors_and_record_nothing_on_error():
    x = oxmera.arange(6.0, requires_grad=True)
    assert x.narrow(0, oxmera.tensor(2), 3).tolist() == [2.0, 3.0, 4.0]
    assert x.select(0, oxmera.tensor(-1)).item() == 5.0
    with pytest.raises(TypeError, match="narrow"):
        x.narrow(0, 1.5, 2)
    with pytest.raises(IndexError, match=r"select\(\): index 9"):
        x.select(0, 9)
    assert x.grad is None and x._version == 0


# -- the legacy constructor forms of Tensor, set_default_tensor_type ---------------------------

@pytest.mark.parametrize("args", [(2, 3), (0,), (), (oxmera.Size([2, 3]),), ([1, 2],), ((2, 3),),
                                  ([[1.5], [2]],), ([True],), (collections.deque([1, 2]),),
                                  (np.array([1, 2]),), (np.array([1.5], np.float64),)])
def test_tensor_constructor_forms_match_torch(torch, args):
    theirs = torch.Tensor(*(torch.Size(a) if isinstance(a, oxmera.Size) else a for a in args))
    ours = oxmera.Tensor(*args)
    assert type(ours) is oxmera.Tensor and tuple(ours.shape) == tuple(theirs.shape)
    if theirs.numel() and not (len(args) and isinstance(args[0], (int, oxmera.Size))):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    if not isinstance(args[0] if args else None, np.ndarray):
        # NumPy arrays keep their dtype in oxmera (torch.Tensor makes them float32)
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")


def test_tensor_constructor_keeps_oxmeras_keywords_and_refuses_negative_sizes(torch):
    assert oxmera.Tensor([1.0], oxmera.float64).dtype == oxmera.float64
    assert oxmera.Tensor([1], dtype=oxmera.int64).dtype == oxmera.int64
    assert oxmera.Tensor(2, 3, dtype=oxmera.float64).dtype == oxmera.float64
    assert oxmera.Tensor([1.0], requires_grad=True).requires_grad
    assert oxmera.Tensor(oxmera.tensor([1, 2])).dtype == torch_dtype_name(torch.Tensor(
        torch.tensor([1, 2])).dtype)
    with pytest.raises(RuntimeError):
        torch.Tensor(-1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        oxmera.Tensor(2, -1)
    assert oxmera.nn.Parameter(oxmera.Tensor(3, 2)).shape == (3, 2)


def torch_dtype_name(dtype):
    return np.dtype(str(dtype).removeprefix("torch."))


def test_set_default_tensor_type_matches_torch(torch):
    try:
        for t in ("DoubleTensor", "FloatTensor"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")     # torch warns once per process
                torch.set_default_tensor_type(getattr(torch, t))
            with pytest.warns(UserWarning, match="set_default_dtype"):
                oxmera.set_default_tensor_type(getattr(oxmera, t))
            assert oxmera.get_default_dtype().name == str(torch.get_default_dtype())[6:]
        with pytest.warns(UserWarning):
            oxmera.set_default_tensor_type("torch.DoubleTensor")
        assert oxmera.tensor([1.0]).dtype == oxmera.float64
        for bad in (oxmera.LongTensor, "torch.IntTensor"):
            with pytest.raises(TypeError, match="floating"):
                oxmera.set_default_tensor_type(bad)
        with pytest.raises(TypeError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.set_default_tensor_type(torch.LongTensor)
    finally:
        oxmera.set_default_dtype(oxmera.float32)
        torch.set_default_dtype(torch.float32)
