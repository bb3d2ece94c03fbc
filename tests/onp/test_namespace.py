"""``oxmera.numpy`` against NumPy: every NumPy function is offered (or listed as not),
each gives NumPy's values, and gradients flow (or a TypeError names the function)."""
import numpy as np
import pytest

import oxmera
import oxmera.numpy as onp
from oxmera.autograd import gradcheck
from oxmera.numpy._examples import INPUTS, TABLE, _numpy_expression, _onp_expression, same


def _numpy_functions():
    return sorted(n for n in dir(np) if not n.startswith("_") and callable(getattr(np, n))
                  and not isinstance(getattr(np, n), type))


@pytest.mark.parametrize("name", _numpy_functions())
def test_every_numpy_function_is_offered_or_listed(name):
    if name in onp.NOT_OFFERED:
        assert not hasattr(onp, name) or name in ("info",)
        return
    if name in onp._NUMPY_ITSELF:       # no array data: NumPy's own function, reachable
        assert getattr(onp, name) is getattr(np, name)
        return
    assert name in onp.__all__, f"numpy.{name} is neither in oxmera.numpy nor in NOT_OFFERED"
    assert callable(getattr(onp, name))


def test_linalg_is_complete():
    assert set(onp.linalg.__all__) == set(np.linalg.__all__)


def test_fft_is_complete():
    assert set(onp.fft.__all__) == set(np.fft.__all__)
    assert all(callable(getattr(onp.fft, name)) for name in np.fft.__all__)


def _offered():
    names = [n for n in onp.__all__ if callable(getattr(onp, n))
             and getattr(onp, n) is not getattr(np, n, None)]
    return (names + [f"linalg.{n}" for n in onp.linalg.__all__ if n != "LinAlgError"]
            + [f"fft.{n}" for n in onp.fft.__all__])


#: Files: no example call (they read and write files; test_files covers one).
_FILES = {"fromfile", "fromregex", "genfromtxt", "load", "loadtxt", "save", "savetxt", "savez",
          "savez_compressed"}


def _ours(name, x):
    call = TABLE[name][1]
    return eval(f"onp.{name}({_onp_expression(call)})", {"onp": onp, "np": np, "x": x})


def _call(name, x):
    input_key, call, compare = TABLE[name]
    env = {"onp": onp, "np": np, "x": x}
    return _ours(name, x), eval(f"np.{name}({_numpy_expression(call)})", env), compare


@pytest.mark.parametrize("name", _offered())
def test_values_match_numpy(name):
    if name in _FILES:
        pytest.skip("file input/output: test_files")
    assert name in TABLE, f"oxmera.numpy.{name} has no example call in _examples.TABLE"
    x = onp.asarray(eval(INPUTS[TABLE[name][0]]))
    ours, theirs, compare = _call(name, x)
    if compare == "shape":
        assert np.shape(ours) == np.shape(theirs)
    else:
        assert same(ours, theirs, close=compare == "close"), (ours, theirs)


def _float_leaves(result):
    if isinstance(result, oxmera.Tensor):
        return [result] if result.dtype.kind in "fc" else []
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _float_leaves(r)]
    return []


@pytest.mark.parametrize("name", _offered())
def test_gradient_flows_or_type_error_names_it(name):
    if name in _FILES or TABLE[name][0] not in ("M", "v", "S", "U", "G", "C", "R", "Z"):
        pytest.skip("no floating input")
    data = eval(INPUTS[TABLE[name][0]])
    dtype = oxmera.complex128 if TABLE[name][0] == "Z" else oxmera.float64
    x = oxmera.tensor(data, dtype=dtype, requires_grad=True)
    try:
        result = _ours(name, x)
    except TypeError as error:
        assert f"oxmera.numpy.{name}" in str(error) or f"numpy.{name}" in str(error), error
        return
    leaves = [t for t in _float_leaves(result) if t.requires_grad]
    if not leaves:
        # Nothing recorded: only for results that carry no gradient (ints, bools,
        # piecewise-constant values such as floor and sign).
        assert all(not t.requires_grad for t in _float_leaves(result))
        return

    def fn(t):
        if TABLE[name][0] == "S":
            # Symmetric-matrix functions (cholesky, eigh) read one triangle:
            # perturb symmetrically, as PyTorch's gradients assume.
            t = (t + t.transpose(0, 1)) / 2
        result = _ours(name, t)
        if name == "linalg.eig" and result[1].is_complex():
            # NumPy 2.5's eig is complex: a vector is defined up to a phase, and
            # only phase-free functions of it have a gradient (PyTorch's rule).
            result = (result[0], result[1].abs())
        return tuple(o for o in _float_leaves(result) if o.requires_grad)
    assert gradcheck(fn, (x,), eps=1e-6, atol=1e-5, rtol=1e-3)


def test_out_is_refused():
    with pytest.raises(TypeError, match="out= is not supported"):
        onp.sum(onp.ones(3), out=np.zeros(()))


def test_no_gradient_rule_raises_naming_the_function():
    x = oxmera.tensor([1.0, 2.0], dtype=oxmera.float64, requires_grad=True)
    with pytest.raises(TypeError, match=r"oxmera\.numpy\.unwrap has no gradient rule"):
        onp.unwrap(x)
    # Without a gradient to lose, NumPy computes it.
    assert same(onp.unwrap(x.detach()), np.unwrap([1.0, 2.0]), close=True)
    with oxmera.no_grad():
        assert same(onp.unwrap(x), np.unwrap([1.0, 2.0]), close=True)


def test_size_is_numpys():
    t = oxmera.zeros(2, 3)
    assert onp.size(t) == 6 and onp.size(t, 1) == 3
    assert t.size() == (2, 3)


def test_results_are_tensors_in_numpys_dtype():
    assert isinstance(onp.zeros(3), oxmera.Tensor)
    assert onp.array([1.0, 2.0]).dtype == np.float64
    assert onp.arange(3).dtype == np.int64
    assert isinstance(onp.sum([1.0, 2.0]), oxmera.Tensor)

