"""oxmera.autograd.Function: custom ops with ctx, PyTorch's way."""
import gc

import numpy as np
import pytest

import oxmera
from oxmera.autograd import Function, gradcheck, gradgradcheck


def leaf(values):
    return oxmera.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 3 * x * x


class Exp(Function):
    # saves its output: rebuilt at backward time, not kept (no cycle)
    @staticmethod
    def forward(ctx, x):
        out = x.exp()
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out


class ScaleAndShift(Function):
    @staticmethod
    def forward(ctx, x, scale, shift, *, power=1):
        ctx.scale, ctx.power = scale, power
        ctx.save_for_backward(x)
        return x ** power * scale + shift

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return (grad * ctx.scale * ctx.power * x ** (ctx.power - 1), None,
                grad if ctx.needs_input_grad[2] else None)


class SplitSigns(Function):
    @staticmethod
    def forward(ctx, x):
        positive = x.clamp(min=0) if hasattr(x, "clamp") else x.relu()
        negative = x - positive
        index = oxmera.tensor(np.argmax(x.detach().numpy()))
        ctx.mark_non_differentiable(index)
        ctx.save_for_backward(x)
        return positive, negative, index

    @staticmethod
    def backward(ctx, grad_positive, grad_negative, grad_index):
        x, = ctx.saved_tensors
        mask = (x > 0).to(x.dtype)
        return grad_positive * mask + grad_negative * (1 - mask)


def test_first_and_second_order():
    x = leaf([0.5, -1.5, 2.0])
    assert gradcheck(Cube.apply, (x,))
    assert gradgradcheck(Cube.apply, (x,))
    assert gradcheck(Exp.apply, (x,))
    assert gradgradcheck(Exp.apply, (x,))


def test_node_name_and_edges():
    x = leaf([1.0])
    y = Cube.apply(x * 2)
    assert y.grad_fn.name() == "CubeBackward"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward"


def test_non_tensor_arguments_keywords_and_needs_input_grad():
    x = leaf([1.0, 2.0])
    shift = leaf([0.5, 0.5])
    y = ScaleAndShift.apply(x, 3.0, shift, power=2)
    np.testing.assert_allclose(y.detach().numpy(), [3.5, 12.5])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])
    np.testing.assert_allclose(shift.grad.numpy(), [1.0, 1.0])


def test_several_outputs_and_non_differentiable_ones():
    x = leaf([1.0, -2.0, 3.0])
    positive, negative, index = SplitSigns.apply(x)
    assert not index.requires_grad and index.item() == 2
    (positive * 2 + negative * 5).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 5.0, 2.0])
    x.grad = None
    positive, _, _ = SplitSigns.apply(x)
    positive.sum().backward()          # unused outputs get zero gradients
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0, 1.0])


def test_no_record_when_nothing_requires_grad_or_grad_mode_is_off():
    y = Cube.apply(oxmera.tensor([2.0]))
    assert y.grad_fn is None and not y.requires_grad
    with oxmera.no_grad():
        y = Cube.apply(leaf([2.0]))
    assert y.grad_fn is None


def test_forward_runs_without_recording():
    seen = []

    class Probe(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            seen.append(y.requires_grad)
            return y

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    Probe.apply(leaf([1.0]))
    assert seen == [False]


def test_returning_an_input_gives_a_new_tensor():
    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = leaf([1.0, 2.0])
    y = Identity.apply(x)
    assert y is not x and x.is_leaf and y.grad_fn.name() == "IdentityBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_wrong_number_of_gradients_names_the_function():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, grad):
            return grad

    x, y = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match=r"BadBackward.*incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        Bad.apply(x, y).sum().backward()
    assert x.grad is None and y.grad is None


def test_wrong_gradient_shape_names_the_function():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return oxmera.ones(5, dtype=np.float64)

    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"BadShapeBackward.*invalid gradient at index 0"):
        BadShape.apply(x).sum().backward()
    assert x.grad is None


def test_saved_tensors_after_the_graph_was_freed():
    captured = []

    class Keep(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            captured.append(ctx)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    y = Keep.apply(leaf([1.0]))
    y.sum().backward()
    with pytest.raises(RuntimeError, match="KeepBackward.*retain_graph=True"):
        captured[0].saved_tensors
    y2 = Keep.apply(leaf([1.0]))
    y2.sum().backward(retain_graph=True)
    assert len(captured[1].saved_tensors) == 1
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.sum().backward()


def test_saved_tensor_modified_in_place_raises():
    a = leaf([1.0, 2.0]) * 1
    y = Cube.apply(a)
    a.add_(1.0)
    with pytest.raises(RuntimeError, match=r"CubeBackward.*version 1; expected version 0"):
        y.sum().backward()


def test_saved_output_modified_in_place_raises():
    x = leaf([1.0, 2.0])
    y = Exp.apply(x)
    z = y + 1
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="ExpBackward.*version"):
        z.sum().backward()


def test_graph_is_freed_by_reference_counting():
    import weakref
    gc.collect()
    gc.disable()
    try:
        x = leaf([1.0, 2.0])
        y = Exp.apply(Cube.apply(x * 2))
        node = weakref.ref(y.grad_fn)
        inner = weakref.ref(y.grad_fn.next_functions[0][0])
        del y
        assert node() is None and inner() is None
    finally:
        gc.enable()


def test_backward_of_a_function_is_differentiable_with_create_graph():
    x = leaf([1.5])
    (g,) = oxmera.autograd.grad(Cube.apply(x).sum(), [x], create_graph=True)
    (gg,) = oxmera.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), [6 * 1.5])
