"""The op registry: gradient-test coverage, non-differentiable ops, docs.

Every differentiable op oxmera itself defines (in an ``oxmera.*`` module;
ops that tests, docs or users register elsewhere are theirs) must have an
entry in
``_cases.GRADIENT_CASES`` (checked to first and second order by
``test_gradients.py``), and every non-differentiable op one in
``_cases.NO_GRADIENT_CALLS``: adding an op without its tests fails here.
"""
import doctest
import importlib

import numpy as np
import pytest

import oxmera
from oxmera.extend import op
from oxmera.ops import _registry
from oxmera.ops._registry import list_ops

from ._cases import GRADIENT_CASES, NO_GRADIENT_CALLS, Leaf
from ._helpers import leaf

OP_MODULES = [*oxmera.ops.__all__, "_utils"]


def _real_ops(differentiable=None, modules=("oxmera.",)):
    # Ops defined outside oxmera (by tests exercising the machinery, by the
    # docs' examples, by users) are not oxmera's to test; neither is the one
    # the docstring of oxmera.extend defines when its examples run.
    return [o for o in list_ops(differentiable=differentiable)
            if o.module.startswith(modules) and o.module != "oxmera.extend"]


def _missing(table, differentiable, modules=("oxmera.",)):
    return sorted(o.name for o in _real_ops(differentiable, modules) if not table.get(o.name))


def test_every_differentiable_op_has_gradient_cases():
    missing = _missing(GRADIENT_CASES, True)
    assert not missing, (f"differentiable ops without a gradient test: {missing}; add cases to "
                         f"GRADIENT_CASES in tests/ops/_cases.py")


#: What a gradient-case list must include (SPEC §5 ops, the acceptance bar):
#: a 0-d input, a size-0 input and a non-contiguous input; minus what an op
#: cannot take at all.
REQUIRED_KINDS = ("0-d", "size-0", "non-contiguous")
CANNOT_TAKE = {
    "matmul": {"0-d"},      # needs at least one dimension per operand
    "matmul_nt": {"0-d"}, "matmul_tn": {"0-d"},     # matrices (matmul's VJP)
    "sparse_dense_mm": {"0-d"},     # values (nnz,) times a matrix or vector
    "cat": {"0-d"},         # joins along an existing dimension
    # need at least one (split, unbind) or two (diagonal, tril, triu) dimensions
    "split": {"0-d"}, "unbind": {"0-d"}, "diagonal": {"0-d"}, "diagonal_backward": {"0-d"},
    "tril": {"0-d"}, "triu": {"0-d"},
    "linalg_inv": {"0-d"}, "linalg_det": {"0-d"}, "linalg_solve": {"0-d"}, "linalg_svd": {"0-d"},
    **dict.fromkeys(("linalg_eigh", "linalg_cholesky_ex", "linalg_qr", "linalg_lu_factor_ex",
                     "linalg_slogdet", "linalg_solve_triangular", "linalg_pinv", "linalg_lstsq",
                     "linalg_matrix_exp", "linalg_eig"), {"0-d"}),    # matrices
    # convolution and pooling need channel and spatial dimensions
    "conv1d": {"0-d"}, "conv2d": {"0-d"}, "conv_input_grad": {"0-d"}, "conv_weight_grad": {"0-d"},
    "conv3d": {"0-d"}, "im2col": {"0-d"}, "col2im": {"0-d"},
    "max_pool2d": {"0-d"}, "max_pool2d_backward": {"0-d"}, "max_pool2d_gather": {"0-d"},
    "avg_pool2d": {"0-d"}, "avg_pool2d_backward": {"0-d"},
    "max_pool1d": {"0-d"}, "max_pool3d": {"0-d"}, "adaptive_max_pool1d": {"0-d"},
    "adaptive_max_pool2d": {"0-d"}, "adaptive_max_pool3d": {"0-d"}, "max_unpool": {"0-d"},
    "fractional_max_pool2d": {"0-d"}, "fractional_max_pool3d": {"0-d"},
    # unfold's output, the gradient unfold_backward takes, always has its window dimension
    "unfold_backward": {"0-d"},
    # oxmera.scipy's matrix functions take square matrices
    "sqrtm": {"0-d"}, "logm": {"0-d"},
    # a last dimension of 2 with stride 1 (PyTorch's rule); a permuted batch is its own case
    "view_as_complex": {"0-d", "non-contiguous"},
    # the input has a class dimension
    "nll_loss": {"0-d"}, "cross_entropy_loss": {"0-d"},
    # a transform needs a dimension to run along
    **dict.fromkeys(("fft_c2c", "fft_r2c", "fft_c2r", "fft_resize"), {"0-d"}),
}


def _input_kinds(case):
    kinds = set()
    for spec in case.inputs:
        if isinstance(spec, Leaf):
            if spec.shape == ():
                kinds.add("0-d")
            if 0 in spec.shape:
                kinds.add("size-0")
            if spec.layout != "contiguous":
                kinds.add("non-contiguous")
    return kinds


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient_cases_cover_0d_size_0_and_non_contiguous_inputs(name):
    covered = set().union(*(_input_kinds(case) for case in GRADIENT_CASES[name]))
    missing = set(REQUIRED_KINDS) - covered - CANNOT_TAKE.get(name, set())
    assert not missing, f"the gradient cases of {name} have no input that is {sorted(missing)}"


def test_gradient_cases_are_for_registered_differentiable_ops():
    differentiable = {o.name for o in list_ops(differentiable=True)}
    assert set(GRADIENT_CASES) <= differentiable, set(GRADIENT_CASES) - differentiable


def test_every_non_differentiable_op_is_checked_not_to_record():
    missing = _missing(NO_GRADIENT_CALLS, False)
    assert not missing, f"non-differentiable ops missing from NO_GRADIENT_CALLS: {missing}"
    assert set(NO_GRADIENT_CALLS) == {o.name for o in _real_ops(differentiable=False)}


def test_a_new_op_without_cases_is_reported():
    @op(name="registry_probe_op")
    def probe(x):
        return x * 2

    try:
        # Counted when its module counts (as it would inside oxmera.ops).
        assert _missing(GRADIENT_CASES, True, ("oxmera.", __name__)) == ["registry_probe_op"]
        assert _missing(GRADIENT_CASES, True) == []
    finally:
        del _registry.REGISTRY["registry_probe_op"]
    assert _missing(GRADIENT_CASES, True) == []


def test_list_ops_partitions_the_registry():
    everything = list_ops()
    differentiable = list_ops(differentiable=True)
    non_differentiable = list_ops(differentiable=False)
    assert len(everything) == len(differentiable) + len(non_differentiable)
    assert {o.name for o in everything} == set(_registry.REGISTRY)
    assert all(o.differentiable for o in differentiable)
    assert not any(o.differentiable for o in non_differentiable)


@pytest.mark.parametrize("opdef", _real_ops(differentiable=True), ids=lambda o: o.name)
def test_differentiable_ops_have_a_vjp_and_a_readable_node_name(opdef):
    assert callable(opdef.vjp)
    assert callable(opdef.public) and opdef.public.op is opdef
    assert opdef.backward_name.endswith("Backward") and "_" not in opdef.backward_name
    assert repr(opdef) == f"<op {opdef.name} (differentiable)>"


#: Non-differentiable ops with a float result: PyTorch defines no derivative for them.
FLOAT_WITHOUT_GRADIENT = {"heaviside"}


@pytest.mark.parametrize("name", sorted(NO_GRADIENT_CALLS))
def test_non_differentiable_ops_never_record(name):
    opdef = _registry.REGISTRY[name]
    assert opdef.vjp is None
    with pytest.raises(TypeError, match="non-differentiable"):
        opdef.public.vjp(lambda ctx, grad, *args: grad)
    x, y = leaf([1.0, 2.0, 3.0]), leaf([2.0, 2.0, 2.0])
    for inputs in ((x, y), (x * 1.0, y), (x, y.detach())):
        out = NO_GRADIENT_CALLS[name](*inputs)
        assert isinstance(out, oxmera.Tensor)
        # comparisons and logic give bool, argmax/argmin/nonzero int64; the
        # few float ops PyTorch gives no derivative (heaviside) their float
        assert out.dtype == np.bool_ or out.dtype == np.int64 or name in FLOAT_WITHOUT_GRADIENT
        assert not out.requires_grad
        assert out.grad_fn is None and out.is_leaf
    # also inside a recorded backward (create_graph=True)
    with oxmera.enable_grad():
        out = NO_GRADIENT_CALLS[name](x * x, y)
        assert out.grad_fn is None


def test_op_names_give_node_names():
    assert _registry.REGISTRY["mul"].backward_name == "MulBackward"
    assert _registry.REGISTRY["sum_to"].backward_name == "SumToBackward"
    assert _registry.REGISTRY["broadcast_to"].backward_name == "BroadcastToBackward"


@pytest.mark.parametrize("opdef", _real_ops(), ids=lambda o: o.name)
def test_every_op_documents_itself_with_an_example(opdef):
    doc = opdef.public.__doc__ or ""
    assert doc.strip(), f"{opdef.name} has no docstring"
    assert "Examples" in doc and ">>>" in doc, f"{opdef.name} has no runnable example"


@pytest.mark.parametrize("module", OP_MODULES)
def test_docstring_examples_run(module):
    name = f"oxmera.ops.{module}"
    mod = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder(exclude_empty=True).find(mod, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0 or not any(o.module == name for o in list_ops())
    assert result.failed == 0, f"{result.failed} doctest example(s) failed in {name}"


# -- SPEC §5: every listed op exists -------------------------------------------------------

#: SPEC §5, group by group: each name must exist as ``oxmera.NAME`` (as
#: ``oxmera.linalg.NAME`` / ``oxmera.nn.functional.NAME`` for those groups).
SPEC_OPS = {
    "elementwise": """add sub mul div true_divide floor_divide remainder pow neg abs sign
        reciprocal sqrt rsqrt square exp exp2 expm1 log log2 log10 log1p sin cos tan arcsin asin
        arccos acos arctan atan atan2 sinh cosh tanh sigmoid erf maximum minimum clamp clip where
        lerp hypot logaddexp nan_to_num floor ceil round trunc""",
    "comparison": """eq ne lt le gt ge isclose allclose isnan isinf isfinite logical_and
        logical_or logical_xor logical_not""",
    "reduction": """sum mean prod max min amax amin argmax argmin var std logsumexp norm cumsum
        cumprod all any""",
    "linalg": "matmul mm bmm dot outer einsum tensordot",
    "linalg namespace": "norm inv det solve",
    "shape": """reshape view flatten unflatten squeeze unsqueeze transpose swapaxes permute
        movedim expand broadcast_to repeat tile flip roll contiguous cat concatenate stack split
        chunk unbind diagonal tril triu""",
    "indexing": "index_select gather scatter scatter_add masked_fill take_along_dim nonzero",
    "nn.functional": """linear relu leaky_relu elu gelu silu softplus sigmoid tanh softmax
        log_softmax dropout layer_norm batch_norm embedding one_hot pad conv1d conv2d max_pool2d
        avg_pool2d mse_loss l1_loss smooth_l1_loss nll_loss cross_entropy binary_cross_entropy
        binary_cross_entropy_with_logits""",
}

#: In-place Tensor methods SPEC §5 lists.
SPEC_INPLACE_METHODS = "add_ sub_ mul_ div_ pow_ clamp_ zero_ fill_ copy_".split()


def _namespace(group):
    return {"linalg namespace": oxmera.linalg, "nn.functional": oxmera.nn.functional}.get(
        group, oxmera)


@pytest.mark.parametrize("group", sorted(SPEC_OPS))
def test_every_spec_op_exists(group):
    namespace = _namespace(group)
    missing = [name for name in SPEC_OPS[group].split() if not callable(getattr(namespace, name,
                                                                                  None))]
    assert not missing, f"SPEC §5 {group} ops missing from {namespace.__name__}: {missing}"


def test_every_spec_inplace_method_exists():
    missing = [name for name in SPEC_INPLACE_METHODS if not callable(getattr(oxmera.Tensor, name,
                                                                               None))]
    assert not missing, f"SPEC §5 in-place methods missing from Tensor: {missing}"
