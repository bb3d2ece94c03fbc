"""Random number generators: ``oxmera.Generator``, the default one, and seeding.

Mirrors ``torch.random``. A :class:`Generator` is a NumPy
``numpy.random.Generator`` (PCG64) with PyTorch's interface: ``manual_seed``,
``seed``, ``initial_seed``, ``get_state``/``set_state`` (a uint8 tensor) and
``device``. Every random function takes ``generator=``; without one it draws
from ``default_generator``, which ``oxmera.manual_seed`` seeds.

As in PyTorch, the default generator starts from a fixed seed
(67280421310721), so a program that never seeds draws the same numbers on
every run; the numbers themselves differ from PyTorch's (another algorithm).
A generator is not locked: threads that draw at once should each use their
own, and then draw the same numbers for the same seed whatever the others do.
"""
import contextlib
import threading

import numpy as np

from oxmera import _device
from oxmera._core import autograd as _core

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng"]

_DEFAULT_SEED = 67280421310721
_UINT64 = 1 << 64
# get_state()'s layout: PCG64's state and increment (16 bytes each, little
# endian), its buffered 32-bit half (flag + value), then the initial seed.
_STATE_BYTES = 16 + 16 + 1 + 4 + 8
# Held while a generator makes its NumPy generator, so threads whose first
# draws meet do not each make one from the seed (and draw the same numbers).
_MAKING = threading.Lock()


class Generator:
    """A source of random numbers, seeded on its own (PyTorch's ``torch.Generator``).

    Parameters
    ----------
    device : str or oxmera.device
        Only the CPU.

    Examples
    --------
    >>> import oxmera
    >>> g = oxmera.Generator().manual_seed(7)
    >>> a = oxmera.rand(3, generator=g)
    >>> b = oxmera.rand(3, generator=oxmera.Generator().manual_seed(7))
    >>> a.tolist() == b.tolist()
    True
    >>> g.initial_seed()
    7
    """

    def __init__(self, device="cpu"):
        self._device = _device.check_cpu("Generator()", device)
        self._generator = None
        self._seed_with(_DEFAULT_SEED)

    def _seed_with(self, value):
        self._initial_seed = value
        if self._generator is not None:
            self._restart(np.random.PCG64(value))

    @property
    def _numpy(self):
        # The NumPy generator, made on the first draw: importing numpy.random
        # costs ~6 MB and 20 ms (its bit generators, and OpenSSL through
        # ``secrets``), which a program that draws nothing should not pay for
        # ``import oxmera``. Until then the seed alone is the state.
        if self._generator is None:
            with _MAKING:
                if self._generator is None:
                    self._generator = np.random.Generator(np.random.PCG64(self._initial_seed))
        return self._generator

    def _restart(self, bit_generator):
        # The NumPy generator object stays the same (only its state changes), so a
        # reference to it taken before a reseed or set_state (a sampler's, a worker's)
        # follows the new state.
        if self._generator is not None:
            self._generator.bit_generator.state = bit_generator.state
        else:
            self._generator = np.random.Generator(bit_generator)

    @property
    def device(self):
        """The device it generates for: the CPU."""
        return self._device

    def manual_seed(self, seed):
        """Seed it (any int; negative ones wrap around as in PyTorch); returns the generator."""
        try:
            value = int(seed)           # as PyTorch: int(seed), so 1.5 seeds with 1
        except (TypeError, ValueError):
            raise TypeError(f"manual_seed(): expected an int seed, got "
                            f"{type(seed).__name__}") from None
        if not -(1 << 63) <= value < _UINT64:
            raise RuntimeError(f"manual_seed(): seed {value} is out of range: it must be in "
                               f"[-0x8000_0000_0000_0000, 0xffff_ffff_ffff_ffff]")
        self._seed_with(value % _UINT64)
        return self

    def seed(self):
        """Seed it from the operating system's entropy; returns the seed used."""
        value = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        self._seed_with(value)
        return value

    def initial_seed(self):
        """The seed it was last seeded with."""
        return self._initial_seed

    def get_state(self):
        """Its state, as a uint8 tensor that :meth:`set_state` takes back."""
        state = self._numpy.bit_generator.state
        raw = (state["state"]["state"].to_bytes(16, "little")
               + state["state"]["inc"].to_bytes(16, "little")
               + bytes([state["has_uint32"]])
               + int(state["uinteger"]).to_bytes(4, "little")
               + self._initial_seed.to_bytes(8, "little"))
        return _core._wrap(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restore a state from :meth:`get_state`; returns the generator."""
        if not isinstance(new_state, _core.Tensor) or new_state.dtype != np.uint8:
            raise TypeError(f"set_state(): expected a uint8 tensor (from get_state()), got "
                            f"{_describe(new_state)}")
        raw = np.ascontiguousarray(new_state._data).tobytes()
        if new_state.ndim != 1 or len(raw) != _STATE_BYTES:
            raise RuntimeError(f"set_state(): expected a 1-D state of {_STATE_BYTES} bytes (from "
                               f"get_state()), got shape {tuple(new_state.shape)}")
        has_uint32 = raw[32]
        if has_uint32 > 1:
            raise RuntimeError("set_state(): not a state made by get_state() (corrupt flag)")
        bit_generator = np.random.PCG64()
        bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {"state": int.from_bytes(raw[0:16], "little"),
                      "inc": int.from_bytes(raw[16:32], "little")},
            "has_uint32": has_uint32,
            "uinteger": int.from_bytes(raw[33:37], "little"),
        }
        self._restart(bit_generator)
        self._initial_seed = int.from_bytes(raw[37:45], "little")
        return self

    def __repr__(self):
        return "<oxmera.Generator object>"


def _describe(value):
    if isinstance(value, _core.Tensor):
        return f"a {value.dtype} tensor"
    return type(value).__name__


#: The generator random functions use when given none.
default_generator = Generator()


def numpy_generator(generator, where):
    """The ``numpy.random.Generator`` behind ``generator`` (None: the default one).

    ``where`` names the call for the error message. For oxmera's own random
    functions; a ``numpy.random.Generator`` is accepted too, as it is.
    """
    if generator is None:
        return default_generator._numpy
    if isinstance(generator, Generator):
        return generator._numpy
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(f"{where}: generator must be an oxmera.Generator, got "
                    f"{type(generator).__name__}")


def manual_seed(seed):
    """Seed the default generator; returns it.

    Examples
    --------
    >>> import oxmera
    >>> _ = oxmera.manual_seed(0); a = oxmera.rand(2)
    >>> _ = oxmera.manual_seed(0); b = oxmera.rand(2)
    >>> a.tolist() == b.tolist()
    True
    """
    return default_generator.manual_seed(seed)


def seed():
    """Seed the default generator from the operating system's entropy; returns the seed.

    Examples
    --------
    >>> import oxmera
    >>> s = oxmera.seed()
    >>> oxmera.initial_seed() == s
    True
    """
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with.

    Examples
    --------
    >>> import oxmera
    >>> _ = oxmera.manual_seed(3)
    >>> oxmera.initial_seed()
    3
    """
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state, a uint8 tensor.

    Examples
    --------
    >>> import oxmera
    >>> state = oxmera.get_rng_state()
    >>> a = oxmera.rand(2)
    >>> oxmera.set_rng_state(state)
    >>> oxmera.rand(2).tolist() == a.tolist()
    True
    """
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the default generator's state from :func:`get_rng_state`.

    Examples
    --------
    >>> import oxmera
    >>> state = oxmera.get_rng_state()
    >>> oxmera.set_rng_state(state)
    """
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Restore the default generator's state on leaving the block (or decorated function).

    What is drawn inside does not change what is drawn after, whatever
    happens inside (an exception too). ``devices`` names accelerator devices
    whose generators PyTorch would fork as well: there are none here, so it
    may only be None or empty. ``enabled=False`` makes it do nothing.

    Examples
    --------
    >>> import oxmera
    >>> _ = oxmera.manual_seed(0)
    >>> with oxmera.random.fork_rng():
    ...     inside = oxmera.rand(2)
    >>> after = oxmera.rand(2)
    >>> inside.tolist() == after.tolist()
    True
    """
    if devices is not None and len(list(devices)) > 0:
        raise RuntimeError(f"{_caller}(): {_devices_kw}={list(devices)!r} names "
                           f"{device_type} devices, but oxmera computes on the CPU with NumPy "
                           f"(no {device_type} device exists); leave {_devices_kw} out")
    if not enabled:
        yield
        return
    state = default_generator.get_state()
    try:
        yield
    finally:
        default_generator.set_state(state)
