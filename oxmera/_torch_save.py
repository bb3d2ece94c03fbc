"""PyTorch's zip checkpoint format, written without torch: ``oxmera.save(...,
format="torch")``, and what ``oxmera.save`` writes for an object that is not a tree
of tensors.

The file is what ``torch.save`` writes (pickle protocol 2, storage records aligned to
64 bytes): tensors become ``torch._utils._rebuild_tensor_v2`` calls on storages (a
tensor whose memory is a view of another's is saved as a view of the same storage, so
they share memory again when loaded, by torch or oxmera), Parameters
``_rebuild_parameter`` calls, and every other object is pickled as Python pickles it.
The globals are named, never imported: torch need not be installed. Reading is
``oxmera._torch_format``'s.
"""
import io
import os
import pickle
import struct
import sys
import zipfile
from collections import OrderedDict

import numpy as np

from oxmera._core.autograd import Tensor
from oxmera._torch_format import _ALIGNMENT, _STORAGE_NAMES

__all__ = []


class _Global:
    """A global named in the pickle by its module and name, without importing it (torch
    need not be installed to write what torch.load reads)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __reduce__(self):
        return self.name

    def __call__(self, *args):       # pickle writes only callables as a reduce's function
        raise TypeError(f"{self.module}.{self.name} is PyTorch's; oxmera only names it in "
                        f"a file it writes")


_GLOBALS = {}


def _global(module, name):
    return _GLOBALS.setdefault((module, name), _Global(module, name))


class _StorageRef:
    def __init__(self, key, kind, numel):
        self.key, self.kind, self.numel = key, kind, numel


class _Pickler(pickle._Pickler):
    """Python's pickler (the pure-Python one, whose save_global can be extended) writing
    tensors as torch.save does; the storages' bytes are collected in ``records``."""

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.records = {}          # key -> contiguous array
        self.roots = {}            # (id of the owning array, dtype) -> (_StorageRef, root)

    def save_global(self, obj, name=None):
        if isinstance(obj, _Global):
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", obj.kind, obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            from oxmera.nn.parameter import Parameter

            if isinstance(obj, Parameter):
                return (_global("torch._utils", "_rebuild_parameter"),
                        (obj.detach(), obj.requires_grad, OrderedDict()))
            return self._reduce_tensor(obj)
        if type(obj).__module__.split(".")[0] == "torch":
            raise TypeError(f"oxmera.save(): cannot store a {type(obj).__name__} (a torch "
                            f"object; convert it with .numpy() or oxmera.tensor() first)")
        return NotImplemented

    def _new_storage(self, array):
        dtype = array.dtype
        key = str(len(self.records))
        self.records[key] = array
        if dtype in _STORAGE_NAMES:
            return _StorageRef(key, _global("torch", _STORAGE_NAMES[dtype]), array.size)
        return _StorageRef(key, _global("torch.storage", "UntypedStorage"), array.nbytes)

    def _reduce_tensor(self, tensor):
        array = tensor._data
        dtype = array.dtype
        if dtype.byteorder not in "=|" or not (dtype in _STORAGE_NAMES or dtype.kind == "u"):
            raise TypeError(f"oxmera.save(): cannot store a {dtype} tensor in PyTorch's "
                            f"format")
        ref, offset, strides = self._view_of_root(array)
        if ref is None:
            array = np.ascontiguousarray(array)
            ref, offset = self._new_storage(array.reshape(-1)), 0
            strides = [s // dtype.itemsize for s in array.strides]
        size = tuple(array.shape)
        strides = tuple(strides)
        args = (ref, offset, size, strides, tensor.requires_grad, OrderedDict())
        if dtype in _STORAGE_NAMES:
            return (_global("torch._utils", "_rebuild_tensor_v2"), args)
        return (_global("torch._utils", "_rebuild_tensor_v3"),
                args + (_global("torch", dtype.name),))

    def _view_of_root(self, array):
        """The storage (the whole memory of the array ``array`` views), and the element
        offset and strides of ``array`` in it; (None, 0, None) when it cannot be a view
        (negative or unaligned strides, an empty array)."""
        root = array
        while isinstance(root.base, np.ndarray):
            root = root.base
        itemsize = array.dtype.itemsize
        if array.size == 0 or not (root.flags.c_contiguous or root.flags.f_contiguous):
            return None, 0, None
        start = root.__array_interface__["data"][0]
        offset = array.__array_interface__["data"][0] - start
        strides = [s if n > 1 else itemsize for s, n in zip(array.strides, array.shape)]
        if (root.nbytes % itemsize or offset % itemsize or offset < 0
                or any(s < 0 or s % itemsize for s in strides)):
            return None, 0, None
        entry = self.roots.get((id(root), array.dtype))
        if entry is None or entry[1] is not root:
            flat = root.reshape(-1, order="A").view(np.uint8).view(array.dtype)
            entry = (self._new_storage(flat), root)
            self.roots[(id(root), array.dtype)] = entry
        return entry[0], offset // itemsize, [s // itemsize for s in strides]


def _aligned_extra(offset, name):
    """The local header's extra field padding a record's data to 64 bytes, as torch's
    writer pads it (an extra field of id 'FB')."""
    start = offset + 30 + len(name.encode("utf-8")) + 4
    return b"FB" + struct.pack("<H", -start % _ALIGNMENT) + b"Z" * (-start % _ALIGNMENT)


def dumps(obj):
    """``obj`` in PyTorch's zip format, as bytes."""
    pickled = io.BytesIO()
    pickler = _Pickler(pickled)
    try:
        pickler.dump(obj)
    except (pickle.PicklingError, AttributeError) as err:     # e.g. a lambda, a local class
        raise TypeError(f"oxmera.save(): cannot pickle {type(obj).__name__} for PyTorch's "
                        f"format: {err}") from None
    buffer = io.BytesIO()
    records = [("data.pkl", pickled.getvalue()), (".format_version", b"1"),
               (".storage_alignment", str(_ALIGNMENT).encode()),
               ("byteorder", sys.byteorder.encode())]
    records += [(f"data/{key}", array) for key, array in pickler.records.items()]
    serialization_id = str(int.from_bytes(os.urandom(16), "little")).zfill(40)
    records += [("version", b"3\n"), (".data/serialization_id", serialization_id.encode())]
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, content in records:
            info = zipfile.ZipInfo("archive/" + name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.extra = _aligned_extra(buffer.tell(), info.filename)
            archive.writestr(info, content.tobytes() if isinstance(content, np.ndarray)
                             else content)
    return buffer.getvalue()
