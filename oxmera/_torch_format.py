"""PyTorch's checkpoint formats, read without torch: the part of ``oxmera.load``
that handles ``.pt``/``.pth``/``.bin`` files.

A PyTorch file is a zip archive (``<prefix>/data.pkl``, the pickled object,
and ``<prefix>/data/<key>``, the raw bytes of each storage) or, before
PyTorch 1.6, a "legacy" stream of pickles followed by the storages' bytes.
Tensors are pickled as calls to ``torch._utils._rebuild_tensor_v2(storage,
offset, size, stride, requires_grad, hooks)`` whose storage is a persistent
id naming a storage record.

Reading with ``weights_only=True`` (the default, as PyTorch's since 2.6)
never runs the pickle: ``_WeightsUnpickler`` is an interpreter of the pickle
opcodes that can only build tensors, storages, containers and primitives
(the globals of ``_SAFE_GLOBALS``); any other global, opcode or shape of
data is a ``ValueError`` naming the file. Every tensor is checked against
its storage (dtype, offset, sizes and strides in bounds) before a NumPy view
of the storage is made, so tensors that share a storage in the file share
memory after loading, as they did in PyTorch. ``weights_only=False`` uses
Python's own unpickler, which imports and calls whatever the file names:
it runs code from the file, exactly as ``torch.load(weights_only=False)``.

Writing is ``oxmera._torch_save``'s.
"""
import io
import pickle
import struct
import warnings
import zipfile
from collections import OrderedDict

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera._device import check_cpu, device as _device
from oxmera.ops.creation import from_numpy

__all__ = []

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001
_ALIGNMENT = 64            # torch.save aligns storage records to 64 bytes (for mmap)

#: PyTorch's typed storage classes and the NumPy dtype of their elements.
_STORAGES = {
    "DoubleStorage": np.float64, "FloatStorage": np.float32, "HalfStorage": np.float16,
    "LongStorage": np.int64, "IntStorage": np.int32, "ShortStorage": np.int16,
    "CharStorage": np.int8, "ByteStorage": np.uint8, "BoolStorage": np.bool_,
    "BFloat16Storage": "bfloat16",
    "ComplexFloatStorage": np.complex64, "ComplexDoubleStorage": np.complex128,
}
#: torch dtypes by name (as the pickle names them) and their NumPy dtype.
_TORCH_DTYPES = {
    "float64": np.float64, "float32": np.float32, "float16": np.float16, "int64": np.int64,
    "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_,
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bfloat16": "bfloat16",
    "complex64": np.complex64, "complex128": np.complex128,
}
_STORAGE_NAMES = {np.dtype(v): k for k, v in _STORAGES.items() if v != "bfloat16"}


class Corrupt(Exception):
    """A problem with the file's content (the caller makes it a ValueError naming the file)."""


class MapLocationError(TypeError):
    """A callable ``map_location`` gave something else than a storage (the caller's error,
    not the file's: it passes through the unpickler's conversion of errors)."""


class WeightsOnlyError(Corrupt):
    """The file needs more than loading weights allows (a global outside the allowlist)."""


# -- reading --------------------------------------------------------------------------------

class _StorageType:
    """What a pickled ``torch.<X>Storage`` (or ``torch.storage.UntypedStorage``) global
    stands for: the dtype of the storage's elements."""

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"torch.{self.name}"


class _Storage:
    """A storage read from the file: a 1-D array holding its elements."""

    def __init__(self, array, untyped=False, kind=None):
        self.array, self.untyped, self.kind, self._views = array, untyped, kind, {}

    def fill(self, raw, order):
        """Set the elements from their bytes ``raw`` (the legacy format's storages come
        after the pickle that refers to them)."""
        if self.kind.dtype == "bfloat16":
            self.array[...] = (np.frombuffer(raw, dtype=order + "u2").astype(np.uint32)
                               << 16).view(np.float32)
            return
        values = np.frombuffer(raw, dtype=self.array.dtype.newbyteorder(order))
        if values.dtype == np.bool_ and np.any(values.view(np.uint8) > 1):
            raise Corrupt("a bool storage holds bytes other than 0 and 1")
        self.array[...] = values

    def typed(self, dtype):
        """The storage's memory as elements of ``dtype`` (one array per dtype, so tensors
        of an untyped storage share memory)."""
        if not self.untyped:
            return self.array
        dtype = np.dtype(dtype)
        if dtype not in self._views:
            if self.array.nbytes % dtype.itemsize:
                raise Corrupt(f"a storage of {self.array.nbytes} bytes cannot hold {dtype} "
                              f"elements ({dtype.itemsize} bytes each)")
            self._views[dtype] = self.array.view(dtype)
        return self._views[dtype]


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _int_tuple(value, what):
    if not (isinstance(value, (tuple, list)) and all(_is_int(v) and v >= 0 for v in value)):
        raise Corrupt(f"a tensor's {what} is {_short(value)}, not a tuple of non-negative "
                      f"ints")
    return tuple(value)


def _short(value, limit=100):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _empty_hooks(hooks, what):
    if hooks is not None and not (isinstance(hooks, dict) and not hooks):
        raise Corrupt(f"a {what} has backward hooks or state {_short(hooks)}; loading weights "
                      f"allows none")


def _rebuild_tensor(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                    metadata=None, dtype=None):
    """``torch._utils._rebuild_tensor_v2`` (and ``_v3``, which passes the dtype of an
    untyped storage): a view of the storage, after checking it lies inside it."""
    if not isinstance(storage, _Storage):
        raise Corrupt(f"a tensor is rebuilt from {_short(storage)}, not from a storage")
    if storage.untyped and dtype is None:
        raise Corrupt("a tensor of an untyped storage has no dtype")
    array = storage.typed(dtype) if dtype is not None else storage.array
    size, stride = _int_tuple(size, "size"), _int_tuple(stride, "stride")
    if not _is_int(storage_offset) or storage_offset < 0 or len(size) != len(stride):
        raise Corrupt(f"a tensor has storage offset {_short(storage_offset)}, size {size} and "
                      f"stride {stride}: the offset must be a non-negative int and the "
                      f"stride as long as the size")
    if not isinstance(requires_grad, bool):
        raise Corrupt(f"a tensor's requires_grad is {_short(requires_grad)}, not a bool")
    _empty_hooks(backward_hooks, "tensor")
    _empty_hooks(metadata, "tensor")
    if 0 in size:
        end = storage_offset
    else:
        end = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if end > array.size:
        raise Corrupt(f"a tensor of size {size}, stride {stride} and storage offset "
                      f"{storage_offset} reaches element {end - 1} of a storage of "
                      f"{array.size} elements: the file is corrupted")
    if requires_grad and array.dtype.kind not in "fc":
        raise Corrupt(f"a {array.dtype} tensor requires grad, which only a floating or "
                      f"complex tensor can")
    view = np.lib.stride_tricks.as_strided(
        array[storage_offset:], shape=size, strides=[s * array.itemsize for s in stride])
    tensor = from_numpy(view)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if not isinstance(dtype, np.dtype):
        raise Corrupt(f"a tensor's dtype is {_short(dtype)}, not a dtype")
    return _rebuild_tensor(storage, storage_offset, size, stride, requires_grad,
                           backward_hooks, metadata, dtype)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    """``torch._utils._rebuild_parameter(_with_state)``: an ``oxmera.nn.Parameter``
    sharing the tensor's memory, as ``torch.load`` gives an ``nn.Parameter``."""
    from oxmera.nn.parameter import Parameter

    if type(data) is not Tensor or not isinstance(requires_grad, bool):
        raise Corrupt(f"a Parameter is rebuilt from {_short(data)} and requires_grad "
                      f"{_short(requires_grad)}, not from a tensor and a bool")
    if requires_grad and data.dtype.kind != "f":
        raise Corrupt(f"a {data.dtype} Parameter requires grad, which only a floating one can")
    _empty_hooks(backward_hooks, "Parameter")
    if state not in (None, {}, (None, None), ({}, None), (None, {}), ({}, {})):
        raise Corrupt(f"a Parameter has Python attributes {_short(state)}; loading weights "
                      f"allows none")
    return Parameter(data, requires_grad=requires_grad)


def _size(sizes=()):
    return _int_tuple(list(sizes) if isinstance(sizes, (list, tuple)) else sizes, "size")


def _torch_device(kind, index=None):
    if not isinstance(kind, str) or not (index is None or _is_int(index)):
        raise Corrupt(f"torch.device({_short(kind)}, {_short(index)}) is not a device")
    try:
        return _device(kind) if index is None else _device(kind, index)
    except (RuntimeError, TypeError) as err:
        raise Corrupt(f"torch.device({kind!r}) is not a device: {err}") from None


def _encode(text, encoding="latin1"):
    """``_codecs.encode``, as protocol-2 pickles spell bytes: only a str in latin-1."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise Corrupt(f"_codecs.encode({_short(text)}, {_short(encoding)}) is not how a "
                      f"pickle spells bytes")
    return text.encode("latin1")


def _bytearray(data=b""):
    if not isinstance(data, (bytes, bytearray)):    # bytearray(10**12) would fill memory
        raise Corrupt(f"bytearray({_short(data)}) does not build a bytearray from bytes")
    return bytearray(data)


def _collection(kind):
    def build(items=()):
        if not isinstance(items, (list, tuple)):
            raise Corrupt(f"{kind.__name__}({_short(items)}) is not built from a list")
        return kind(items)
    return build


def _complex(real=0.0, imag=0.0):
    if not all(isinstance(v, (int, float)) for v in (real, imag)):
        raise Corrupt(f"complex({_short(real)}, {_short(imag)}) is not built from numbers")
    return complex(real, imag)


def _ordered_dict(items=()):
    if items != () and not (isinstance(items, list) and all(
            isinstance(p, tuple) and len(p) == 2 for p in items)):
        raise Corrupt(f"OrderedDict({_short(items)}) is not built from key-value pairs")
    return OrderedDict(items)


def _dtype_global(name):
    dtype = _TORCH_DTYPES[name]
    return "bfloat16" if dtype == "bfloat16" else np.dtype(dtype)


#: The globals loading weights allows, by (module, name), and what each becomes: what
#: PyTorch's weights_only unpickler allows, less what oxmera has no counterpart for
#: (sparse and quantized tensors, tensor subclasses).
_SAFE_GLOBALS = {
    ("collections", "OrderedDict"): _ordered_dict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch", "Size"): _size,
    ("torch", "device"): _torch_device,
    ("_codecs", "encode"): _encode,
    ("builtins", "bytearray"): _bytearray,
    ("builtins", "set"): _collection(set),
    ("builtins", "frozenset"): _collection(frozenset),
    ("builtins", "complex"): _complex,
    ("torch.storage", "UntypedStorage"): _StorageType("storage.UntypedStorage", np.uint8),
    **{("torch", name): _StorageType(name, dtype) for name, dtype in _STORAGES.items()},
    **{("torch", name): _dtype_global(name) for name in _TORCH_DTYPES},
}
#: Prefixes of torch's dtypes oxmera has no counterpart for.
_NO_DTYPE = ("complex", "cfloat", "cdouble", "chalf", "float8", "qint", "quint", "bits", "int1",
             "int2", "int3", "int4", "int5", "int6", "int7", "uint1", "uint2", "uint3", "uint4",
             "uint5", "uint6", "uint7", "float4")
_SAFE_CALLS = [v for v in _SAFE_GLOBALS.values() if callable(v) and not isinstance(v, np.dtype)]
#: Containers the unpickler fills (APPEND, SETITEM, ADDITEMS, BUILD) and creates (NEWOBJ).
_FILLABLE = (list, dict, OrderedDict, set)


def _safe_global(module, name):
    module = "builtins" if module == "__builtin__" else module     # protocol 2's spelling
    try:
        return _SAFE_GLOBALS[(module, name)]
    except (KeyError, TypeError):
        if module == "torch" and (name.endswith("Storage") or name.startswith(_NO_DTYPE)):
            raise Corrupt(f"it holds torch.{name} data, for which oxmera has no dtype (it "
                          f"has bool, uint8-64, int8-64, float16-64, complex64/128; bfloat16 "
                          f"loads as float32)") from None
        raise WeightsOnlyError(
            f"weights only load failed: it refers to the global {module}.{name}, which is "
            f"not a tensor, storage or container that loading weights allows. Loading it "
            f"with weights_only=False will likely succeed, but runs code from the file (as "
            f"torch.load(weights_only=False) does): do it only if you trust where the file "
            f"comes from") from None


class _WeightsUnpickler:
    """A pickle interpreter that can only build what ``_SAFE_GLOBALS`` allows: it calls
    no function and imports no module other than those, and makes nothing but tensors,
    containers and primitives. ``persistent_load`` turns a storage id into a _Storage."""

    def __init__(self, stream, persistent_load, encoding="ASCII"):
        self.stream, self.persistent_load, self.encoding = stream, persistent_load, encoding

    def _read(self, n):
        data = self.stream.read(n)
        if len(data) < n:
            raise Corrupt("its pickle ends in the middle of an instruction: it is truncated")
        return data

    def _line(self):
        line = self.stream.readline()
        if not line.endswith(b"\n"):
            raise Corrupt("its pickle ends in the middle of an instruction: it is truncated")
        return line[:-1].decode("utf-8")

    def _string(self, raw):
        return raw.decode(self.encoding) if self.encoding != "bytes" else raw

    def load(self):
        try:
            return self._load()
        except (Corrupt, MapLocationError):
            raise
        except RecursionError:
            raise Corrupt("its pickle nests too deeply") from None
        except (IndexError, KeyError, TypeError, ValueError, AttributeError, OverflowError,
                struct.error, UnicodeDecodeError, MemoryError) as err:
            raise Corrupt(f"its pickle is malformed ({type(err).__name__}: {err})") from None

    def _load(self):
        read, unpack = self._read, struct.unpack
        stack, metastack, memo = [], [], {}

        def pop_mark():
            nonlocal stack
            items, stack = stack, metastack.pop()
            return items

        def fill_target(kind, allowed):
            if type(stack[-1]) not in allowed:
                raise Corrupt(f"its pickle does {kind} on a {type(stack[-1]).__name__}; "
                              f"loading weights allows it only on "
                              f"{', '.join(t.__name__ for t in allowed)}")
            return stack[-1]

        while True:
            op = self.stream.read(1)
            if not op:
                raise Corrupt("its pickle ends before its STOP instruction: it is truncated")
            code = op[0]
            if op == pickle.PROTO:
                if read(1)[0] > 5:
                    raise Corrupt("its pickle has an unknown protocol")
            elif op == pickle.FRAME:
                read(8)
            elif op == pickle.STOP:
                if len(stack) != 1 or metastack:
                    raise Corrupt("its pickle ends with a malformed stack")
                return stack[0]
            elif op == pickle.GLOBAL:
                module = self._line()
                stack.append(_safe_global(module, self._line()))
            elif op == pickle.STACK_GLOBAL:
                name, module = stack.pop(), stack.pop()
                stack.append(_safe_global(module, name))
            elif op == pickle.REDUCE:
                args, func = stack.pop(), stack.pop()
                if not (any(func is f for f in _SAFE_CALLS) and type(args) is tuple):
                    raise Corrupt(f"its pickle calls {_short(func)}, which is not a function "
                                  f"loading weights allows")
                stack.append(func(*args))
            elif op == pickle.NEWOBJ:
                args, cls = stack.pop(), stack.pop()
                if cls not in _FILLABLE or args != ():
                    raise Corrupt(f"its pickle makes a new {_short(cls)}, which loading "
                                  f"weights does not allow")
                stack.append(cls())
            elif op == pickle.BUILD:
                state = stack.pop()
                target = fill_target("BUILD", (OrderedDict,))
                # (An attribute named as a method would shadow it: ``state.keys()``.)
                if not (isinstance(state, dict) and all(
                        isinstance(k, str) and not hasattr(OrderedDict, k) for k in state)):
                    raise Corrupt(f"its pickle sets the attributes {_short(state)} of an "
                                  f"OrderedDict; loading weights allows only plain names "
                                  f"(such as a state_dict's _metadata)")
                target.__dict__.update(state)        # e.g. a state_dict's _metadata
            elif op == pickle.MARK:
                metastack.append(stack)
                stack = []
            elif op == pickle.POP:
                stack.pop()
            elif op == pickle.POP_MARK:
                pop_mark()
            elif op == pickle.DUP:
                stack.append(stack[-1])
            elif op == pickle.APPEND:
                item = stack.pop()
                fill_target("APPEND", (list,)).append(item)
            elif op == pickle.APPENDS:
                items = pop_mark()
                fill_target("APPENDS", (list,)).extend(items)
            elif op == pickle.SETITEM:
                value, key = stack.pop(), stack.pop()
                fill_target("SETITEM", (dict, OrderedDict))[key] = value
            elif op == pickle.SETITEMS:
                items = pop_mark()
                target = fill_target("SETITEMS", (dict, OrderedDict))
                if len(items) % 2:
                    raise Corrupt("its pickle's SETITEMS has a key without a value")
                for i in range(0, len(items), 2):
                    target[items[i]] = items[i + 1]
            elif op == pickle.ADDITEMS:
                items = pop_mark()
                fill_target("ADDITEMS", (set,)).update(items)
            elif op in (pickle.TUPLE, pickle.LIST, pickle.DICT, pickle.FROZENSET):
                items = pop_mark()
                if op == pickle.TUPLE:
                    stack.append(tuple(items))
                elif op == pickle.LIST:
                    stack.append(items)
                elif op == pickle.FROZENSET:
                    stack.append(frozenset(items))
                else:
                    if len(items) % 2:
                        raise Corrupt("its pickle's DICT has a key without a value")
                    stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})
            elif op in (pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3):
                n = code - pickle.TUPLE1[0] + 1
                if len(stack) < n:
                    raise Corrupt("its pickle's stack underflows")
                items = tuple(stack[-n:])
                del stack[-n:]
                stack.append(items)
            elif op in _CONSTANTS:
                stack.append(_CONSTANTS[op]())
            elif op == pickle.BININT:
                stack.append(unpack("<i", read(4))[0])
            elif op == pickle.BININT1:
                stack.append(read(1)[0])
            elif op == pickle.BININT2:
                stack.append(unpack("<H", read(2))[0])
            elif op == pickle.LONG1:
                stack.append(pickle.decode_long(read(read(1)[0])))
            elif op == pickle.BINFLOAT:
                stack.append(unpack(">d", read(8))[0])
            elif op in _LENGTHS:
                fmt, kind = _LENGTHS[op]
                (n,) = unpack(fmt, read(struct.calcsize(fmt)))
                raw = read(n)
                if kind == "str":
                    stack.append(raw.decode("utf-8", "surrogatepass"))
                elif kind == "bytes":
                    stack.append(raw)
                else:
                    stack.append(self._string(raw))
            elif op == pickle.BINPERSID:
                pid = stack.pop()
                if not (type(pid) is tuple and pid and pid[0] in ("storage", b"storage")):
                    raise Corrupt(f"its pickle refers to {_short(pid)}, which is not a "
                                  f"storage")
                stack.append(self.persistent_load(pid))
            elif op in (pickle.BINGET, pickle.LONG_BINGET):
                index = read(1)[0] if op == pickle.BINGET else unpack("<I", read(4))[0]
                if index not in memo:
                    raise Corrupt(f"its pickle refers to memo entry {index}, which it never "
                                  f"stored")
                stack.append(memo[index])
            elif op in (pickle.BINPUT, pickle.LONG_BINPUT):
                index = read(1)[0] if op == pickle.BINPUT else unpack("<I", read(4))[0]
                memo[index] = stack[-1]
            elif op == pickle.MEMOIZE:
                memo[len(memo)] = stack[-1]
            else:
                raise Corrupt(f"its pickle uses the instruction {op!r}, which loading weights "
                              f"does not allow")


_CONSTANTS = {
    pickle.NONE: lambda: None, pickle.NEWTRUE: lambda: True, pickle.NEWFALSE: lambda: False,
    pickle.EMPTY_TUPLE: tuple, pickle.EMPTY_LIST: list, pickle.EMPTY_DICT: dict,
    pickle.EMPTY_SET: set,
}
_LENGTHS = {
    pickle.BINUNICODE: ("<I", "str"), pickle.SHORT_BINUNICODE: ("<B", "str"),
    pickle.BINUNICODE8: ("<Q", "str"), pickle.SHORT_BINBYTES: ("<B", "bytes"),
    pickle.BINBYTES: ("<I", "bytes"), pickle.SHORT_BINSTRING: ("<B", "string"),
    pickle.BINSTRING: ("<i", "string"),
}


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: Python's unpickler, which imports and calls what the file
    names; PyTorch's tensor and storage globals still become oxmera's."""

    def __init__(self, stream, persistent_load, encoding="ASCII"):
        super().__init__(stream, encoding=encoding)
        self._storage = persistent_load

    def persistent_load(self, pid):
        return self._storage(pid)

    def find_class(self, module, name):
        key = ("builtins" if module == "__builtin__" else module, name)
        if key in _SAFE_GLOBALS and key[0] != "builtins":
            return _SAFE_GLOBALS[key]
        return super().find_class(module, name)

    def load(self):
        try:
            return super().load()
        except pickle.UnpicklingError as err:
            raise Corrupt(f"its pickle is malformed ({err})") from None
        except EOFError:
            raise Corrupt("its pickle ends early: it is truncated") from None


class _Loader:
    """The storages of one file, read once each (tensors sharing one share its memory)."""

    def __init__(self, source, map_location, read_record):
        self.source, self.map_location, self.read_record = source, map_location, read_record
        self.storages = {}
        self.converted = 0         # bfloat16 storages converted to float32
        self.order = "<"           # the byte order of the storages' bytes

    def __call__(self, pid):
        pid = tuple(p.decode("ascii") if isinstance(p, bytes) else p for p in pid)
        if len(pid) == 5:
            _, kind, key, location, numel = pid
            view = None
        elif len(pid) == 6:                      # the legacy format's, with view metadata
            _, kind, key, location, numel, view = pid
        else:
            raise Corrupt(f"its pickle refers to a storage as {_short(pid)}")
        if not (isinstance(kind, _StorageType) and isinstance(key, str)
                and isinstance(location, str) and _is_int(numel) and numel >= 0):
            raise Corrupt(f"its pickle refers to a storage as {_short(pid)}, not as "
                          f"('storage', a storage type, a key, a location, a size)")
        if key not in self.storages:
            self.storages[key] = self._storage(kind, key, location, numel)
        storage = self.storages[key]
        if storage.kind is not kind or storage.array.size != numel:
            raise Corrupt(f"storage {key!r} is referred to as {kind!r} of {numel} elements "
                          f"and as {storage.kind!r} of {storage.array.size}")
        if view is not None:
            if not (isinstance(view, tuple) and len(view) == 3 and isinstance(view[0], str)
                    and _is_int(view[1]) and _is_int(view[2]) and view[1] >= 0
                    and view[1] + view[2] <= numel and view[2] >= 0):
                raise Corrupt(f"a view of storage {key!r} is {_short(view)}")
            if view[0] not in self.storages:
                self.storages[view[0]] = _Storage(storage.array[view[1]:view[1] + view[2]],
                                                  kind=kind)
            return self.storages[view[0]]
        return storage

    def _storage(self, kind, key, location, numel):
        self._map(location)
        dtype = kind.dtype
        itemsize = 2 if dtype == "bfloat16" else np.dtype(dtype).itemsize
        raw = self.read_record(key, numel * itemsize)
        if dtype == "bfloat16":
            # bfloat16 is float32's upper half: widening is exact (NumPy has no bfloat16).
            self.converted += 1
            halves = np.frombuffer(raw, dtype=self.order + "u2").astype(np.uint32)
            array = (halves << 16).view(np.float32)
        else:
            array = np.frombuffer(raw, dtype=np.dtype(dtype).newbyteorder(self.order))
            array = array.astype(np.dtype(dtype).newbyteorder("="), copy=True)
            if array.dtype == np.bool_ and np.any(array.view(np.uint8) > 1):
                raise Corrupt(f"the bool storage {key!r} holds bytes other than 0 and 1")
        if callable(self.map_location) and not isinstance(self.map_location, (dict, _device)):
            array = self._call_map_location(array, location)
        return _Storage(array, untyped=kind.name == "storage.UntypedStorage", kind=kind)

    def _call_map_location(self, array, location):
        """A callable ``map_location`` is called as PyTorch calls it, with each storage
        (here a 1-D tensor) and its location; it must give back that storage or a tensor
        of the same dtype and size (e.g. ``lambda storage, loc: storage``)."""
        storage = from_numpy(array)
        result = self.map_location(storage, location)
        if result is None or result is storage:
            return array
        if not (isinstance(result, Tensor) and result.dtype == array.dtype
                and tuple(result.shape) == array.shape):
            raise MapLocationError(f"oxmera.load(): map_location gave {_short(result)} for a "
                            f"{array.dtype} storage of {array.size} elements; it must give "
                            f"back the storage it is given (oxmera holds tensors on the CPU)")
        return np.ascontiguousarray(result._data)

    def _map(self, location):
        target = self.map_location
        if isinstance(target, dict):
            target = target.get(location, None)
        if target is None or callable(target) and not isinstance(target, (_device, str)):
            return           # oxmera keeps every tensor on the CPU, whatever the file says
        check_cpu("oxmera.load()", str(target) if hasattr(target, "type") else target)

    def finish(self, obj):
        if self.converted:
            warnings.warn(f"oxmera.load(): {self.source} holds {self.converted} bfloat16 "
                          f"storage(s); oxmera has no bfloat16, so their tensors were loaded "
                          f"as float32 (exactly: every bfloat16 is a float32)", stacklevel=5)
        return obj


def _unpickle(stream, loader, weights_only, encoding):
    unpickler = (_WeightsUnpickler if weights_only else _FullUnpickler)(
        stream, loader, encoding=encoding)
    return unpickler.load()


def _zip_bomb_check(info):
    if info.compress_type != zipfile.ZIP_STORED and info.file_size > 1100 * max(
            info.compress_size, 1024):
        raise Corrupt(f"its record {info.filename!r} claims to expand {info.compress_size} "
                      f"bytes into {info.file_size}, more than compression can")


def load_zip(data, source, map_location, weights_only, encoding):
    """The object of a PyTorch zip checkpoint held in ``data`` (bytes)."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
            NotImplementedError, struct.error) as err:
        raise Corrupt(f"it is a zip archive that cannot be read ({err}): it is truncated or "
                      f"corrupted") from None
    with archive:
        infos = {info.filename: info for info in archive.infolist()}
        pickles = [name for name in infos if name.endswith("/data.pkl")
                   and name.count("/") == 1]
        if len(pickles) != 1:
            raise Corrupt(f"it is a zip archive but not a PyTorch checkpoint (it holds "
                          f"{len(pickles)} <name>/data.pkl records, a PyTorch file one; e.g. "
                          f"a .npz file holds none)")
        prefix = pickles[0][:-len("data.pkl")]

        def read(name, expected=None):
            info = infos.get(prefix + name)
            if info is None:
                raise Corrupt(f"it holds no record {prefix + name!r}: it is truncated or "
                              f"corrupted")
            if expected is not None and info.file_size != expected:
                raise Corrupt(f"its record {prefix + name!r} holds {info.file_size} bytes, "
                              f"its pickle says {expected}: the file is corrupted")
            _zip_bomb_check(info)
            try:
                return archive.read(info)
            except (zipfile.BadZipFile, EOFError, OSError, ValueError,
                    NotImplementedError, RuntimeError) as err:
                raise Corrupt(f"its record {prefix + name!r} cannot be read ({err}): it is "
                              f"truncated or corrupted") from None

        loader = _Loader(source, map_location, lambda key, n: read(f"data/{key}", n))
        if prefix + "byteorder" in infos:
            order = read("byteorder")
            if order not in (b"little", b"big"):
                raise Corrupt(f"its byteorder record is {order[:20]!r}, not little or big")
            loader.order = "<" if order == b"little" else ">"
        obj = _unpickle(io.BytesIO(read("data.pkl")), loader, weights_only, encoding)
        return loader.finish(obj)


def load_legacy(data, source, map_location, weights_only, encoding):
    """The object of a checkpoint in PyTorch's legacy (before 1.6, non-zip) format: the
    pickles of a magic number, a protocol version, system information, the object and
    its storage keys, then each storage as an 8-byte element count and its bytes."""
    stream = io.BytesIO(data)
    header = _WeightsUnpickler(stream, None)
    try:
        magic = header.load()
    except Corrupt as err:
        raise Corrupt(f"it is a pickle but not a PyTorch checkpoint ({err})") from None
    if magic != _LEGACY_MAGIC:
        raise Corrupt("it is a pickle but not a PyTorch checkpoint (oxmera.load reads only "
                      "PyTorch's pickles: its first pickle is not PyTorch's magic number)")
    protocol, info = header.load(), header.load()
    if protocol != _LEGACY_PROTOCOL or not isinstance(info, dict):
        raise Corrupt(f"it is a legacy PyTorch checkpoint of protocol {_short(protocol)}, "
                      f"which oxmera does not read (it reads {_LEGACY_PROTOCOL})")
    keys_needed = {}

    def read_record(key, nbytes):
        keys_needed[key] = nbytes
        return bytes(nbytes)         # filled in below, once the storages' bytes are reached

    loader = _Loader(source, map_location, read_record)
    loader.order = "<" if info.get("little_endian", True) else ">"
    remaining = len(data) - stream.tell()
    obj = _unpickle(stream, _LegacyStorages(loader, remaining), weights_only, encoding)
    keys = _WeightsUnpickler(stream, None).load()
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise Corrupt(f"its list of storage keys is {_short(keys)}")
    for key in keys:
        count = stream.read(8)
        if len(count) < 8:
            raise Corrupt(f"it ends before storage {key!r}: it is truncated")
        (numel,) = struct.unpack("<q", count)
        storage = loader.storages.get(key)
        if storage is None:
            raise Corrupt(f"it holds storage {key!r}, which its pickle never uses")
        if numel != storage.array.size:
            raise Corrupt(f"storage {key!r} holds {numel} elements, its pickle says "
                          f"{storage.array.size}: the file is corrupted")
        raw = stream.read(keys_needed[key])
        if len(raw) < keys_needed[key]:
            raise Corrupt(f"it ends inside storage {key!r}: it is truncated")
        storage.fill(raw, loader.order)
    missing = sorted(set(keys_needed) - set(keys))
    if missing:
        raise Corrupt(f"its pickle uses storages it does not hold: {missing[:5]}")
    if stream.read(1):
        raise Corrupt("more bytes follow its last storage: the file is corrupted")
    return loader.finish(obj)


class _LegacyStorages:
    """The legacy format's storages: allocated when the pickle names them (their bytes
    come after it), each no larger than what the file has left."""

    def __init__(self, loader, remaining):
        self.loader, self.remaining = loader, remaining

    def __call__(self, pid):
        numel = pid[4] if len(pid) > 4 else None
        kind = pid[1] if len(pid) > 1 else None
        if isinstance(kind, _StorageType) and _is_int(numel):
            itemsize = 2 if kind.dtype == "bfloat16" else np.dtype(kind.dtype).itemsize
            if numel * itemsize > self.remaining:
                raise Corrupt(f"its pickle says a storage holds {numel} elements, more than "
                              f"the {self.remaining} bytes the file has left: it is "
                              f"truncated or corrupted")
        return self.loader(pid)
