"""What the data modules share: how a ``generator=`` argument becomes a NumPy
generator, and how a worker's exception travels to the main process (as
``torch.utils.data._utils``)."""
import sys
import traceback

import numpy as np

from oxmera import random as _random

#: How often (seconds) a waiting loader checks that its workers are alive and a
#: waiting worker that its parent is.
MP_STATUS_CHECK_INTERVAL = 1.0


def keep_generator(generator, where):
    """The generator an object keeps from its ``generator=`` argument.

    An oxmera.Generator, a ``numpy.random.Generator`` or None are kept as
    given (their state advances as they are used; None means "draw a seed
    from the default generator at each use"); an int seed becomes a NumPy
    generator made now, so the object's sequence of draws is the same each
    time it is made with that seed.
    """
    if generator is None or isinstance(generator, (_random.Generator, np.random.Generator)):
        return generator
    if isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
        return np.random.default_rng(int(generator))
    raise TypeError(f"{where}: generator must be an oxmera.Generator, a numpy.random.Generator, "
                    f"an int seed or None, got {type(generator).__name__}")


def draw_from(kept):
    """The NumPy generator to draw from for one use of a kept generator.

    For None, a fresh generator seeded from the default oxmera generator (as
    PyTorch's samplers do), so ``oxmera.manual_seed`` makes the draws
    reproducible.
    """
    if kept is None:
        return np.random.default_rng(draw_seed(None))
    return _random.numpy_generator(kept, "oxmera.utils.data")


def draw_seed(kept):
    """A seed in [0, 2**63) drawn from a kept generator (None: the default one).

    What PyTorch draws with ``torch.empty((), dtype=torch.int64).random_(generator)``.
    """
    return int(_random.numpy_generator(kept, "oxmera.utils.data").integers(0, 1 << 63))


class ExceptionWrapper:
    """An exception caught in a worker, with its traceback as text (tracebacks do
    not pickle), to raise again in the main process."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raise the exception again, its message holding the worker's traceback."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError's str() quotes its message: keep the traceback readable.
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # The type takes other arguments: say so in a RuntimeError instead.
            raise RuntimeError(msg) from None
        try:
            raise exception
        finally:
            del exception       # no cycle through this frame: the caller's frames free early


class KeyErrorMessage(str):
    """A str whose repr is itself (KeyError shows its argument's repr)."""

    def __repr__(self):
        return self
