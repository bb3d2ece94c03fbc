"""oxmera.load of PyTorch checkpoints (zip and legacy formats) without torch and
without running code; oxmera.save in PyTorch's format; whole objects only with
weights_only=False. The committed fixtures (tests/data/torch, written by
make_fixtures.py there) test the reader without torch; the tests that write files
with torch, or read oxmera's with it, are skipped without torch."""
import io
import os
import pathlib
import pickle
import struct
import warnings
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import oxmera
from oxmera.nn import Parameter
from oxmera.serialization import load, save

DATA = pathlib.Path(__file__).parent / "data" / "torch"
FORMATS = ["", "_legacy"]
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"]


def _load(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # the bfloat16 note
        return load(path, **kwargs)


def _shares(a, b):
    return np.shares_memory(a._data, b._data)


# -- the committed fixtures, read without torch ----------------------------------------------

@pytest.mark.parametrize("suffix", FORMATS)
def test_every_dtype(suffix):
    path = DATA / f"every_dtype{suffix}.pt"
    with pytest.warns(UserWarning, match="1 bfloat16 storage.*loaded as float32"):
        out = load(path)
    for name in DTYPES:
        assert out[name].dtype == np.dtype(name)
        np.testing.assert_array_equal(out[name].numpy(), np.arange(6).reshape(2, 3))
    assert out["bool"].dtype == np.bool_
    assert out["bool"].tolist() == [[True, False, True], [False, True, False]]
    assert out["bfloat16"].dtype == np.float32 and out["bfloat16"].tolist() == [1.5, -2.0, 3.25]


@pytest.mark.parametrize("suffix", FORMATS)
def test_shared_storages_views_and_parameters(suffix):
    out = _load(DATA / f"shared{suffix}.pt")
    base = out["base"]
    np.testing.assert_array_equal(base.numpy(), np.arange(12.0))
    np.testing.assert_array_equal(out["view"].numpy(), np.arange(2.0, 8.0).reshape(2, 3).T)
    np.testing.assert_array_equal(out["row"].numpy(), [4, 5, 6, 7])
    np.testing.assert_array_equal(out["expanded"].numpy(), [[0, 1, 2], [0, 1, 2]])
    assert out["view"]._data.strides == (4, 12) and out["expanded"]._data.strides == (0, 4)
    for name in ["view", "row", "expanded"]:
        assert _shares(out[name], base), name
    base.add_(100)                              # one storage: a write shows in every view
    assert out["row"].tolist() == [104, 105, 106, 107]
    assert type(out["param"]) is Parameter and out["param"].requires_grad
    assert type(out["frozen"]) is Parameter and not out["frozen"].requires_grad
    assert type(out["leaf"]) is oxmera.Tensor and out["leaf"].requires_grad
    assert out["scalar"].shape == () and out["scalar"].item() == 7
    assert out["scalar"].dtype == np.int64 and out["empty"].shape == (0, 3)
    assert out["meta"] == {"epoch": 3, "lr": 0.1, "name": "x", "size": (2, 3),
                           "dtype": oxmera.float32, "device": oxmera.device("cpu"),
                           "pair": (1, 2), "set": {1, 2}, "bytes": b"ab", "none": None,
                           5: [1.5, True]}


@pytest.mark.parametrize("suffix", FORMATS)
def test_a_modules_state_dict_loads_into_the_oxmera_module(suffix):
    state = _load(DATA / f"model_state_dict{suffix}.pt")
    assert type(state) is OrderedDict and state._metadata[""] == {"version": 1}
    model = oxmera.nn.Sequential(oxmera.nn.Linear(3, 2), oxmera.nn.BatchNorm1d(2))
    model.load_state_dict(state)
    model.eval()
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    w = np.arange(6).reshape(2, 3) * 0.25
    h = x @ w.T + [1.0, 1.25]
    expected = (h - [4.0, 4.25]) / np.sqrt(np.array([5.0, 5.25]) + 1e-5) * [2.0, 2.25] + [3, 3.25]
    np.testing.assert_allclose(model(oxmera.tensor(x)).detach().numpy(), expected, rtol=1e-5)
    assert model[1].num_batches_tracked.item() == 6


@pytest.mark.parametrize("map_location", [None, "cpu", oxmera.device("cpu"), {"cpu": "cpu"},
                                          {"cuda:0": "cpu"}, lambda storage, loc: storage])
def test_map_location(map_location):
    out = _load(DATA / "shared.pt", map_location=map_location)
    assert _shares(out["view"], out["base"])


def test_map_location_to_another_device_or_a_wrong_callable():
    with pytest.raises(RuntimeError, match="cannot use device 'cuda'"):
        _load(DATA / "shared.pt", map_location="cuda")
    with pytest.raises(RuntimeError, match="cannot use device 'cuda:0'"):
        _load(DATA / "shared.pt", map_location={"cpu": "cuda:0"})
    with pytest.raises(TypeError, match="map_location gave"):
        _load(DATA / "shared.pt", map_location=lambda storage, loc: "elsewhere")


def test_a_file_object_and_weights_only_false_read_the_same():
    with open(DATA / "model_state_dict.pt", "rb") as handle:
        first = load(handle)
    second = load(DATA / "model_state_dict.pt", weights_only=False, mmap=False)
    assert list(first) == list(second)
    for key in first:
        np.testing.assert_array_equal(first[key].numpy(), second[key].numpy())


# -- writing PyTorch's format -----------------------------------------------------------------

def _saved(obj, **kwargs):
    buffer = io.BytesIO()
    save(obj, buffer, **kwargs)
    return buffer.getvalue()


def test_format_torch_round_trips_views_parameters_and_values():
    base = oxmera.arange(12.0)
    obj = {"base": base, "view": base.reshape(3, 4)[1:, ::2], "t": base.reshape(3, 4).T,
           "param": Parameter(oxmera.ones(2)), "same": None, "i": oxmera.tensor([1, -2]),
           "u16": oxmera.from_numpy(np.arange(3, dtype=np.uint16)),
           "flags": oxmera.tensor([True, False]), "empty": oxmera.zeros(0, 2),
           "meta": {"epoch": 2, 1.5: (None, "s")}}
    obj["same"] = obj["param"]
    data = _saved(obj, format="torch")
    assert data[:4] == b"PK\x03\x04"
    out = load(io.BytesIO(data))
    for key in ["base", "view", "t", "i", "u16", "flags", "empty"]:
        assert out[key].dtype == obj[key].dtype, key
        np.testing.assert_array_equal(out[key].numpy(), obj[key].numpy())
    assert _shares(out["view"], out["base"]) and _shares(out["t"], out["base"])
    assert type(out["param"]) is Parameter and out["same"] is out["param"]
    assert out["meta"] == {"epoch": 2, 1.5: (None, "s")}


def test_the_format_is_chosen_by_suffix_then_by_content(tmp_path):
    tree = {"w": oxmera.ones(2)}
    for name, magic in [("a.pt", b"PK"), ("b.pth", b"PK"), ("c.bin", b"PK"),
                        ("d.safetensors", None), ("e.ckpt", None)]:
        save(tree, tmp_path / name)
        head = (tmp_path / name).read_bytes()[:2]
        assert (head == magic) if magic else head != b"PK", name
        assert load(tmp_path / name)["w"].tolist() == [1.0, 1.0]
    assert _saved(tree, format="safetensors")[:2] != b"PK"
    assert _saved({"f": len})[:2] == b"PK"              # not a tree of tensors: torch's
    with pytest.raises(TypeError, match="cannot store a builtin_function_or_method"):
        save({"f": len}, tmp_path / "f.safetensors")
    with pytest.raises(TypeError, match="cannot pickle dict for PyTorch's format"):
        save({"f": lambda: 0}, tmp_path / "h.pt")
    assert not (tmp_path / "h.pt").exists()
    with pytest.raises(ValueError, match="format must be"):
        save(tree, tmp_path / "g", format="npz")


def test_a_whole_module_needs_weights_only_false(tmp_path):
    model = oxmera.nn.Sequential(oxmera.nn.Linear(2, 3), oxmera.nn.Tanh())
    path = tmp_path / "model.pt"
    save(model, path)
    with pytest.raises(ValueError, match=r"cannot load '.*model\.pt': weights only load "
                                         r"failed: it refers to the global "
                                         r"oxmera\.nn\.modules\.container\.Sequential.*"
                                         r"weights_only=False") as info:
        load(path)
    assert isinstance(info.value, pickle.UnpicklingError)      # as torch.load raises
    loaded = load(path, weights_only=False)
    x = oxmera.randn(4, 2)
    np.testing.assert_array_equal(loaded(x).detach().numpy(), model(x).detach().numpy())
    assert type(loaded[0].weight) is Parameter


# -- hostile and broken files: ValueError naming the file, nothing run ------------------------

def _torch_zip(pickled, records=(), prefix="archive"):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(f"{prefix}/data.pkl", pickled)
        archive.writestr(f"{prefix}/byteorder", b"little")
        for name, content in records:
            archive.writestr(f"{prefix}/data/{name}", content)
    return buffer.getvalue()


def _legacy(pickled, tail=b""):
    return (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(1001, protocol=2)
            + pickle.dumps({"little_endian": True}, protocol=2) + pickled + tail)


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _error(tmp_path, data, name="bad.pt", **kwargs):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ValueError) as info:
        load(path, **kwargs)
    message = str(info.value)
    assert message.startswith(f"oxmera.load(): cannot load {str(path)!r}: "), message
    return message


@pytest.mark.parametrize("wrap", [_torch_zip, _legacy], ids=["zip", "legacy"])
@pytest.mark.parametrize("protocol", [2, 4])
def test_a_reduce_payload_is_refused_and_never_runs(tmp_path, wrap, protocol):
    marker = tmp_path / "ran"
    pickled = pickle.dumps({"w": [1.0], "x": _Payload(marker)}, protocol=protocol)
    message = _error(tmp_path, wrap(pickled))
    assert f"the global {os.system.__module__}.system" in message
    assert "weights_only=False" in message and not marker.exists()


@pytest.mark.parametrize("module, name", [("builtins", "eval"), ("__builtin__", "exec"),
                                          ("builtins", "getattr"), ("os", "system"),
                                          ("subprocess", "Popen"), ("torch", "load"),
                                          ("numpy.core.multiarray", "_reconstruct"),
                                          ("torch._utils", "_rebuild_device_tensor_from_numpy"),
                                          ("collections", "defaultdict")])
def test_globals_outside_the_allowlist(tmp_path, module, name):
    pickled = b"\x80\x02c" + f"{module}\n{name}\n".encode() + b")R."
    expected = "builtins" if module == "__builtin__" else module
    assert f"global {expected}.{name}" in _error(tmp_path, _torch_zip(pickled))


@pytest.mark.parametrize("pickled, words", [
    (b"\x80\x02(cos\nsystem\nX\x02\x00\x00\x00lso.", "global os.system"),   # INST/OBJ
    (b"(i__main__\nX\n.", "instruction b'i'"),
    (b"\x80\x02}X\x01\x00\x00\x00ab.", "BUILD on a dict"),
    (b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x05\x00\x00\x00utf_7\x86R.",
     "is not how a pickle spells bytes"),
    (b"\x80\x02c__builtin__\nbytearray\nJ\x00\xca\x9a;\x85R.", "bytearray(1000000000)"),
    (b"\x80\x02ccollections\nOrderedDict\n)R}X\x09\x00\x00\x00__class__Nsb.",
     "plain names"),
    (b"\x80\x02ccollections\nOrderedDict\n)R}X\x04\x00\x00\x00keysNsb.", "plain names"),
    (b"\x80\x02]K\x01a", "truncated"),
    (b"\x80\x02h\x05.", "memo entry 5"),
    (b"\x80\x02(X\x07\x00\x00\x00storageQ.", "not a storage"),
    (b"\x80\x02\x8b\x01\x00\x00\x00\x01.", "which loading weights does not allow"),
])
def test_malformed_and_forbidden_pickles(tmp_path, pickled, words):
    assert words in _error(tmp_path, _torch_zip(pickled))


def _ints(values):
    return b"(" + b"".join(b"J" + struct.pack("<i", v) for v in values) + b"t"


def _tensor_pickle(size, stride, offset=0, numel=4, kind="FloatStorage", grad=False):
    """A pickle of one tensor as torch.save writes it, laid out as given."""
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n("
            + b"(X\x07\x00\x00\x00storagectorch\n" + kind.encode() + b"\nX\x01\x00\x00\x000"
            + b"X\x03\x00\x00\x00cpuJ" + struct.pack("<i", numel) + b"tQ"
            + b"J" + struct.pack("<i", offset) + _ints(size) + _ints(stride)
            + (b"\x88" if grad else b"\x89") + b"ccollections\nOrderedDict\n)RtR.")


def test_a_hand_made_tensor_pickle_loads():
    data = _torch_zip(_tensor_pickle((2, 2), (2, 1)), [("0", np.arange(4.0, dtype="<f4"))])
    assert load(io.BytesIO(data)).tolist() == [[0.0, 1.0], [2.0, 3.0]]


@pytest.mark.parametrize("size, stride, offset, numel, record, words", [
    ((2, 3), (3, 1), 0, 4, 16, "reaches element 5 of a storage of 4 elements"),
    ((4,), (1,), 1, 4, 16, "reaches element 4"),
    ((2, 2), (1,), 0, 4, 16, "stride as long as the size"),
    ((2,), (-1,), 1, 4, 16, "stride is (-1,), not a tuple of non-negative ints"),
    ((2,), (1,), -1, 4, 16, "the offset must be a non-negative int"),
    ((2,), (2,), 0, 4, 12, "holds 12 bytes, its pickle says 16"),
    ((1,), (1,), 0, 2 ** 31 - 1, 16, "its pickle says 8589934588"),
])
def test_tensors_outside_their_storage(tmp_path, size, stride, offset, numel, record, words):
    data = _torch_zip(_tensor_pickle(size, stride, offset, numel), [("0", b"\x00" * record)])
    assert words in _error(tmp_path, data)


def test_dtypes_oxmera_does_not_have(tmp_path):
    data = _torch_zip(_tensor_pickle((1,), (1,), numel=1, kind="ComplexHalfStorage"),
                      [("0", b"\x00" * 8)])
    assert "torch.ComplexHalfStorage data, for which oxmera has no dtype" in _error(
        tmp_path, data)


def test_integer_tensors_cannot_require_grad_and_bools_are_0_or_1(tmp_path):
    data = _torch_zip(_tensor_pickle((2,), (1,), numel=2, kind="LongStorage", grad=True),
                      [("0", b"\x00" * 16)])
    assert "only a floating or" in _error(tmp_path, data)
    data = _torch_zip(_tensor_pickle((2,), (1,), numel=2, kind="BoolStorage"),
                      [("0", b"\x01\x02")])
    assert "bytes other than 0 and 1" in _error(tmp_path, data)


def test_a_missing_storage_record_and_an_npz(tmp_path):
    assert "no record 'archive/data/0'" in _error(tmp_path, _torch_zip(_tensor_pickle(
        (2,), (1,))))
    buffer = io.BytesIO()
    np.savez(buffer, w=np.ones(2))
    assert "not a PyTorch checkpoint" in _error(tmp_path, buffer.getvalue())


@pytest.mark.parametrize("name", ["shared.pt", "shared_legacy.pt", "every_dtype.pt"])
def test_truncated_at_every_offset(tmp_path, name):
    data = (DATA / name).read_bytes()
    for cut in range(0, len(data), 7):
        _error(tmp_path, data[:cut])


@pytest.mark.parametrize("name", ["shared.pt", "shared_legacy.pt"])
def test_every_byte_flip_is_caught_or_harmless(name):
    data = (DATA / name).read_bytes()
    for i in range(len(data)):
        corrupted = bytearray(data)
        corrupted[i] ^= 0x41
        try:
            _load(io.BytesIO(bytes(corrupted)))
        except ValueError as err:
            assert str(err).startswith("oxmera.load(): cannot load <BytesIO object>: ")


def test_a_legacy_storage_larger_than_the_file_is_refused_before_allocating(tmp_path):
    pickled = _tensor_pickle((1,), (1,), numel=2 ** 31 - 1)
    assert "more than the" in _error(tmp_path, _legacy(pickled))


# -- files written by torch, and oxmera's files read by torch ---------------------------------

def test_torch_state_dicts_of_real_modules_in_both_formats(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 4, 3), torch.nn.BatchNorm2d(4),
                                torch.nn.Flatten(), torch.nn.LazyLinear(3),
                                torch.nn.LayerNorm(3), torch.nn.Embedding(5, 2))
    model[3](torch.zeros(1, 4 * 3 * 3))                          # materializes the lazy layer
    lstm = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    for new in (True, False):
        path = tmp_path / f"m{new}.pt"
        torch.save({"model": model.state_dict(), "lstm": lstm.state_dict()}, path,
                   _use_new_zipfile_serialization=new)
        out = load(path)
        for part, module in [("model", model), ("lstm", lstm)]:
            reference = module.state_dict()
            assert list(out[part]) == list(reference)
            for key, value in reference.items():
                assert out[part][key].dtype == np.dtype(str(value.dtype).split(".")[1])
                np.testing.assert_array_equal(out[part][key].numpy(), value.numpy())


def test_torch_views_and_every_dtype(tmp_path):
    torch = pytest.importorskip("torch")
    base = torch.arange(24.0, dtype=torch.float64)
    obj = {"base": base, "t": base.view(4, 6).t(), "s": base[1::3], "n": base.view(2, 3, 4)[1]}
    for name in DTYPES + ["bool"]:
        obj[name] = (torch.arange(-3, 3) % 2).to(getattr(torch, name))
    for new in (True, False):
        buffer = io.BytesIO()
        torch.save(obj, buffer, _use_new_zipfile_serialization=new)
        out = load(io.BytesIO(buffer.getvalue()))
        for key, value in obj.items():
            np.testing.assert_array_equal(out[key].numpy(), value.numpy())
            assert out[key]._data.strides == tuple(s * value.element_size()
                                                   for s in value.stride())
        for key in ["t", "s", "n"]:
            assert _shares(out[key], out["base"])


def test_torch_reads_what_oxmera_writes(tmp_path):
    torch = pytest.importorskip("torch")
    model = oxmera.nn.Sequential(oxmera.nn.Linear(3, 2), oxmera.nn.BatchNorm1d(2))
    base = oxmera.arange(12.0)
    path = tmp_path / "oxmera.pt"
    save({"model": model.state_dict(), "base": base, "view": base.reshape(3, 4)[:, 1:3],
          "param": Parameter(oxmera.ones(2)), "dtypes": [oxmera.zeros(2, dtype=getattr(
              oxmera, name)) for name in DTYPES + ["bool"]], "epoch": 5}, path)
    out = torch.load(path, weights_only=True)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    reference.load_state_dict(out["model"])
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(out["model"][key].numpy(), value.numpy())
    assert out["view"].untyped_storage().data_ptr() == out["base"].untyped_storage().data_ptr()
    np.testing.assert_array_equal(out["view"].numpy(), base.reshape(3, 4)[:, 1:3].numpy())
    assert isinstance(out["param"], torch.nn.Parameter) and out["epoch"] == 5
    assert [str(t.dtype) for t in out["dtypes"]] == [f"torch.{n}" for n in DTYPES + ["bool"]]


def test_a_plain_safetensors_file_from_the_safetensors_package(tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "model.safetensors"
    arrays = {"encoder.layer.0.weight": np.arange(6, dtype=np.float16).reshape(2, 3),
              "ids": np.arange(4, dtype=np.int64), "mask": np.array([True, False])}
    save_file(arrays, str(path))
    out = load(path)
    assert sorted(out) == sorted(arrays)
    for key, value in arrays.items():
        assert out[key].dtype == value.dtype
        np.testing.assert_array_equal(out[key].numpy(), value)


def test_a_whole_torch_module_is_refused_by_default(tmp_path):
    torch = pytest.importorskip("torch")
    marker = tmp_path / "ran"
    torch.save({"model": torch.nn.Linear(2, 2), "payload": _Payload(marker)},
               tmp_path / "whole.pt")
    message = _error(tmp_path, (tmp_path / "whole.pt").read_bytes())
    assert "global torch.nn.modules.linear.Linear" in message and not marker.exists()
    with pytest.raises(pickle.UnpicklingError):          # torch refuses it alike
        torch.load(tmp_path / "whole.pt", weights_only=True)


def test_a_pipe_stream_of_a_torch_file_loads():
    import threading

    data = (DATA / "shared_legacy.pt").read_bytes()
    read_end, write_end = os.pipe()

    def writer():
        with os.fdopen(write_end, "wb") as out:
            out.write(data)

    thread = threading.Thread(target=writer)
    thread.start()
    with os.fdopen(read_end, "rb") as stream:
        out = _load(stream)
    thread.join()
    assert _shares(out["view"], out["base"]) and out["row"].tolist() == [4, 5, 6, 7]
