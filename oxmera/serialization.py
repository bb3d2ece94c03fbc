"""Weights on disk: ``oxmera.save(obj, f)`` and ``oxmera.load(f)``, in the safetensors format
(this module) and in PyTorch's formats (``.pt``/``.pth``/``.bin`` files, read without torch
and without running code by ``oxmera._torch_format``, written by ``oxmera._torch_save``;
``save`` chooses the format, ``load`` recognizes it from the file's first bytes).

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
A path must be a regular file (a FIFO, device or directory is refused before
anything is read); the 8-byte header length is read first, then the header,
then exactly the tensor bytes it describes, so a lying length cannot make
load read forever. Everything is checked before anything is returned — the
header, every tensor's dtype, shape, byte range and checksum, every field of
every node of the tree and every reference to a tensor — so a truncated,
corrupted or foreign file raises ``ValueError`` naming the file and the
problem, and never yields a half-loaded object. Saving refuses what loading
would (a tree nested too deeply, a cycle, a header too large), then writes
a temporary file beside the target (following a symlink, as ``open()``
does) and renames it into place, so an interrupted save never leaves a
truncated file under the target's name.

A safetensors file written by another tool (no oxmera structure) loads as a
flat dict from tensor name to tensor.

What this module leaves to others: ``Module.load_state_dict`` and
``Optimizer.load_state_dict`` check that a loaded dict fits.
"""
import errno
import json
import math
import os
import pickle
import stat
import struct
import sys
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
_CHUNK = 1 << 24               # a stream is read in pieces of this size: memory follows the data


# -- saving ---------------------------------------------------------------------------------

def _describe(path):
    return "obj" + "".join(f"[{p!r}]" for p in path)


class _TorchObjectError(TypeError):
    """``obj`` holds a torch object, which neither format stores (oxmera is not torch)."""


class _Encoder:
    """Turns the object tree into JSON-able nodes and a dict of named arrays."""

    def __init__(self):
        self.arrays = {}        # name -> contiguous little-endian array
        self.names = {}         # id(tensor or array) -> (name, the object, kept alive)
        self.open = set()       # ids of the containers being encoded (a cycle revisits one)

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

    def _encode_container(self, value, path):
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
        kind = "list" if isinstance(value, list) else "tuple"
        return {kind: [self.encode(item, path + (i,)) for i, item in enumerate(value)]}

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
        if isinstance(value, (dict, list, tuple)):
            # Each container is at least two levels of the structure's JSON: one this
            # deep is refused by load(), and cannot recurse past Python's limit here.
            if id(value) in self.open:
                raise ValueError(f"oxmera.save(): {_describe(path)} contains itself (a "
                                 f"reference cycle), which a file cannot hold")
            if len(path) >= _MAX_DEPTH // 2:
                raise _too_deep_error()
            self.open.add(id(value))
            try:
                return self._encode_container(value, path)
            finally:
                self.open.discard(id(value))
        is_torch = type(value).__module__.split(".")[0] == "torch"
        hint = " (convert it with .numpy() or oxmera.tensor() first)" if is_torch else ""
        raise (_TorchObjectError if is_torch else TypeError)(
            f"oxmera.save(): cannot store a {type(value).__name__} at {_describe(path)}{hint}; "
            f"oxmera.save stores tensors, NumPy arrays and scalars, str, int, float, bool, "
            f"None, and dicts, lists and tuples of them")


def save(obj, f, format=None):
    """Save tensors, state dicts, checkpoints and whole objects (e.g. a model) to a file.

    Two formats: safetensors (oxmera's own: no code can run when loading it)
    and PyTorch's (what ``torch.save`` writes: a zip archive holding a
    pickle and the tensors' storages, readable by ``torch.load``). Which
    one, when ``format`` is not given: PyTorch's for a path ending in
    ``.pt``, ``.pth`` or ``.bin`` (PyTorch's own names for its files);
    safetensors for a path ending in ``.safetensors``; otherwise
    safetensors for a tree of tensors (what the format holds: dicts,
    lists, tuples, tensors, arrays and plain values) and PyTorch's for any
    other object (e.g. a whole ``nn.Module``, as ``torch.save(model,
    path)`` programs save it).

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
        into place, so a failed save leaves any previous file intact; a
        symlink is followed (the file it points to is replaced, keeping its
        permissions).
    format : {None, 'safetensors', 'torch'}, optional
        The format to write (default: chosen as said above). ``'torch'``
        writes PyTorch's zip format (pickle protocol 2, storages aligned to
        64 bytes), which ``torch.load(weights_only=True)`` reads when ``obj``
        holds only tensors, containers and plain values, and
        ``torch.load(weights_only=False)`` otherwise; a tensor that is a view
        of another's memory is saved as a view of the same storage, so the
        two stay sharing memory when loaded; NumPy arrays and other objects
        are pickled as Python pickles them, so loading them needs
        ``weights_only=False`` (in torch too). ``'safetensors'`` refuses
        what is not a tree of tensors (``TypeError``).

    Raises
    ------
    TypeError
        ``obj`` holds something else than the safetensors format holds, in
        that format (naming where), or a torch object; before anything is
        written.
    ValueError
        ``obj`` is nested too deeply for ``load`` (or contains itself), or
        ``f`` is a FIFO or device (pass a file object to write to one).
    OSError
        The file cannot be written (e.g. ``FileNotFoundError`` for a missing
        directory); the error names ``f``, and a previous file is left intact.

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
    >>> save({'w': oxmera.ones(2)}, os.path.join(tempfile.mkdtemp(), 'w.pt'))  # torch's
    """
    if format not in (None, "safetensors", "torch"):
        raise ValueError(f"oxmera.save(): format must be None, 'safetensors' or 'torch', "
                         f"got {format!r}")
    if format is None:
        suffix = "" if hasattr(f, "write") else os.fsdecode(os.fspath(f)).lower()
        if suffix.endswith(_TORCH_SUFFIXES):
            format = "torch"
        elif suffix.endswith(".safetensors"):
            format = "safetensors"
    data = None
    if format in (None, "safetensors"):
        try:
            data = _safetensors_bytes(obj)
        except _TorchObjectError:
            raise                      # in either format: oxmera does not store torch's objects
        except TypeError:
            if format == "safetensors":
                raise
            # Not a tree of tensors (e.g. a whole module): PyTorch's format, as torch.save.
    if data is None:
        from oxmera._torch_save import dumps

        data = dumps(obj)
    if hasattr(f, "write"):
        f.write(data)
        return
    _write_atomically(os.fsdecode(os.fspath(f)), data)


_TORCH_SUFFIXES = (".pt", ".pth", ".bin")


def _safetensors_bytes(obj):
    from safetensors.numpy import save as _safetensors_save

    encoder = _Encoder()
    tree = encoder.encode(obj)
    if _too_deep(tree, _MAX_DEPTH):        # the very check load() makes
        raise _too_deep_error()
    structure = json.dumps(tree, separators=(",", ":"), allow_nan=False)
    metadata = {_VERSION_KEY: _FORMAT_VERSION, _STRUCTURE_KEY: structure,
                _CHECKSUM_KEY: str(zlib.crc32(structure.encode("utf-8")))}
    data = _safetensors_save(encoder.arrays, metadata=metadata)
    (header_length,) = struct.unpack("<Q", data[:8])
    if header_length > _MAX_HEADER:
        raise ValueError(f"oxmera.save(): the file's header would be {header_length} bytes, "
                         f"more than the {_MAX_HEADER} safetensors (and oxmera.load()) "
                         f"allows; store the many small values as tensors instead")
    return data


def _too_deep_error():
    return ValueError(f"oxmera.save(): obj is nested too deeply: its structure would exceed "
                      f"the {_MAX_DEPTH} levels of JSON that oxmera.load() reads (each dict "
                      f"takes three, each list or tuple two)")


def _kind_of_file(mode):
    """What a non-regular file is, for messages."""
    for test, kind in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO (named pipe)"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return kind
    return "special file"


def _write_atomically(path, data):
    """Write ``data`` to ``path`` through a temporary file renamed over it.

    A symlink is followed (the file it points to is replaced and the link kept), as
    ``open(path, 'wb')`` would; the new file gets the replaced file's permissions, or
    ``open()``'s (0o666 less the umask). Errors name ``path``, never the temporary file;
    a directory, FIFO or device under ``path`` is refused before anything is written.
    """
    def failed(err, problem=None):
        problem = problem or err.strerror or str(err)
        return type(err)(err.errno, f"oxmera.save() cannot write there: {problem}", path)

    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:                  # e.g. a symlink loop, a permission
        raise failed(err) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "oxmera.save() cannot write there: it is a "
                                "directory", path)
    if mode is not None and not stat.S_ISREG(mode):
        raise ValueError(f"oxmera.save(): cannot write {path!r}: it is a "
                         f"{_kind_of_file(mode)}, not a regular file (to write to it, pass "
                         f"a file object opened with open(path, 'wb'))")
    if not os.path.isdir(directory):
        raise FileNotFoundError(errno.ENOENT, f"oxmera.save() cannot write there: the "
                                f"directory {directory!r} does not exist", path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for attempt in range(100):             # a name clash is a 1 in 2**48 chance each time
        temporary = os.path.join(directory, f".{os.path.basename(target)}."
                                            f"{os.urandom(6).hex()}.oxmera-tmp")
        try:
            handle = os.open(temporary, flags, 0o666)     # the umask applies, as for open()
            break
        except FileExistsError as err:
            if attempt == 99:
                raise failed(err, "no free name for the temporary file") from None
        except OSError as err:
            raise failed(err) from None
    try:
        with os.fdopen(handle, "wb") as out:
            if mode is not None:
                os.chmod(temporary, stat.S_IMODE(mode))
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException as err:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(err, OSError):
            raise failed(err) from None
        raise


# -- loading --------------------------------------------------------------------------------

class _Corrupt(Exception):
    """A problem with the file's content (becomes ValueError naming the file)."""


def _source(f):
    """How messages name the file ``f``."""
    if hasattr(f, "read"):
        name = getattr(f, "name", None)
        return repr(name) if name is not None else f"<{type(f).__name__} object>"
    return repr(os.fsdecode(os.fspath(f)))


def _read(f):
    """The bytes, header and metadata of the safetensors file ``f`` (a path or a binary
    file object).

    A path must name a regular file (a symlink is followed): a directory, FIFO or
    device is refused before anything is read, so ``/dev/zero`` cannot fill memory and
    a FIFO without a writer cannot block. Either way the 8-byte header length is read
    first, then the header, then exactly the tensor bytes the header describes.
    """
    if hasattr(f, "read"):
        return _read_header_first(f, _remaining_size(f))
    path = os.fspath(f)
    _refuse_non_regular(os.stat(path).st_mode)
    # O_NONBLOCK: a FIFO put in the file's place since the stat above does not block
    # the open; the fstat below then refuses it.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        _refuse_non_regular(info.st_mode)
        return _read_header_first(handle, info.st_size)


def _refuse_non_regular(mode):
    if not stat.S_ISREG(mode):
        raise _Corrupt(f"it is a {_kind_of_file(mode)}, not a regular file (oxmera.load "
                       f"reads a path only from a regular file; pass a file object to read "
                       f"a stream)")


def _remaining_size(f):
    """The bytes from ``f``'s position to its end, or None for a stream (a pipe, a
    device, anything that cannot seek)."""
    try:
        fd = f.fileno()
    except (AttributeError, OSError, ValueError):      # e.g. io.BytesIO
        fd = None
    try:
        if fd is not None and not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        if not f.seekable():
            return None
        position = f.tell()
        end = f.seek(0, os.SEEK_END)
        f.seek(position)
    except (AttributeError, OSError, ValueError):
        return None
    return end - position


def _read_exactly(handle, count):
    """Up to ``count`` bytes of ``handle`` (fewer at its end), read in chunks so that a
    stream shorter than a header claims takes no more memory than it holds."""
    chunks, remaining = [], count
    while remaining > 0:
        chunk = handle.read(min(remaining, _CHUNK))
        if chunk is not None and not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"oxmera.load(): the file object must be opened in binary mode "
                            f"('rb'), it returned {type(chunk).__name__}")
        if not chunk:
            break
        chunks.append(bytes(chunk))
        remaining -= len(chunk)
    return b"".join(chunks)


def _format_hint(head):
    if head[:4] == b"PK\x03\x04":
        return " (it looks like a zip archive, e.g. a torch.save file or a .npz)"
    if head[:1] == b"\x80":
        return (" (it looks like a pickle, but not PyTorch's: oxmera.load reads only "
                "PyTorch's checkpoints of the pickles)")
    if head[:6] == b"\x93NUMPY":
        return " (it looks like a .npy file)"
    return ""


def _read_header_first(handle, size):
    """The file's bytes, its header and the header's metadata; ``size`` is how many bytes
    the file holds (None: unknown, a stream)."""
    head = _read_exactly(handle, 8)
    if head[:4] == b"PK\x03\x04" or (head[:1] == b"\x80" and len(head) == 8 and struct.unpack(
            "<Q", head)[0] > _MAX_HEADER):
        # A zip archive or a pickle: PyTorch's formats, parsed from the whole file. (A
        # safetensors file can start with 0x80, a header length's low byte, but then its
        # length is small; a pickle's next bytes make it huge.)
        rest = _read_exactly(handle, sys.maxsize if size is None else size - len(head))
        return head + rest, None, None
    if len(head) < 8:
        raise _Corrupt(f"the file is {len(head)} bytes long, too short for a safetensors file "
                       f"(which starts with an 8-byte header length); it is truncated or not "
                       f"a safetensors file")
    (header_length,) = struct.unpack("<Q", head)
    if size is not None and header_length > size - 8:
        raise _Corrupt(f"its first 8 bytes give a header of {header_length} bytes but only "
                       f"{size - 8} bytes follow: it is truncated or not a safetensors "
                       f"file{_format_hint(head)}")
    if header_length > _MAX_HEADER:
        raise _Corrupt(f"its first 8 bytes give a header of {header_length} bytes, more than "
                       f"the {_MAX_HEADER} the safetensors format allows: it is not a "
                       f"safetensors file{_format_hint(head)}")
    header = _read_exactly(handle, header_length)
    if len(header) < header_length:
        raise _Corrupt(f"its first 8 bytes give a header of {header_length} bytes but only "
                       f"{len(header)} bytes follow: it is truncated or not a safetensors "
                       f"file{_format_hint(head)}")
    parsed, metadata = _parse_header(header)
    data_length = _data_length(parsed)
    if size is not None and size - 8 - header_length != data_length:
        raise _Corrupt(f"the header describes {data_length} bytes of tensor data but the file "
                       f"holds {size - 8 - header_length}: it is truncated or corrupted")
    body = _read_exactly(handle, data_length)
    if len(body) < data_length:
        raise _Corrupt(f"the header describes {data_length} bytes of tensor data but the file "
                       f"holds {len(body)}: it is truncated or corrupted")
    if _read_exactly(handle, 1):
        raise _Corrupt(f"the header describes {data_length} bytes of tensor data but more "
                       f"follow: the file is corrupted (or grew while it was read)")
    return head + header + body, parsed, metadata


def _parse_header(raw):
    """The header dict and its ``__metadata__``, after checking the layout safetensors
    prescribes (every tensor entry's fields and their types)."""
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise _Corrupt(f"the header is not valid JSON ({err}): the file is corrupted or "
                       f"not a safetensors file") from None
    if not isinstance(header, dict):
        raise _Corrupt(f"the header is a JSON {type(header).__name__}, not an object: the "
                       f"file is corrupted or not a safetensors file")
    metadata = header.get("__metadata__")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise _Corrupt("the header's __metadata__ is not a map from strings to strings")
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not (isinstance(entry, dict) and isinstance(entry.get("dtype"), str)
                and _is_index_list(entry.get("shape"))
                and _is_index_list(entry.get("data_offsets"))
                and len(entry["data_offsets"]) == 2):
            raise _Corrupt(f"the header entry of tensor {name!r} is malformed: {entry!r}")
        if entry["dtype"] not in _DTYPES:
            raise _Corrupt(f"tensor {name!r} has dtype {entry['dtype']}, which oxmera does "
                           f"not support (supported: {', '.join(_DTYPES)})")
    return header, metadata


def _is_index_list(value):
    """Whether ``value`` is a JSON list of non-negative integers (a shape, offsets)."""
    return isinstance(value, list) and all(
        isinstance(item, int) and not isinstance(item, bool) and item >= 0 for item in value)


def _data_length(header):
    """The bytes of tensor data the header's entries describe (the largest end offset)."""
    return max((entry["data_offsets"][1] for name, entry in header.items()
                if name != "__metadata__"), default=0)


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
_ARRAY_FIELDS = ("dtype", "shape", "crc32")
_CONTAINER_KINDS = ("dict", "list", "tuple")
_NON_FINITE = ("inf", "-inf", "nan")


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


class _Decoder:
    """Rebuilds the object tree from the structure, checking every node's fields and
    every reference to a tensor (a tensor referenced twice is checked twice)."""

    def __init__(self, arrays):
        self.arrays = arrays
        self.used = {}          # name -> the object built for it (shared tensors stay shared)
        self.first = {}         # name -> the first node that referred to it
        self.crc32 = {}         # name -> the checksum of its bytes, computed once

    def _scalar(self, node):
        if isinstance(node, dict):
            if set(node) == {"float"} and node["float"] in _NON_FINITE:
                return float(node["float"])
            raise _Corrupt(f"unexpected node {_short(node)} in the structure")
        if isinstance(node, _SCALARS):
            return node
        raise _Corrupt(f"unexpected value {_short(node)} in the structure")

    def _check_array_node(self, kind, node):
        """The array ``node`` refers to, after checking each of its fields against it."""
        fields = {kind, *_ARRAY_FIELDS} | ({"requires_grad"} if kind == "tensor" else set())
        if not set(_ARRAY_FIELDS) <= set(node) <= fields:
            raise _Corrupt(f"a {kind} node of the structure is malformed: {_short(node)} "
                           f"(it needs the fields {sorted({kind, *_ARRAY_FIELDS})}"
                           f"{', and may have requires_grad' if kind == 'tensor' else ''})")
        name = node[kind]
        if not isinstance(name, str) or name not in self.arrays:
            raise _Corrupt(f"the structure refers to a tensor {_short(name)} that the file "
                           f"does not hold")
        array = self.arrays[name]
        dtype, shape, crc = node["dtype"], node["shape"], node["crc32"]
        if not (isinstance(dtype, str) and dtype in _DTYPES and _is_index_list(shape)
                and _is_int(crc) and 0 <= crc < 2 ** 32
                and isinstance(node.get("requires_grad", False), bool)):
            raise _Corrupt(f"the {kind} node of tensor {name!r} is malformed: {_short(node)} "
                           f"(dtype must be one of {', '.join(_DTYPES)}, shape a list of "
                           f"sizes, crc32 a 32-bit unsigned int, requires_grad a bool)")
        if _DTYPES[dtype] != array.dtype or shape != list(array.shape):
            raise _Corrupt(f"tensor {name!r} is stored as {array.dtype} {tuple(array.shape)} "
                           f"but the structure says {dtype} {shape}")
        if kind == "numpy_scalar" and shape != []:
            raise _Corrupt(f"the numpy_scalar node of tensor {name!r} has shape {shape}; a "
                           f"scalar's is []")
        if node.get("requires_grad") and array.dtype.kind != "f":
            raise _Corrupt(f"the structure says the {dtype} tensor {name!r} requires grad, "
                           f"which only a floating tensor can")
        if name not in self.crc32:
            self.crc32[name] = zlib.crc32(array.reshape(-1).view(np.uint8))
        if crc != self.crc32[name]:
            raise _Corrupt(f"the data of tensor {name!r} does not match its checksum: the "
                           f"file is corrupted")
        first = self.first.setdefault(name, node)
        if node != first:
            raise _Corrupt(f"tensor {name!r} is referred to twice, as {_short(first)} and as "
                           f"{_short(node)}: the file is corrupted")
        return name, array

    def _array(self, kind, node):
        name, array = self._check_array_node(kind, node)
        if name in self.used:
            return self.used[name]
        if kind == "tensor":
            value = from_numpy(array)
            if node.get("requires_grad"):
                value.requires_grad_(True)
        elif kind == "ndarray":
            value = array
        else:
            value = array[()]
        self.used[name] = value
        return value

    def _dict(self, entries):
        out = {}
        for pair in entries:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise _Corrupt(f"a dict entry of the structure is malformed: {_short(pair)} "
                               f"(it must be a [key, value] pair)")
            key = self._scalar(pair[0])
            if key in out:
                raise _Corrupt(f"a dict of the structure holds the key {key!r} twice: the "
                               f"file is corrupted")
            out[key] = self.decode(pair[1])
        return out

    def decode(self, node):
        if not isinstance(node, dict):
            return self._scalar(node)
        kinds = [kind for kind in _ARRAY_KINDS + _CONTAINER_KINDS if kind in node]
        if len(kinds) > 1:
            raise _Corrupt(f"a node of the structure is malformed: {_short(node)} (it has "
                           f"the fields of {len(kinds)} kinds of node: {kinds})")
        if not kinds:
            return self._scalar(node)
        kind = kinds[0]
        if kind in _ARRAY_KINDS:
            return self._array(kind, node)
        items = node[kind]
        if set(node) != {kind} or not isinstance(items, list):
            raise _Corrupt(f"a {kind} node of the structure is malformed: {_short(node)} (it "
                           f"must be {{{kind!r}: [...]}})")
        if kind == "dict":
            return self._dict(items)
        if kind == "list":
            return [self.decode(item) for item in items]
        return tuple([self.decode(item) for item in items])


def _short(value, limit=120):
    """``repr(value)``, shortened for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON (oxmera.save writes non-finite floats as "
                     f"{{\"float\": \"{name.lower()}\"}})")


def load(f, map_location=None, *, weights_only=None, mmap=None, encoding="ASCII"):
    """Load what ``save`` wrote, any safetensors file, or a PyTorch checkpoint.

    PyTorch's files (``.pt``, ``.pth``, ``.bin``: the zip format of
    ``torch.save``, and the legacy format of PyTorch before 1.6) are read
    without torch. By default (``weights_only=True``, as PyTorch's since
    2.6) nothing in the file is executed: its pickle is interpreted by a
    restricted reader that builds only tensors (PyTorch's tensor and
    Parameter rebuild functions and storages), ``OrderedDict``, containers
    and plain values, ``torch.Size`` (a tuple), ``torch.device`` and dtypes
    (oxmera's); any other global is refused. Tensors that share a storage
    in the file share memory after loading, with their offsets and strides
    (views of one NumPy buffer); an ``nn.Parameter`` loads as an
    ``oxmera.nn.Parameter``; bfloat16 storages load as float32 (exactly;
    NumPy has no bfloat16) with a warning saying so. Every tensor is loaded
    on the CPU, whatever device it was saved from.

    Parameters
    ----------
    f : str, os.PathLike or binary file object
        The file to read: a path to a regular file, or a binary file object
        read from its position (a stream, e.g. a pipe, is read as far as
        the header says).
    map_location : str, oxmera.device, dict or callable, optional
        As ``torch.load``'s, for PyTorch files: where storages go. Only the
        CPU exists in oxmera, so a device or string must name it
        (``RuntimeError`` otherwise); a dict maps the file's locations
        (e.g. ``{'cuda:0': 'cpu'}``); a callable is called with each storage
        (a 1-D tensor) and its location and must return it (or an equal
        CPU tensor), as ``lambda storage, loc: storage`` does.
    weights_only : bool, optional
        ``True`` (or None, the default): load only tensors, containers and
        plain values, never running code. ``False``: unpickle a PyTorch
        file with Python's pickle, which imports and calls whatever the
        file names, i.e. **runs code from the file**, exactly as
        ``torch.load(weights_only=False)`` does; do it only for files
        from a source you trust (e.g. what ``save`` wrote for a whole
        model). Safetensors files never run code either way.
    mmap : bool, optional
        Accepted for PyTorch's signature; the file is read into memory.
    encoding : str, default 'ASCII'
        How the pickle's Python 2 strings are decoded (``'latin1'`` for
        old checkpoints written by Python 2), as ``torch.load``'s.

    Returns
    -------
    object
        The saved object, rebuilt: tensors as new Tensors (owning their
        memory, ``requires_grad`` as saved), NumPy arrays and scalars, and
        the dicts, lists, tuples and plain values around them. A
        safetensors file written by another tool gives a dict from tensor
        name to Tensor. A PyTorch file gives what was saved, with
        ``OrderedDict``, tuples for ``torch.Size``, ``oxmera.device`` and
        NumPy dtypes for PyTorch's, and tensors sharing memory as their
        storages did.

    Raises
    ------
    ValueError
        The file is truncated, corrupted, in none of these formats, holds a
        dtype oxmera does not support (e.g. a safetensors BF16 entry, a
        complex tensor), a tensor outside its storage, needs
        ``weights_only=False`` (a global other than those above: the
        message names it), or the path is not a regular file (a directory,
        FIFO or device); the message names the file and the problem.
        Nothing is returned in part, and nothing in the file is run.
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
    >>> torch_file = io.BytesIO()       # PyTorch's format, as torch.save writes it
    >>> save({'w': oxmera.arange(3.0)}, torch_file, format='torch')
    >>> load(io.BytesIO(torch_file.getvalue()), map_location='cpu', weights_only=True)
    {'w': tensor([0., 1., 2.], dtype=float32)}
    >>> load(io.BytesIO(b'not a weights file'))
    Traceback (most recent call last):
        ...
    ValueError: oxmera.load(): cannot load <BytesIO object>: its first 8 bytes give a header ...
    """
    source = _source(f)
    if weights_only not in (None, True, False) or mmap not in (None, True, False):
        raise TypeError(f"oxmera.load(): weights_only and mmap must be bools or None, got "
                        f"{weights_only!r} and {mmap!r}")
    try:
        data, header, metadata = _read(f)
        if header is None:
            return _load_torch(data, source, map_location, weights_only is not False,
                               encoding)
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
            structure = json.loads(metadata[_STRUCTURE_KEY], parse_constant=_reject_constant)
        except RecursionError:
            raise _Corrupt("the structure is nested too deeply") from None
        except ValueError as err:
            raise _Corrupt(f"the structure is not valid JSON ({err})") from None
        if _too_deep(structure, _MAX_DEPTH):      # (3.12+'s json parses what 3.11's cannot)
            raise _Corrupt(f"the structure is nested too deeply (more than {_MAX_DEPTH} "
                           f"levels)")
        decoder = _Decoder(arrays)
        try:
            obj = decoder.decode(structure)
        except RecursionError:               # only when called from deep in the stack
            raise _Corrupt("the structure is nested too deeply for the stack left") from None
        unused = sorted(set(arrays) - set(decoder.used))
        if unused:
            raise _Corrupt(f"the file holds tensors the structure does not mention: "
                           f"{unused[:5]}; it is corrupted")
        return obj
    except _Corrupt as err:
        raise ValueError(f"oxmera.load(): cannot load {source}: {err}") from None


def _load_torch(data, source, map_location, weights_only, encoding):
    from oxmera import _torch_format

    try:
        if data[:4] == b"PK\x03\x04":
            return _torch_format.load_zip(data, source, map_location, weights_only, encoding)
        return _torch_format.load_legacy(data, source, map_location, weights_only, encoding)
    except _torch_format.WeightsOnlyError as err:
        raise _WeightsOnlyError(f"oxmera.load(): cannot load {source}: {err}") from None
    except _torch_format.Corrupt as err:
        raise _Corrupt(str(err)) from None


class _WeightsOnlyError(ValueError, pickle.UnpicklingError):
    """A file that only ``weights_only=False`` loads: a ValueError, and the
    ``pickle.UnpicklingError`` that ``torch.load`` raises for it."""


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
