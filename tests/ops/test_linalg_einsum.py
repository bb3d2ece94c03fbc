"""einsum: every subscript form against ``np.einsum`` (and PyTorch's for the
forms NumPy refuses), the three call forms, gradients against closed forms
(diagonals, traces, broadcast labels), output memory, dtypes, errors, and a
hypothesis property over random contractions.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oxmera
from oxmera.autograd import gradcheck

from ._cases_linalg import EINSUM_CASES
from ._helpers import leaf, unchanged

F32, F64, I64 = oxmera.float32, oxmera.float64, oxmera.int64


def _operands(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("label, equation, shapes",
                         [c for c in EINSUM_CASES if c[0] != "ellipsis-summed"],
                         ids=[c[0] for c in EINSUM_CASES if c[0] != "ellipsis-summed"])
def test_einsum_matches_numpy(label, equation, shapes):
    arrays = _operands(shapes)
    expected = np.einsum(equation, *arrays)
    result = oxmera.einsum(equation, *[oxmera.tensor(a) for a in arrays])
    assert isinstance(result, oxmera.Tensor) and result.dtype == F64
    assert result.shape == np.shape(expected)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-12, atol=1e-12)


def test_einsum_sums_an_ellipsis_left_out_of_the_output():
    # NumPy refuses '...i->i'; PyTorch sums the ellipsis dims.
    values = _operands([(2, 3, 4)])[0]
    np.testing.assert_allclose(oxmera.einsum("...i->i", oxmera.tensor(values)).numpy(),
                               values.sum((0, 1)))


def test_einsum_call_forms():
    a, b = _operands([(2, 3), (3, 4)])
    expected = a @ b
    ta, tb = oxmera.tensor(a), oxmera.tensor(b)
    for result in (oxmera.einsum("ij,jk->ik", ta, tb), oxmera.einsum("ij,jk->ik", [ta, tb]),
                   oxmera.einsum("ij,jk->ik", (ta, tb)),
                   oxmera.einsum(ta, [0, 1], tb, [1, 2], [0, 2]),
                   oxmera.einsum(ta, [0, 1], tb, [1, 2]),
                   oxmera.einsum("ij,jk->ik", a, tb)):
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(oxmera.einsum(ta, [Ellipsis, 1], [1]).numpy(), a.sum(0))


def test_einsum_implicit_output_is_alphabetical_uppercase_first():
    values = _operands([(2, 3)])[0]
    assert oxmera.einsum("ba", oxmera.tensor(values)).shape == (3, 2)
    assert oxmera.einsum("bA", oxmera.tensor(values)).shape == (3, 2)
    assert oxmera.einsum("Ab", oxmera.tensor(values)).shape == (2, 3)


def test_einsum_output_owns_its_memory():
    x = oxmera.eye(3)
    for equation in ("ii->i", "ij->ji", "ij->ij", "ij"):
        out = oxmera.einsum(equation, x)
        assert not np.shares_memory(out.numpy(), x.numpy())
        assert out.numpy().flags.writeable


def test_einsum_dtypes_promote():
    a = oxmera.tensor([[1, 2], [3, 4]])
    assert oxmera.einsum("ij,jk", a, a).dtype == I64
    assert oxmera.einsum("ij,jk", a, oxmera.ones(2, 2)).dtype == F32
    assert oxmera.einsum("i,i", oxmera.ones(2), oxmera.ones(2, dtype=F64)).dtype == F64


# -- gradients against closed forms ------------------------------------------------------------

def test_einsum_trace_and_diagonal_gradients():
    x = leaf(np.arange(9.0).reshape(3, 3))
    oxmera.einsum("ii", x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3))
    x = leaf(np.arange(9.0).reshape(3, 3))
    (oxmera.einsum("ii->i", x) * oxmera.tensor([1.0, 2.0, 3.0], dtype=F64)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.diag([1.0, 2.0, 3.0]))
    x = leaf(np.ones((2, 2, 3)))
    oxmera.einsum("iij->j", x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(2)[:, :, None] * np.ones(3))


def test_einsum_gradient_of_a_label_only_one_operand_has():
    x = leaf(np.ones((2, 3)))
    oxmera.einsum("ij->i", x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))


@pytest.mark.parametrize("shapes", [((2, 3), (2, 1)), ((2, 1), (2, 3)), ((1, 3), (2, 3))],
                         ids=str)
def test_einsum_gradients_of_broadcast_labels_have_operand_shapes(shapes):
    a, b = (leaf(v) for v in _operands(shapes))
    oxmera.einsum("ij,ij->i", a, b).sum().backward()
    assert a.grad.shape == shapes[0] and b.grad.shape == shapes[1]
    full = np.broadcast_shapes(*shapes)
    np.testing.assert_allclose(
        a.grad.numpy(), np.broadcast_to(b.detach().numpy(), full).sum(
            axis=tuple(d for d, s in enumerate(shapes[0]) if s == 1 and full[d] != 1),
            keepdims=True))


def test_einsum_same_tensor_twice_accumulates():
    x = leaf([1.0, 2.0, 3.0])
    oxmera.einsum("i,i->", x, x).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0, 6.0])


def test_einsum_gradient_skips_operands_without_grad():
    a, b = leaf(np.ones((2, 3))), oxmera.ones(3, 2, dtype=F64)
    oxmera.einsum("ij,jk->ik", a, b).sum().backward()
    assert b.grad is None
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 2.0))


# -- errors (SPEC §6) --------------------------------------------------------------------------

@pytest.mark.parametrize("equation, shapes, message", [
    ("ij,jk->ik", [(2, 3)], "2 operand.*1 tensor"),
    ("ij->ij", [(2, 3), (3,)], "1 operand.*2 tensor"),
    ("ij,jk->ik", [(2, 3), (4, 5)], r"\(2, 3\).*\(4, 5\)"),
    ("ijk->i", [(2, 3)], r"operand 0.*'ijk'.*\(2, 3\)"),
    ("i->i", [(2, 3)], r"operand 0.*\(2, 3\)"),
    ("ij->k", [(2, 3)], "output subscript 'k'"),
    ("ij->ii", [(2, 2)], "repeat"),
    ("i1->i", [(2, 3)], "invalid subscript '1'"),
    ("i.j->i", [(2, 3)], "invalid subscript '.'"),
    ("ij->i->j", [(2, 3)], "more than one '->'"),
    ("ii", [(2, 3)], r"\(2, 3\)"),
], ids=["too-few-operands", "too-many-operands", "size-mismatch", "too-many-subscripts",
        "too-few-subscripts", "unknown-output", "repeated-output", "digit", "dot", "two-arrows",
        "diagonal-mismatch"])
def test_einsum_errors_name_the_op(equation, shapes, message):
    operands = [leaf(np.ones(s)) for s in shapes]
    with unchanged(*operands):
        with pytest.raises(RuntimeError, match=message) as info:
            oxmera.einsum(equation, *operands)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith("einsum()")


def test_einsum_needs_an_equation_and_operands():
    with pytest.raises(TypeError, match="einsum"):
        oxmera.einsum()
    with pytest.raises(RuntimeError, match="einsum.*at least one operand"):
        oxmera.einsum("ij")


# -- hypothesis: random contractions -----------------------------------------------------------

@st.composite
def _contraction(draw):
    letters = "abcd"
    sizes = {c: draw(st.integers(1, 3)) for c in letters}
    count = draw(st.integers(1, 3))
    terms = [draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3))
             for _ in range(count)]
    used = sorted(set("".join("".join(t) for t in terms)))
    output = draw(st.permutations(used).map(lambda p: p[:draw(st.integers(0, len(p)))])) \
        if used else []
    equation = ",".join("".join(t) for t in terms) + "->" + "".join(output)
    shapes = [tuple(sizes[c] for c in t) for t in terms]
    return equation, shapes


@settings(max_examples=60, deadline=None)
@given(contraction=_contraction(), seed=st.integers(0, 2 ** 32 - 1))
def test_random_contractions_match_numpy_and_finite_differences(contraction, seed):
    equation, shapes = contraction
    arrays = _operands(shapes, seed % 1000)
    expected = np.einsum(equation, *arrays)
    tensors = [oxmera.from_numpy(a).requires_grad_() for a in arrays]
    result = oxmera.einsum(equation, *tensors)
    np.testing.assert_allclose(result.detach().numpy(), expected, rtol=1e-10, atol=1e-12)
    assert gradcheck(lambda *t: oxmera.einsum(equation, *t), tuple(tensors))
