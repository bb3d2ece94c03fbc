"""The benchmark workloads: one module each, the same math written once per library.

A workload module defines a :class:`Workload` named ``WORKLOAD``. For every
library it supports it has a *builder*: a function that takes the workload's
NumPy input data (``make_data()``, seeded, so every library starts from the
same numbers), sets up that library's state (leaf tensors, parameters) and
returns a ``step`` callable. One call of ``step()`` is one timed iteration: the
forward pass, the backward pass with every gradient materialized, and (for
``mlp_step``) the optimizer update. ``step()`` returns ``(value, grad, ...)``
so that the runner can check every library against NumPy before timing it.

The NumPy builders are hand-written forward and backward code (the manual
VJPs): the practical limit that oxmera's targets are ratios to. They reuse
buffers the way a careful person would (in-place ufuncs on temporaries the
forward made, ``out=``), fold the seed gradient of the final ``sum``/``mean``
(it is a constant) into the first VJP, and otherwise do the same math as the
autograd libraries: every VJP an autograd engine would run is run.

A builder raises :class:`Unavailable` when the library lacks something the
workload needs (an oxmera op that has not landed yet); the runner skips that
library for that workload and says why.

Besides oxmera and PyTorch, three peer autograd libraries run the same math
(see :data:`PEERS`): MyGrad (``mygrad.tensor``, ``.backward()``, ``.grad``),
HIPS autograd (``autograd.numpy`` under ``autograd.value_and_grad``) and JAX
(``jax.value_and_grad`` with ``jax_enable_x64`` on, so float64 stays float64).
JAX runs **eagerly, not jitted**: the comparison is between eager Python
autograd engines, each op dispatched as the Python code reaches it; a jitted
JAX step would be one compiled XLA program, a different thing to measure. A
workload writes its math once, as ``_build_peer(library, data)``, over a
peer's :func:`peer_numpy` namespace or its :func:`peer_ops` (each library's
own idiom for relu, log-softmax, cross-entropy, conv2d and max-pool), and
hands it to :func:`peer_step`, which runs it the way that library's users do.

This package owns nothing of oxmera; ``bench/run.py`` is the runner.
"""
import importlib
from types import SimpleNamespace

__all__ = ["Workload", "Unavailable", "require", "WORKLOAD_MODULES", "load_workloads",
           "PEERS", "import_jax", "peer_numpy", "peer_ops", "peer_step", "peer_builders"]


class Unavailable(Exception):
    """A library cannot run a workload (a missing op, a missing package)."""


def require(obj, path):
    """Return ``obj.a.b`` for ``path="a.b"``, or raise Unavailable naming what is missing.

    ``obj`` is a module (``oxmera``); ``path`` is dotted, e.g.
    ``"nn.functional.cross_entropy"`` or ``"Tensor.sub_"``.
    """
    current = obj
    for part in path.split("."):
        try:
            current = getattr(current, part)
        except AttributeError:
            raise Unavailable(f"{obj.__name__}.{path} is not defined (yet)") from None
    return current


class Workload:
    """One benchmark: its inputs, tolerances and a builder per library.

    Parameters
    ----------
    name : str
        The name used on the command line and in the tables.
    description : str
        One line saying what is computed.
    make_data : callable
        ``make_data() -> dict`` of NumPy arrays (seeded).
    builders : dict
        ``{"numpy": build, "oxmera": build, "torch": build, "mygrad": build, ...}``
        (a key per library the workload runs on); each ``build(data) -> step``.
    rtol, atol : float
        Gradient-check tolerances against NumPy's outputs; ``atol`` is relative
        to the largest magnitude in each reference array.
    """

    def __init__(self, name, description, make_data, builders, rtol, atol):
        self.name = name
        self.description = description
        self.make_data = make_data
        self.builders = builders
        self.rtol = rtol
        self.atol = atol

    def __repr__(self):
        return f"Workload({self.name!r})"


# Default order of the runner's table (the order of issue 5).
WORKLOAD_MODULES = {
    "small_ops": "small_ops",
    "deep_chain": "deep_chain",
    "mlp_step": "mlp_step",
    "big_elementwise": "big_elementwise",
    "matmul": "matmul",
    "softmax_rows": "softmax_rows",
    "conv": "conv2d",
    "digits_cnn": "digits_cnn",
}


def load_workloads(names):
    """The Workload objects for ``names`` (keys of WORKLOAD_MODULES), in that order."""
    result = []
    for name in names:
        module = importlib.import_module(f"{__name__}.{WORKLOAD_MODULES[name]}")
        result.append(module.WORKLOAD)
    return result


# -- the peer autograd libraries ----------------------------------------------

PEERS = ("mygrad", "autograd", "jax")


def import_jax():
    """Import JAX with float64 enabled; returns the ``jax`` module.

    Without ``jax_enable_x64`` JAX silently turns float64 input into float32,
    which would make the float64 workloads other (cheaper) math. Float32 input
    stays float32 either way.
    """
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def peer_numpy(library):
    """A peer library's NumPy-like namespace: ``mygrad``, ``autograd.numpy`` or ``jax.numpy``.

    Imports nothing more (no SciPy for autograd), so that the long deep_chain
    child process holds only what the workload needs.
    """
    if library == "mygrad":
        import mygrad
        return mygrad
    if library == "autograd":
        import autograd.numpy
        return autograd.numpy
    if library == "jax":
        return import_jax().numpy
    raise ValueError(f"not a peer library: {library!r}")


def peer_ops(library):
    """A peer library's NumPy-like namespace and its own idiom for the NN ops.

    Parameters
    ----------
    library : {"mygrad", "autograd", "jax"}

    Returns
    -------
    types.SimpleNamespace
        ``np`` (:func:`peer_numpy`), ``constant(a)``
        (a NumPy array as an input that needs no gradient), and the ops
        ``relu(x)``, ``log_softmax(x)`` (over the last axis),
        ``cross_entropy(logits, labels)`` (mean over the batch),
        ``conv2d(x, w, padding)`` (PyTorch's: NCHW by OIHW, stride 1, a
        cross-correlation) and ``max_pool2d(x, size)`` (stride ``size``).
    """
    if library == "mygrad":
        import mygrad
        from mygrad import nnet
        return SimpleNamespace(
            np=peer_numpy(library), constant=lambda a: mygrad.tensor(a, constant=True),
            relu=nnet.relu, log_softmax=nnet.logsoftmax,
            cross_entropy=nnet.softmax_crossentropy,
            conv2d=lambda x, w, padding: nnet.conv_nd(x, w, stride=1, padding=padding),
            max_pool2d=lambda x, size: nnet.max_pool(x, (size, size), size))
    if library == "autograd":
        return _autograd_ops()
    if library == "jax":
        return _jax_ops()
    raise ValueError(f"not a peer library: {library!r}")


def _autograd_ops():
    """HIPS autograd has no NN layer: the ops as its users (and its examples) write them."""
    import autograd.numpy as np
    from autograd.scipy.signal import convolve
    from autograd.scipy.special import logsumexp

    def log_softmax(x):
        return x - logsumexp(x, axis=-1, keepdims=True)

    def cross_entropy(logits, labels):
        return -np.mean(log_softmax(logits)[np.arange(len(labels)), labels])

    def conv2d(x, w, padding):
        # autograd's convolve is a true convolution (the kernel flipped), as in
        # HIPS's own convnet example: flip the kernel for PyTorch's correlation,
        # contract the channels (dot_axes) and zero-pad first (np.pad has a VJP,
        # which needs the mode passed positionally).
        if padding:
            x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)), "constant")
        return convolve(x, w[:, :, ::-1, ::-1], axes=([2, 3], [2, 3]), dot_axes=([1], [1]),
                        mode="valid")

    def max_pool2d(x, size):
        # HIPS's convnet example: split each spatial axis into (windows, size), max over sizes
        n, c, h, w = x.shape
        windows = np.reshape(x, (n, c, h // size, size, w // size, size))
        return np.max(np.max(windows, axis=3), axis=4)

    return SimpleNamespace(np=np, constant=lambda a: a, relu=lambda x: np.maximum(x, 0.0),
                           log_softmax=log_softmax, cross_entropy=cross_entropy,
                           conv2d=conv2d, max_pool2d=max_pool2d)


def _jax_ops():
    """JAX's own ops (``jax.nn``, ``jax.lax``), as one writes them without Flax or Optax."""
    jax = import_jax()
    jnp, lax = jax.numpy, jax.lax

    def cross_entropy(logits, labels):
        picked = jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=-1)
        return -jnp.mean(picked)

    def conv2d(x, w, padding):
        # the default dimension numbers are PyTorch's layouts: NCHW input, OIHW kernel
        return lax.conv_general_dilated(x, w, (1, 1), ((padding, padding), (padding, padding)))

    def max_pool2d(x, size):
        window = (1, 1, size, size)
        return lax.reduce_window(x, -jnp.inf, lax.max, window, window, "VALID")

    return SimpleNamespace(np=jnp, constant=jnp.asarray, relu=jax.nn.relu,
                           log_softmax=jax.nn.log_softmax, cross_entropy=cross_entropy,
                           conv2d=conv2d, max_pool2d=max_pool2d)


def peer_step(library, loss, arrays, descent=None):
    """The ``step`` of a peer library: ``loss`` and its gradient w.r.t. every argument.

    Parameters
    ----------
    library : {"mygrad", "autograd", "jax"}
    loss : callable
        ``loss(*params) -> scalar``, written with ``peer_ops(library)``.
    arrays : list of numpy.ndarray
        The parameters' initial values; each becomes the library's own array
        (a copy: the data the other libraries start from stays as it is).
    descent : callable, optional
        ``descent(grads) -> amounts``: what to subtract from each parameter after
        the backward pass (the optimizer's update, e.g. ``lr * grad``).

    Returns
    -------
    callable
        ``step() -> (value, *grads)``, the gradients in the order of ``arrays``.

    Notes
    -----
    MyGrad: ``loss(*tensors).backward()``, then each tensor's ``.grad``;
    MyGrad nulls a tensor's gradient when the tensor joins a new graph, so
    nothing resets them; the update is in place under ``mygrad.no_autodiff``.
    HIPS autograd and JAX: ``value_and_grad`` over every argument, and the
    update is functional (new arrays replace the parameters). JAX dispatches
    asynchronously, so its step blocks until the value, the gradients and the
    new parameters exist: otherwise the time of one step would be charged to
    whichever later call first waits for it.
    """
    if library == "mygrad":
        import mygrad
        params = [mygrad.tensor(a) for a in arrays]

        def step():
            value = loss(*params)
            value.backward()
            grads = [p.grad for p in params]
            if descent is not None:
                with mygrad.no_autodiff:
                    for p, amount in zip(params, descent(grads)):
                        p -= amount
            return (value, *grads)
        return step

    argnums = tuple(range(len(arrays)))
    if library == "jax":
        jax = import_jax()
        params = [jax.numpy.asarray(a) for a in arrays]
        value_and_grad = jax.value_and_grad(loss, argnums=argnums)
        wait = jax.block_until_ready
    elif library == "autograd":
        import autograd
        params = [a.copy() for a in arrays]
        value_and_grad = autograd.value_and_grad(loss, argnum=argnums)
        wait = None                     # NumPy arrays: computed when returned
    else:
        raise ValueError(f"not a peer library: {library!r}")

    def step():
        value, grads = value_and_grad(*params)
        if descent is not None:
            params[:] = [p - amount for p, amount in zip(params, descent(grads))]
        if wait is not None:
            wait((value, grads, params))
        return (value, *grads)
    return step



def peer_builders(build_peer):
    """``{"mygrad": build, "autograd": build, "jax": build}`` for a workload's
    builders, each ``build(data)`` calling ``build_peer(library, data)``."""
    return {library: (lambda data, library=library: build_peer(library, data))
            for library in PEERS}
