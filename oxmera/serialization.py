"""Weights on disk: ``oxmera.save(obj, f)`` and ``oxmera.load(f)``, in the safetensors format.

A saved object is a tree of dicts, lists and tuples whose leaves are
tensors, NumPy arrays and scalars, and plain Python values (str, int,
float, bool, None): a model's ``state_dict()``, an optimizer's (whose state
holds numbers, lists and None beside tensors), a scheduler's, or a dict of
them all (a checkpoint). The file is a standard safetensors file, written
with the ``safetensors`` package: every tensor is a named entry (named by
its path in the tree, e.g. ``optimizer.state.0.exp_avg``), so other
safetensors readers can read the weights; the tree itself is JSON in the
header's ``__metadata__`` (``oxmera.structure``, with its CRC-32 in
``oxmera.structure_crc32``), with each tensor's dtype, shape and CRC-32
checksum. So any change to the tree or to a tensor's bytes is detected.

Loading never executes code (no pickle): it parses JSON and copies bytes.
Everything is checked before anything is returned — the header, every
tensor's dtype, shape, byte range and checksum, and the tree — so a
truncated, corrupted or foreign file raises ``ValueError`` naming the file
and the problem, and never yields a half-loaded object. Saving writes a
temporary file beside the target and renames it into place, so an
interrupted save never leaves a truncated file under the target's name.

A safetensors file written by another tool (no oxmera structure) loads as a
flat dict from tensor name to tensor.

What this module leaves to others: ``Module.load_state_dict`` and
``Optimizer.load_state_dict`` check that a loaded dict fits.
"""
import json
import math
import os
import struct
import tempfile
import zlib

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera.ops.creation import from_numpy

__all__ = ["save", "load"]

_FORMAT_VERSION = "1"
_STRUCTURE_KEY = "oxmera.structure"
_CHECKSUM_KEY = "oxmera.structure_crc32"
_VERSION_KEY = "oxmera.format_version"
_KEYS = (_VERSION_KEY, _STRUCTURE_KEY, _CHECKSUM_KEY)

#: safetensors dtype names <-> NumPy dtypes that round-trip exactly.
_DTYPES = {
    "BOOL": np.dtype(np.bool_), "U8": np.dtype(np.uint8), "I8": np.dtype(np.int8),
    "I16": np.dtype(np.int16), "U16": np.dtype(np.uint16), "I32": np.dtype(np.int32),
    "U32": np.dtype(np.uint32), "I64": np.dtype(np.int64), "U64": np.dtype(np.uint64),
    "F16": np.dtype(np.float16), "F32": np.dtype(np.float32), "F64": np.dtype(np.float64),
}
_DTYPE_NAMES = {dtype: name for name, dtype in _DTYPES.items()}
_SCALARS = (str, int, float, bool, type(None))
_MAX_HEADER = 100_000_000      # the safetensors format's own limit
_MAX_DEPTH = 500               # nesting of the structure's JSON: deeper is refused


# -- saving ---------------------------------------------------------------------------------

def _describe(path):
    return "obj" + "".join(f"[{p!r}]" for p in path)


class _Encoder:
    """Turns the object tree into JSON-able nodes and a dict of named arrays."""

    def __init__(self):
        self.arrays = {}        # name -> contiguous little-endian array
        self.names = {}         # id(tensor or array) -> (name, the object, kept alive)

    def _name_for(self, path):
        base = ".".join(str(p) for p in path) or "tensor"
        name, n = base, 1
        while name in self.arrays:
            name, n = f"{base}#{n}", n + 1
        return name

    def _array_node(self, kind, value, array, path):
        known = self.names.get(id(value))
        if known is not None and known[1] is value:
            return dict(known[2])
        dtype = array.dtype
        if dtype.newbyteorder("=") not in _DTYPE_NAMES:
            raise TypeError(f"oxmera.save(): cannot store the {dtype} {kind} at "
                            f"{_describe(path)}; the supported dtypes are bool, uint8, int8, "
                            f"int16, uint16, int32, uint32, int64, uint64, float16, float32 "
                            f"and float64")
        array = array.astype(dtype.newbyteorder("<"), order="C", copy=False)   # keeps 0-d
        name = self._name_for(path)
        self.arrays[name] = array
        node = {kind: name, "dtype": _DTYPE_NAMES[dtype.newbyteorder("=")],
                "shape": list(array.shape), "crc32": zlib.crc32(array.reshape(-1).view(np.uint8))}
        if kind == "tensor" and value.requires_grad:
            node["requires_grad"] = True
        self.names[id(value)] = (name, value, node)
        return dict(node)

    def encode(self, value, path=()):
        if isinstance(value, Tensor):
            return self._array_node("tensor", value, value._data, path)
        if isinstance(value, np.ndarray):
            return self._array_node("ndarray", value, value, path)
        if isinstance(value, np.generic):
            return self._array_node("numpy_scalar", value, np.asarray(value), path)
        if isinstance(value, float):
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, _SCALARS):
            return value
        if isinstance(value, dict):
            items = []
            for key, item in value.items():
                if isinstance(key, float) and not math.isfinite(key):
                    encoded_key = {"float": repr(key)}
                elif isinstance(key, _SCALARS):
                    encoded_key = key
                else:
                    raise TypeError(f"oxmera.save(): cannot store the dict key {key!r} (a "
                                    f"{type(key).__name__}) at {_describe(path)}; keys must "
                                    f"be str, int, float, bool or None")
                items.append([encoded_key, self.encode(item, path + (key,))])
            return {"dict": items}
        if isinstance(value, (list, tuple)):
            kind = "list" if isinstance(value, list) else "tuple"
            return {kind: [self.encode(item, path + (i,)) for i, item in enumerate(value)]}
        hint = (" (convert it with .numpy() or oxmera.tensor() first)"
                if type(value).__module__.startswith("torch") else "")
        raise TypeError(f"oxmera.save(): cannot store a {type(value).__name__} at "
                        f"{_describe(path)}{hint}; oxmera.save stores tensors, NumPy arrays "
                        f"and scalars, str, int, float, bool, None, and dicts, lists and "
                        f"tuples of them")


def save(obj, f):
    """Save tensors, state dicts and checkpoints to a safetensors file.

    Parameters
    ----------
    obj : object
        A tensor, or dicts, lists and tuples nesting tensors, NumPy arrays
        and scalars, and str, int, float, bool and None — e.g.
        ``model.state_dict()`` or
        ``{'model': model.state_dict(), 'optimizer': opt.state_dict()}``.
        Tensor dtypes, shapes and ``requires_grad``, Python types (tuple vs
        list, int vs float, dict key types) and a tensor appearing twice
        (tied weights) are kept.
    f : str, os.PathLike or binary file object
        Where to write. A path is written through a temporary file renamed
        into place, so a failed save leaves any previous file intact.

    Raises
    ------
    TypeError
        ``obj`` holds something else (naming where), before anything is written.

    Examples
    --------
    >>> import os, tempfile
    >>> import oxmera
    >>> from oxmera.serialization import load, save
    >>> path = os.path.join(tempfile.mkdtemp(), 'checkpoint.safetensors')
    >>> save({'w': oxmera.ones(2, 3), 'epoch': 4}, path)
    >>> load(path)
    {'w': tensor([[1., 1., 1.],
            [1., 1., 1.]], dtype=float32), 'epoch': 4}
    """
    from safetensors.numpy import save as _safetensors_save

    encoder = _Encoder()
    structure = json.dumps(encoder.encode(obj), separators=(",", ":"), allow_nan=False)
    metadata = {_VERSION_KEY: _FORMAT_VERSION, _STRUCTURE_KEY: structure,
                _CHECKSUM_KEY: str(zlib.crc32(structure.encode("utf-8")))}
    data = _safetensors_save(encoder.arrays, metadata=metadata)
    if hasattr(f, "write"):
        f.write(data)
        return
    path = os.fspath(f)
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".oxmera-save-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


# -- loading --------------------------------------------------------------------------------

class _Corrupt(Exception):
    """A problem with the file's content (becomes ValueError naming the file)."""


def _read(f):
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"oxmera.load(): the file object must be opened in binary mode "
                            f"('rb'), it returned {type(data).__name__}")
        name = getattr(f, "name", None)
        return bytes(data), repr(name) if name is not None else f"<{type(f).__name__} object>"
    path = os.fspath(f)
    with open(path, "rb") as handle:
        return handle.read(), repr(path)


def _parse_header(data):
    """The header dict, after checking the layout safetensors prescribes."""
    if len(data) < 8:
        raise _Corrupt(f"the file is {len(data)} bytes long, too short for a safetensors file "
                       f"(which starts with an 8-byte header length); it is truncated or not "
                       f"a safetensors file")
    (header_length,) = struct.unpack("<Q", data[:8])
    if header_length > len(data) - 8 or header_length > _MAX_HEADER:
        hint = ""
        if data[:4] == b"PK\x03\x04":
            hint = " (it looks like a zip archive, e.g. a torch.save file or a .npz)"
        elif data[:1] == b"\x80":
            hint = " (it looks like a pickle; oxmera.load never unpickles)"
        elif data[:6] == b"\x93NUMPY":
            hint = " (it looks like a .npy file)"
        raise _Corrupt(f"its first 8 bytes give a header of {header_length} bytes but only "
                       f"{len(data) - 8} bytes follow: it is truncated or not a safetensors "
                       f"file{hint}")
    try:
        header = json.loads(data[8:8 + header_length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise _Corrupt(f"the header is not valid JSON ({err}): the file is corrupted or "
                       f"not a safetensors file") from None
    if not isinstance(header, dict):
        raise _Corrupt(f"the header is a JSON {type(header).__name__}, not an object: the "
                       f"file is corrupted or not a safetensors file")
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise _Corrupt("the header's __metadata__ is not a map from strings to strings")
    end = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not (isinstance(entry, dict) and isinstance(entry.get("dtype"), str)
                and isinstance(entry.get("shape"), list)
                and isinstance(entry.get("data_offsets"), list)):
            raise _Corrupt(f"the header entry of tensor {name!r} is malformed: {entry!r}")
        if entry["dtype"] not in _DTYPES:
            raise _Corrupt(f"tensor {name!r} has dtype {entry['dtype']}, which oxmera does "
                           f"not support (supported: {', '.join(_DTYPES)})")
        offsets = entry["data_offsets"]
        if len(offsets) == 2 and all(isinstance(o, int) for o in offsets):
            end = max(end, offsets[1])
    if 8 + header_length + end != len(data):
        raise _Corrupt(f"the header describes {end} bytes of tensor data but the file holds "
                       f"{len(data) - 8 - header_length}: it is truncated or corrupted")
    return header, metadata


def _load_arrays(data):
    from safetensors.numpy import load as _safetensors_load

    try:
        arrays = _safetensors_load(data)
    except Exception as err:       # safetensors' own checks: offsets, sizes, overlaps
        raise _Corrupt(f"safetensors could not read it: {err}") from None
    out = {}
    for name, array in arrays.items():
        array = np.array(array, dtype=array.dtype.newbyteorder("="), copy=True)
        if array.dtype == np.bool_ and np.any(array.view(np.uint8) > 1):
            raise _Corrupt(f"the bool tensor {name!r} holds bytes other than 0 and 1: the file "
                           f"is corrupted")
        out[name] = array
    return out


_ARRAY_KINDS = ("tensor", "ndarray", "numpy_scalar")


class _Decoder:
    def __init__(self, arrays):
        self.arrays = arrays
        self.used = {}          # name -> the object built for it (shared tensors stay shared)

    def _scalar(self, node):
        if isinstance(node, dict):
            if set(node) == {"float"} and node["float"] in ("inf", "-inf", "nan"):
                return float(node["float"])
            raise _Corrupt(f"unexpected node {node!r} in the structure")
        if isinstance(node, _SCALARS):
            return node
        raise _Corrupt(f"unexpected value {node!r} in the structure")

    def _array(self, kind, node):
        name = node[kind]
        if not isinstance(name, str) or name not in self.arrays:
            raise _Corrupt(f"the structure refers to a tensor {name!r} that the file does not "
                           f"hold")
        if name in self.used:
            return self.used[name]
        array = self.arrays[name]
        dtype, shape, crc = node.get("dtype"), node.get("shape"), node.get("crc32")
        if _DTYPES.get(dtype) != array.dtype or shape != list(array.shape):
            raise _Corrupt(f"tensor {name!r} is stored as {array.dtype} {tuple(array.shape)} "
                           f"but the structure says {dtype} {shape}")
        if crc != zlib.crc32(array.reshape(-1).view(np.uint8)):
            raise _Corrupt(f"the data of tensor {name!r} does not match its checksum: the "
                           f"file is corrupted")
        if kind == "tensor":
            value = from_numpy(array)
            if node.get("requires_grad") is True and array.dtype.kind == "f":
                value.requires_grad_(True)
        elif kind == "ndarray":
            value = array
        else:
            value = array[()]
        self.used[name] = value
        return value

    def decode(self, node):
        if not isinstance(node, dict):
            return self._scalar(node)
        for kind in _ARRAY_KINDS:
            if kind in node:
                return self._array(kind, node)
        if set(node) == {"dict"} and isinstance(node["dict"], list):
            out = {}
            for pair in node["dict"]:
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise _Corrupt(f"a dict entry of the structure is malformed: {pair!r}")
                key = self._scalar(pair[0])
                out[key] = self.decode(pair[1])
            return out
        if set(node) == {"list"} and isinstance(node["list"], list):
            return [self.decode(item) for item in node["list"]]
        if set(node) == {"tuple"} and isinstance(node["tuple"], list):
            return tuple(self.decode(item) for item in node["tuple"])
        return self._scalar(node)


def load(f):
    """Load what ``save`` wrote (or the tensors of any safetensors file).

    Parameters
    ----------
    f : str, os.PathLike or binary file object
        The file to read.

    Returns
    -------
    object
        The saved object, rebuilt: tensors as new Tensors (owning their
        memory, ``requires_grad`` as saved), NumPy arrays and scalars, and
        the dicts, lists, tuples and plain values around them. A
        safetensors file written by another tool gives a dict from tensor
        name to Tensor.

    Raises
    ------
    ValueError
        The file is truncated, corrupted, not a safetensors file, or holds a
        dtype oxmera does not support (e.g. bfloat16); the message names
        the file and the problem. Nothing is returned in part.
    FileNotFoundError
        There is no such file.

    Examples
    --------
    >>> import io
    >>> import oxmera
    >>> from oxmera.serialization import load, save
    >>> buffer = io.BytesIO()
    >>> save({'weight': oxmera.eye(2), 'steps': [1, 2], 'best': None}, buffer)
    >>> _ = buffer.seek(0)
    >>> load(buffer)
    {'weight': tensor([[1., 0.],
            [0., 1.]], dtype=float32), 'steps': [1, 2], 'best': None}
    >>> load(io.BytesIO(b'not a weights file'))
    Traceback (most recent call last):
        ...
    ValueError: oxmera.load(): cannot load <BytesIO object>: its first 8 bytes give a header ...
    """
    data, source = _read(f)
    try:
        header, metadata = _parse_header(data)
        arrays = _load_arrays(data)
        if not any(key.startswith("oxmera") for key in metadata):
            # A safetensors file from another tool: its tensors by name, in header order.
            return {name: from_numpy(arrays[name]) for name in header if name != "__metadata__"}
        if not all(key in metadata for key in _KEYS):
            raise _Corrupt(f"its oxmera metadata is incomplete (it has "
                           f"{sorted(k for k in metadata if k.startswith('oxmera'))}, needs "
                           f"{list(_KEYS)}): the file is corrupted")
        version = metadata[_VERSION_KEY]
        if version != _FORMAT_VERSION:
            raise _Corrupt(f"it was written in oxmera format version {version!r}, which this "
                           f"oxmera cannot read (it reads version {_FORMAT_VERSION})")
        if metadata[_CHECKSUM_KEY] != str(zlib.crc32(metadata[_STRUCTURE_KEY].encode("utf-8"))):
            raise _Corrupt("its structure does not match its checksum: the file is corrupted")
        try:
            structure = json.loads(metadata[_STRUCTURE_KEY])
            if _too_deep(structure, _MAX_DEPTH):
                # (older Pythons' json raises RecursionError first; 3.13's parses it)
                raise RecursionError
            decoder = _Decoder(arrays)
            obj = decoder.decode(structure)
        except RecursionError:
            raise _Corrupt("the structure is nested too deeply") from None
        except ValueError as err:
            raise _Corrupt(f"the structure is not valid JSON ({err})") from None
        unused = sorted(set(arrays) - set(decoder.used))
        if unused:
            raise _Corrupt(f"the file holds tensors the structure does not mention: "
                           f"{unused[:5]}; it is corrupted")
        return obj
    except _Corrupt as err:
        raise ValueError(f"oxmera.load(): cannot load {source}: {err}") from None


def _too_deep(value, limit):
    """Whether the JSON ``value`` nests lists/dicts more than ``limit`` deep (no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
    return False
