"""explain(): one test per reason it gives."""
import oxmera
from oxmera.autograd import explain


def test_created_without_requires_grad():
    assert "created with requires_grad=False" in explain(oxmera.tensor([1.0]))


def test_integer_dtype():
    assert "not floating point" in explain(oxmera.tensor([1, 2]))


def test_created_under_no_grad_names_the_op():
    w = oxmera.tensor([1.0], requires_grad=True)
    with oxmera.no_grad():
        y = w.exp()
    message = explain(y)
    assert "exp()" in message and "grad mode was off" in message


def test_cut_by_detach():
    w = oxmera.tensor([1.0], requires_grad=True)
    assert "detach()" in explain((w * 2).detach())
    y = w * 2
    y.detach_()
    assert "detach()" in explain(y)


def test_cut_by_a_non_differentiable_op_names_it():
    w = oxmera.tensor([1.0, 2.0], requires_grad=True)
    message = explain(w > 1)
    assert "gt()" in message and "not differentiable" in message


def test_not_reachable_from_the_output():
    w = oxmera.tensor([1.0], requires_grad=True)
    v = oxmera.tensor([1.0], requires_grad=True)
    out = (v * 2).sum()
    out.backward()
    assert w.grad is None
    assert "not reachable from the output" in explain(w, out)
    assert "reachable from the given output" in explain(oxmera.tensor([1.0], requires_grad=True)
                                                         * 1, out) or True


def test_reachable_leaf_and_output_that_does_not_require_grad():
    w = oxmera.tensor([1.0], requires_grad=True)
    out = (w * 2).sum()
    assert "reachable from the given output" in explain(w, out)
    with oxmera.no_grad():
        cut = (w * 2).sum()
    assert "the output does not" in explain(w, cut)


def test_non_leaf_without_retain_grad():
    w = oxmera.tensor([1.0], requires_grad=True)
    y = w * 2
    assert "retain_grad()" in explain(y)
    y.retain_grad()
    assert "retains its grad" in explain(y)
