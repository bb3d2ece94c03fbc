"""One example call per generated ``oxmera.numpy`` function, checked against NumPy.

The same table makes the docstring examples (each compares ``onp.NAME`` on
a float64 tensor with ``np.NAME`` on its array) and drives
``tests/onp/test_namespace.py``, which compares values and runs
gradcheck where the inputs are floating. ``{x}`` stands for the input.
"""
import numpy as np

#: The inputs an example may start from.
INPUTS = {
    "M": "[[0.5, 1.5], [2.5, 3.5]]",
    "v": "[0.5, 1.5, 2.5, 4.0]",
    "S": "[[4.0, 1.0], [1.0, 3.0]]",      # symmetric positive definite
    "U": "[[0.25, 0.5], [0.75, 0.125]]",   # inside (-1, 1)
    "G": "[[1.5, 2.0], [2.5, 3.0]]",       # above 1
    "I": "[[1, 2], [3, 4]]",               # integers
    "B": "[[True, False], [True, True]]",
    "C": "[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]",  # rows of 3-vectors
    "R": "[[0.3, 1.2], [2.7, 3.6]]",       # away from rounding's and remainders' jumps
    "Z": "[[0.5 + 1j, 1.5 - 0.5j], [2.5 + 0.25j, -1.5j]]",   # complex
}

#: name -> (input, call arguments, how to compare: "close" or "equal").
TABLE = {}


def _add(names, input="M", call="{x}", compare="close"):
    for name in names.split():
        TABLE[name] = (input, call, compare)


# ufuncs
_add("abs absolute arctan asinh arcsinh atan cbrt ceil cos cosh deg2rad degrees exp exp2 expm1 "
     "fabs floor log log10 log1p log2 negative positive rad2deg radians reciprocal rint sign "
     "signbit sin sinh spacing sqrt square tan tanh trunc isfinite isinf isnan logical_not "
     "fix i0 sinc isneginf isposinf nan_to_num")
_add("conj conjugate real imag angle iscomplex isreal real_if_close", "Z")
# rounding away from the halves, where finite differences would straddle a jump
_add("round around rint", "R")
_add("arccos arcsin arctanh acos asin atanh", "U")
_add("arccosh acosh", "G")
_add("add subtract multiply divide true_divide power pow float_power maximum minimum fmax fmin "
     "hypot arctan2 atan2 logaddexp logaddexp2 copysign nextafter heaviside equal not_equal "
     "less less_equal greater greater_equal logical_and "
     "logical_or logical_xor", call="{x}, {x}[::-1]")
_add("fmod mod remainder floor_divide", "R", "{x}, 0.7")
_add("divmod modf frexp", call="{x}")
TABLE["divmod"] = ("M", "{x}, 0.75", "close")
TABLE["ldexp"] = ("M", "{x}, 2", "close")
_add("bitwise_and bitwise_or bitwise_xor gcd lcm left_shift right_shift bitwise_left_shift "
     "bitwise_right_shift", "I", "{x}, {x}[::-1]", "equal")
_add("invert bitwise_not bitwise_invert bitwise_count", "I", compare="equal")
_add("matmul", call="{x}, {x}")
_add("vecdot matvec", call="{x}, {x}[0]")
_add("vecmat", call="{x}[0], {x}")
TABLE["isnat"] = ("M", "np.array(['2020-01-01', 'NaT'], dtype='datetime64[D]')", "equal")

# reductions and statistics
_add("sum prod mean max min amax amin ptp nansum nanprod nanmean nanmax nanmin all any "
     "count_nonzero", call="{x}, axis=0")
_add("var std nanvar nanstd", call="{x}, axis=1, ddof=1")
_add("median nanmedian", "v")
_add("argmax argmin nanargmax nanargmin", call="{x}, axis=1", compare="equal")
_add("cumsum cumprod nancumsum nancumprod cumulative_sum cumulative_prod", call="{x}, axis=1")
_add("average", call="{x}, axis=0, weights=[1.0, 3.0]")
_add("quantile nanquantile", "v", "{x}, 0.3")
_add("percentile nanpercentile", "v", "{x}, 30.0")
_add("cov corrcoef", "C")
_add("trace", "M")
_add("sort", call="{x}[::-1], axis=0")
_add("argsort argpartition", "v", "{x}[::-1]" + "", "equal")
TABLE["argpartition"] = ("v", "{x}, 1", "equal")
TABLE["partition"] = ("v", "{x}[::-1], 3", "close")
_add("lexsort", "I", "({x}[0], {x}[1])", "equal")
_add("searchsorted", "v", "{x}, 1.0", "equal")
_add("digitize", "v", "{x}, [1.0, 2.0]", "equal")
_add("bincount", "I", "{x}.reshape(-1)", "equal")
_add("histogram", "v", "{x}, bins=2")
_add("histogram_bin_edges", "v", "{x}, bins=2")
_add("histogram2d", "v", "{x}, {x}, bins=2")
_add("histogramdd", "M", "{x}, bins=2")
_add("unique unique_values", "v", compare="equal")
_add("unique_counts unique_inverse unique_all", "v", compare="equal")
_add("isin", "v", "{x}, [1.5]", "equal")
_add("in1d", "v", "{x}, [1.5]", "equal")        # NumPy before 2.4 (isin's old name)
_add("intersect1d union1d setdiff1d setxor1d", "v", "{x}, [1.5, 7.0]")
_add("trim_zeros", "v", "{x}")

# shape and joining
_add("ravel transpose matrix_transpose fliplr flipud rot90 atleast_1d atleast_2d atleast_3d "
     "squeeze copy ascontiguousarray asfortranarray asarray_chkfinite require diagflat "
     "tril triu flatnonzero argwhere nonzero diag", "M")
_add("reshape", call="{x}, (4,)")
_add("resize", call="{x}, (3,)")
_add("swapaxes", call="{x}, 0, 1")
_add("moveaxis rollaxis", call="{x}, 0, 1")
_add("permute_dims", call="{x}, (1, 0)")
_add("expand_dims", call="{x}, 1")
_add("flip roll", call="{x}, 1")
TABLE["flip"] = ("M", "{x}, 1", "close")
_add("tile", call="{x}, 2")
_add("repeat", call="{x}, 2, axis=0")
_add("broadcast_to", call="{x}, (3, 2, 2)")
_add("broadcast_arrays", call="{x}, {x}[0]")
_add("concatenate concat stack vstack hstack dstack row_stack column_stack", call="({x}, {x})")
_add("unstack", call="{x}")
_add("block", call="[[{x}, {x}]]")
_add("split array_split hsplit vsplit", call="{x}, 2")
_add("dsplit", call="{x}.reshape(1, 2, 2), 2")
_add("diagonal", call="{x}")
_add("take", call="{x}, [0, 3]")
_add("take_along_axis", call="{x}, np.array([[1], [0]]), axis=1")
_add("choose", "I", "[0, 1], [[1.0, 2.0], [3.0, 4.0]]")
_add("select", call="[{x} > 1.0], [{x}]")
_add("piecewise", call="{x}, [{x} > 1.0], [lambda t: t * 2.0, 0.0]")
_add("where", call="{x} > 1.0, {x}, 0.0")
_add("extract", call="{x} > 1.0, {x}")
_add("compress", call="[True, False], {x}, axis=0")
_add("delete", call="{x}, 1, axis=1")
_add("insert", call="{x}, 1, 9.0, axis=1")
_add("clip", call="{x}, 1.0, 3.0")
_add("pad", call="{x}, 1")
_add("append", call="{x}, [[7.0, 8.0]], axis=0")
_add("apply_along_axis", call="np.sum, 0, {x}")
_add("apply_over_axes", call="np.sum, {x}, [0]")
_add("ediff1d", "v")
_add("diff", call="{x}, axis=0")
_add("gradient", "v")
_add("trapezoid", "v")
_add("trapz", "v")          # NumPy before 2.4 (trapezoid's old name)
_add("unwrap", "v")
_add("interp", "v", "[0.7, 2.0, 5.0], {x}, [1.0, 2.0, 0.5, 3.0]")
_add("convolve correlate", "v", "{x}, [1.0, -2.0, 0.5]")
_add("polyval", "v", "{x}, 0.5")
_add("polyadd polysub polymul polydiv", "v", "{x}, [1.0, 2.0]")
_add("polyder polyint roots poly", "v")
_add("polyfit", "v", "[0.0, 1.0, 2.0, 3.0], {x}, 1")
_add("vander", "v", "{x}, 3")
_add("kron outer inner dot vdot tensordot", call="{x}, {x}")
TABLE["tensordot"] = ("M", "{x}, {x}, axes=1", "close")
_add("cross", "C", "{x}, {x}[::-1]")
_add("einsum", call="'ij,jk->ik', {x}, {x}")
_add("einsum_path", call="'ij,jk->ik', {x}, {x}", compare="equal")
_add("linspace geomspace logspace", "v", "{x}[0], {x}[3], 5")
_add("meshgrid", "v", "{x}, {x}[:2]")
_add("ix_", "I", "[0, 1], [1]", "equal")
_add("astype", call="{x}, np.float64")
_add("allclose isclose array_equal array_equiv", call="{x}, {x}")
_add("shape ndim size", compare="equal")
_add("may_share_memory shares_memory", call="{x}, {x}", compare="equal")
_add("result_type min_scalar_type iscomplexobj isrealobj isfortran common_type", compare="equal")
_add("can_cast", call="{x}, np.float32", compare="equal")
_add("array2string array_repr array_str", compare="equal")
_add("sort_complex", "Z")

# creation (no tensor input: NumPy's values as tensors)
_add("zeros ones empty identity eye tri", call="3", compare="shape")
TABLE["full"] = ("M", "(2, 2), {x}[0, 0]", "close")
_add("zeros_like ones_like empty_like", compare="shape")
TABLE["full_like"] = ("M", "{x}, 7.0", "close")
_add("arange", call="5", compare="equal")
_add("indices", call="(2, 3)", compare="equal")
_add("fromfunction", call="lambda i, j: i + j, (2, 3)", compare="equal")
_add("fromiter", call="range(4), dtype=np.float64", compare="equal")
_add("frombuffer", call="b'abcd', dtype=np.uint8", compare="equal")
_add("fromstring", call="'1 2 3', dtype=np.float64, sep=' '", compare="equal")
_add("hamming hanning bartlett blackman", call="5")
_add("kaiser", call="5, 2.0")
_add("mask_indices", call="3, np.triu", compare="equal")
_add("tril_indices triu_indices diag_indices", call="3", compare="equal")
_add("tril_indices_from triu_indices_from diag_indices_from", compare="equal")
_add("ravel_multi_index", "I", "{x}, (5, 5)", "equal")
_add("unravel_index", "I", "{x}, (5, 5)", "equal")
_add("packbits", "B", compare="equal")
_add("unpackbits", "I", "np.uint8(3)", "equal")
_add("array asarray asanyarray")


#: Examples written out: functions of files (the table's form compares values only).
WRITTEN = {
    "save": ">>> import io\n>>> buf = io.BytesIO()\n>>> onp.save(buf, onp.arange(3.0))\n"
            ">>> _ = buf.seek(0)\n>>> onp.load(buf)\ntensor([0., 1., 2.], dtype=float64)",
    "savez": ">>> import io\n>>> buf = io.BytesIO()\n>>> onp.savez(buf, a=onp.arange(2))\n"
             ">>> _ = buf.seek(0)\n>>> onp.load(buf)['a']\narray([0, 1])",
    "savetxt": ">>> import io\n>>> buf = io.StringIO()\n"
               ">>> onp.savetxt(buf, onp.eye(2), fmt='%d')\n"
               ">>> buf.getvalue()\n'1 0\\n0 1\\n'",
    "loadtxt": ">>> import io\n>>> onp.loadtxt(io.StringIO('1 2\\n3 4'))\n"
               "tensor([[1., 2.],\n        [3., 4.]], dtype=float64)",
    "genfromtxt": ">>> import io\n>>> onp.genfromtxt(io.StringIO('1 nan\\n3 4'))\n"
                  "tensor([[ 1., nan],\n        [ 3.,  4.]], dtype=float64)",
    "fromregex": ">>> import io\n"
                 ">>> onp.fromregex(io.StringIO('a1 b2'), r'(\\d)', [('n', np.int64)])\n"
                 "array([(1,), (2,)], dtype=[('n', '<i8')])",
    "fromfile": ">>> import os, tempfile\n>>> path = os.path.join(tempfile.mkdtemp(), 'x.bin')\n"
                ">>> np.arange(3.0).tofile(path)\n>>> onp.fromfile(path)\n"
                "tensor([0., 1., 2.], dtype=float64)",
}
WRITTEN["load"] = WRITTEN["save"]
WRITTEN["savez_compressed"] = WRITTEN["savez"].replace("savez", "savez_compressed")


def _numpy_expression(call):
    return call.replace("{x}", "x.numpy()")


def _onp_expression(call):
    return call.replace("{x}", "x")


def example_section(name):
    """The ``Examples`` section of ``oxmera.numpy.NAME``'s docstring (from :data:`TABLE`)."""
    if name in WRITTEN:
        return "Examples\n--------\n>>> import oxmera.numpy as onp\n" + WRITTEN[name] + "\n"
    if name not in TABLE:
        return ""
    input_key, call, compare = TABLE[name]
    data = INPUTS[input_key]
    ours = f"onp.{name}({_onp_expression(call)})"
    theirs = f"np.{name}({_numpy_expression(call)})"
    if compare == "shape":
        check = f"onp.shape({ours}) == np.shape({theirs})"
    elif compare == "equal":
        check = f"same({ours}, {theirs})"
    else:
        check = f"same({ours}, {theirs}, close=True)"
    lines = ["Examples", "--------",
             ">>> import oxmera.numpy as onp",
             ">>> from oxmera.numpy._examples import same",
             f">>> x = onp.asarray({data})",
             f">>> {check}",
             "True"]
    return "\n".join(lines) + "\n"


def same(ours, theirs, close=False):
    """Whether an ``oxmera.numpy`` result matches NumPy's (values, and tensors for arrays)."""
    from oxmera._core.autograd import Tensor
    if isinstance(theirs, tuple) or (isinstance(theirs, list) and isinstance(ours, (list, tuple))):
        return (isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
                and all(same(o, t, close) for o, t in zip(ours, theirs)))
    if isinstance(theirs, (np.ndarray, np.generic)) and np.asarray(theirs).dtype.kind in "biufc":
        if not isinstance(ours, Tensor):
            return False
        values = ours.detach().numpy()
        if values.shape != np.shape(theirs):
            return False
        if close:
            return bool(np.allclose(values, theirs, equal_nan=True))
        return bool(np.array_equal(values, theirs))
    if isinstance(ours, Tensor):
        ours = ours.detach().numpy()
    try:
        return bool(np.all(ours == theirs))
    except (TypeError, ValueError):
        return False

# numpy.fft
_add("fft.fft fft.ifft fft.rfft fft.ihfft fft.fft2 fft.ifft2 fft.rfft2 fft.fftn fft.ifftn "
     "fft.rfftn fft.fftshift fft.ifftshift")
_add("fft.irfft fft.hfft fft.irfft2 fft.irfftn", "Z")
_add("fft.fftfreq fft.rfftfreq", call="4, 0.5")

# numpy.linalg
_add("linalg.cholesky linalg.inv linalg.det linalg.slogdet linalg.eigh linalg.eigvalsh "
     "linalg.svd linalg.svdvals linalg.pinv linalg.qr linalg.norm linalg.cond "
     "linalg.matrix_rank linalg.matrix_norm linalg.vector_norm linalg.matrix_transpose "
     "linalg.eig linalg.eigvals linalg.tensorinv linalg.diagonal linalg.trace", "S")
TABLE["linalg.tensorinv"] = ("S", "{x}, ind=1", "close")
_add("linalg.solve linalg.lstsq linalg.matmul linalg.tensordot", "S", "{x}, {x}")
TABLE["linalg.tensordot"] = ("S", "{x}, {x}, axes=1", "close")
_add("linalg.tensorsolve", "S", "{x}, {x}[0]")
_add("linalg.matrix_power", "S", "{x}, 3")
_add("linalg.multi_dot", "S", "[{x}, {x}, {x}]")
_add("linalg.outer linalg.vecdot", "S", "{x}[0], {x}[1]")
_add("linalg.cross", "C", "{x}, {x}[::-1]")
