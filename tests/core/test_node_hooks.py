"""GradFn.register_hook / register_prehook, and hooks holding no cycles."""
import gc
import weakref

import numpy as np

import oxmera


def test_prehook_replaces_the_output_gradient_and_is_removable():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    handle = y.grad_fn.register_prehook(lambda grads: (grads[0] * 10,))
    y.sum().backward(retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])
    handle.remove()
    x.grad = None
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_post_hook_sees_inputs_and_outputs_and_can_replace():
    x = oxmera.tensor([1.0], requires_grad=True)
    w = oxmera.tensor([2.0], requires_grad=True)
    y = x * w
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append((len(grad_inputs), len(grad_outputs)))
        return (grad_inputs[0] * 0, grad_inputs[1])
    y.grad_fn.register_hook(hook)
    y.sum().backward()
    assert seen == [(2, 1)]
    assert x.grad.item() == 0.0 and w.grad.item() == 1.0


def test_hooks_on_nodes_and_tensors_leave_no_cycle():
    gc.collect()
    gc.disable()
    try:
        x = oxmera.tensor([1.0], requires_grad=True)
        y = (x * 2).exp()
        y.register_hook(lambda g: g * 2)
        y.grad_fn.register_hook(lambda gi, go: None)
        y.grad_fn.register_prehook(lambda go: None)
        x.register_hook(lambda g: g)
        node = weakref.ref(y.grad_fn)
        del y
        assert node() is None
    finally:
        gc.enable()
