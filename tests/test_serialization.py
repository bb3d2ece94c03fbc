"""oxmera.save / oxmera.load: exact round trips of state dicts and checkpoints, the
safetensors layout, and a clear ValueError (never a crash, never a partial object) for
truncated, corrupted, foreign and unsupported files."""
import io
import json
import math
import os
import pathlib
import pickle
import struct

import numpy as np
import pytest
from safetensors.numpy import save as st_save
from safetensors.numpy import save_file as st_save_file

import oxmera
from oxmera.optim import SGD, Adagrad, Adam, AdamW, RMSprop
from oxmera.optim.lr_scheduler import MultiStepLR, ReduceLROnPlateau
from oxmera.serialization import load, save

RNG = np.random.default_rng(2)
DTYPES = [np.bool_, np.uint8, np.int8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
          np.uint64, np.float16, np.float32, np.float64]


def _random(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.asarray(RNG.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(RNG.integers(info.min, info.max, size=shape, dtype=dtype,
                                       endpoint=True))
    values = np.asarray(RNG.standard_normal(shape)).astype(dtype)
    if values.size >= 3:
        values.flat[:3] = [np.inf, -np.inf, np.nan]
    return values


def _equal(a, b):
    """Exact equality, down to the bits of floats, the types and tensor dtypes."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, oxmera.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.requires_grad == b.requires_grad
        assert a._data.tobytes() == b._data.tobytes()
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    elif isinstance(a, np.generic):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    elif isinstance(a, dict):
        assert list(a) == list(b) and [type(k) for k in a] == [type(k) for k in b]
        for key in a:
            _equal(a[key], b[key])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _equal(x, y)
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b)
    else:
        assert a == b


def _round_trip(obj):
    buffer = io.BytesIO()
    save(obj, buffer)
    return load(io.BytesIO(buffer.getvalue()))


def _checkpoint():
    w = oxmera.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    return {
        "model": {"weight": w, "bias": oxmera.zeros(4), "tied": w,
                  "steps": oxmera.tensor(7), "mask": oxmera.tensor([True, False])},
        "optimizer": {"state": {0: {"step": oxmera.tensor(3.0), "momentum_buffer": None}},
                      "param_groups": [{"params": [0, 1], "betas": (0.9, 0.999), "lr": 0.1,
                                        "nesterov": False, "name": "ünïcode"}]},
        "scheduler": {"best": math.inf, "low": -math.inf, "nan": math.nan, "milestones": {3: 1},
                      1.5: "float key", None: "none key", True: "bool key", -2: []},
        "extra": [np.arange(6, dtype=np.uint16).reshape(2, 3), np.float32(2.5), np.int64(-3),
                  (), [], {}, "", 10 ** 30, -0.0, 1e-310],
    }


# -- round trips ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=[np.dtype(d).name for d in DTYPES])
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 0, 3), (3, 4)])
def test_every_dtype_and_shape_round_trips_exactly(dtype, shape):
    array = _random(dtype, shape)
    obj = {"t": oxmera.from_numpy(array), "a": array.copy()}
    if array.ndim == 0:
        obj["s"] = array[()]
    _equal(_round_trip(obj), obj)


def test_a_checkpoint_round_trips_exactly():
    obj = _checkpoint()
    out = _round_trip(obj)
    _equal(out, obj)
    assert out["model"]["tied"] is out["model"]["weight"]         # tied weights stay tied
    assert out["model"]["weight"].requires_grad and out["model"]["weight"].is_leaf


def test_top_level_tensor_list_and_tuple():
    t = oxmera.arange(4.0)
    _equal(_round_trip(t), t)
    _equal(_round_trip([t, (1, 2.0)]), [t, (1, 2.0)])
    _equal(_round_trip(None), None)


def test_non_contiguous_and_views_are_stored_by_value():
    base = oxmera.arange(12.0).reshape(3, 4)
    obj = {"t": base.T, "row": base[1], "every_other": base[:, ::2]}
    out = _round_trip(obj)
    for key in obj:
        np.testing.assert_array_equal(out[key].numpy(), obj[key].numpy())


def test_loaded_tensors_own_writable_memory():
    original = oxmera.ones(3)
    out = _round_trip({"t": original})["t"]
    out.add_(1)
    assert original.tolist() == [1.0, 1.0, 1.0] and out.tolist() == [2.0, 2.0, 2.0]


def test_paths_and_file_objects(tmp_path):
    obj = _checkpoint()
    for target in [str(tmp_path / "a.safetensors"), tmp_path / "b.safetensors"]:
        save(obj, target)
        _equal(load(target), obj)
    with open(tmp_path / "c.safetensors", "wb") as handle:
        save(obj, handle)
    with open(tmp_path / "c.safetensors", "rb") as handle:
        _equal(load(handle), obj)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.safetensors", "b.safetensors",
                                                         "c.safetensors"]


def test_the_file_is_a_standard_safetensors_file(tmp_path):
    from safetensors.numpy import load_file

    path = tmp_path / "w.safetensors"
    save({"layer": {"weight": oxmera.ones(2, 2)}, "state": {0: {"buf": oxmera.zeros(3)}}}, path)
    arrays = load_file(str(path))
    assert sorted(arrays) == ["layer.weight", "state.0.buf"]
    assert arrays["layer.weight"].dtype == np.float32


def test_a_foreign_safetensors_file_loads_as_a_flat_dict(tmp_path):
    path = tmp_path / "foreign.safetensors"
    st_save_file({"b": np.arange(3, dtype=np.int32), "a.weight": np.ones((2, 2))}, str(path),
                 metadata={"format": "pt"})
    out = load(path)
    assert sorted(out) == ["a.weight", "b"] and all(isinstance(v, oxmera.Tensor)
                                                    for v in out.values())
    assert out["b"].dtype == np.int32 and out["a.weight"].dtype == np.float64


# -- saving errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("obj, match", [
    ({"a": {1, 2}}, "cannot store a set at obj\\['a'\\]"),
    ({"a": [object()]}, "cannot store a object at obj\\['a'\\]\\[0\\]"),
    ({"c": np.zeros(2, np.complex64)}, "complex64 ndarray at obj\\['c'\\]"),
    ({"s": np.array(["x"])}, "<U1 ndarray"),
    ({(1, 2): 3}, "dict key \\(1, 2\\)"),
])
def test_unsupported_objects_raise_type_error_and_write_nothing(tmp_path, obj, match):
    path = tmp_path / "out.safetensors"
    save({"keep": oxmera.ones(1)}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError, match=match):
        save(obj, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["out.safetensors"]         # no temporary file left


def test_a_torch_tensor_gets_a_hint():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="cannot store a Tensor at obj\\['w'\\].*\\.numpy\\(\\)"):
        save({"w": torch.zeros(2)}, io.BytesIO())


# -- loading errors ---------------------------------------------------------------------------

def _file_bytes(obj=None):
    buffer = io.BytesIO()
    save(_checkpoint() if obj is None else obj, buffer)
    return buffer.getvalue()


def _hand_made(header, data=b""):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def _load_error(data, tmp_path, name="bad.safetensors"):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ValueError) as info:
        load(path)
    message = str(info.value)
    assert message.startswith(f"oxmera.load(): cannot load {str(path)!r}: "), message
    return message


def test_truncated_at_every_offset(tmp_path):
    data = _file_bytes()
    header_end = 8 + struct.unpack("<Q", data[:8])[0]
    for cut in range(len(data)):
        message = _load_error(data[:cut], tmp_path)
        if cut < 8:
            assert "too short" in message
        elif cut < header_end:
            assert "truncated or not a safetensors file" in message
        else:
            assert "truncated" in message


def test_truncated_messages_at_typical_offsets(tmp_path):
    data = _file_bytes()
    header_end = 8 + struct.unpack("<Q", data[:8])[0]
    assert "0 bytes long" in _load_error(b"", tmp_path)
    assert "5 bytes long" in _load_error(data[:5], tmp_path)
    assert "header of" in _load_error(data[:header_end // 2], tmp_path)
    assert "tensor data" in _load_error(data[:header_end + 3], tmp_path)
    assert "tensor data" in _load_error(data[:-1], tmp_path)
    assert "tensor data" in _load_error(data + b"\x00", tmp_path)       # trailing garbage


def test_every_single_byte_corruption_is_caught_or_harmless():
    """Flip each byte: load raises ValueError, or returns exactly the saved object (a flip
    in the header's padding spaces or the JSON's insignificant whitespace changes nothing)."""
    obj = {"w": oxmera.tensor(RNG.standard_normal((2, 3))), "state": {0: {"step": 2, "f": 0.5}},
           "flags": oxmera.tensor([True, False])}
    data = bytearray(_file_bytes(obj))
    caught = 0
    for i in range(len(data)):
        corrupted = bytearray(data)
        corrupted[i] ^= 0x5A
        try:
            out = load(io.BytesIO(bytes(corrupted)))
        except ValueError as err:
            assert str(err).startswith("oxmera.load(): cannot load <BytesIO object>: ")
            caught += 1
        else:
            _equal(out, obj)
    assert caught > 0.9 * len(data)


def test_random_multi_byte_corruption_never_crashes():
    data = _file_bytes()
    rng = np.random.default_rng(0)
    for _ in range(300):
        corrupted = bytearray(data)
        for i in rng.integers(0, len(data), size=rng.integers(1, 6)):
            corrupted[i] = rng.integers(0, 256)
        try:
            load(io.BytesIO(bytes(corrupted)))
        except ValueError:
            pass


def test_a_corrupted_tensor_byte_fails_its_checksum(tmp_path):
    data = bytearray(_file_bytes({"w": oxmera.ones(100)}))
    data[-10] ^= 1
    assert "does not match its checksum" in _load_error(bytes(data), tmp_path)


@pytest.mark.parametrize("content, hint", [
    (b"PK\x03\x04" + b"\x00" * 100, "zip archive"),
    (pickle.dumps({"w": [1.0, 2.0]}), "pickle"),
    (b"\x93NUMPY" + b"\x00" * 100, ".npy"),
    (b"hello, this is text and not weights\n", "not a safetensors file"),
])
def test_wrong_formats(tmp_path, content, hint):
    assert hint in _load_error(content, tmp_path)


def test_npz_files_are_refused(tmp_path):
    # (PyTorch's files load: tests/test_torch_checkpoints.py)
    buffer = io.BytesIO()
    np.savez(buffer, w=np.ones(3))
    assert "zip archive but not a PyTorch checkpoint" in _load_error(buffer.getvalue(),
                                                                     tmp_path)


@pytest.mark.parametrize("header, data, match", [
    ([1, 2], b"", "header is a JSON list"),
    ("{", b"", "not valid JSON"),
    ({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}, b"\x00" * 4,
     "tensor 'w' has dtype BF16, which oxmera does not support"),
    ({"w": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\x00" * 8,
     "dtype C64"),
    ({"w": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\x00", "F8_E4M3"),
    ({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\x00" * 8,
     "safetensors could not read it"),
    ({"w": {"dtype": "F32", "shape": [2]}}, b"", "entry of tensor 'w' is malformed"),
    ({"__metadata__": {"a": 1}}, b"", "__metadata__ is not a map from strings to strings"),
    ({"b": {"dtype": "BOOL", "shape": [2], "data_offsets": [0, 2]}}, b"\x01\x07",
     "bool tensor 'b' holds bytes other than 0 and 1"),
])
def test_wrong_headers_and_unsupported_dtypes(tmp_path, header, data, match):
    raw = header.encode() if isinstance(header, str) else json.dumps(header).encode()
    content = struct.pack("<Q", len(raw)) + raw + data
    assert match in _load_error(content, tmp_path)


def _metadata(text, version="1", checksum=None):
    import zlib
    return {"oxmera.format_version": version, "oxmera.structure": text,
            "oxmera.structure_crc32": str(zlib.crc32(text.encode()) if checksum is None
                                          else checksum)}


def _oxmera_file(structure, arrays, version="1"):
    text = structure if isinstance(structure, str) else json.dumps(structure)
    return st_save(arrays, metadata=_metadata(text, version))


def _node(name, array):
    import zlib
    names = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}
    return {"tensor": name, "dtype": names[array.dtype], "shape": list(array.shape),
            "crc32": zlib.crc32(array.tobytes())}


@pytest.mark.parametrize("make, match", [
    (lambda a: _oxmera_file({"dict": [["w", _node("w", a)]]}, {"w": a}, version="2"),
     "format version '2'"),
    (lambda a: _oxmera_file({"dict": [["w", _node("v", a)]]}, {"w": a}),
     "refers to a tensor 'v' that the file does not hold"),
    (lambda a: _oxmera_file({"dict": [["w", _node("w", a)]]}, {"w": a, "x": a}),
     "tensors the structure does not mention: \\['x'\\]"),
    (lambda a: _oxmera_file({"dict": [["w", dict(_node("w", a), shape=[4, 1])]]}, {"w": a}),
     "stored as float32 \\(4,\\) but the structure says F32 \\[4, 1\\]"),
    (lambda a: _oxmera_file({"dict": [["w", dict(_node("w", a), dtype="I32")]]}, {"w": a}),
     "but the structure says I32"),
    (lambda a: _oxmera_file({"dict": [["w", dict(_node("w", a), crc32=1)]]}, {"w": a}),
     "checksum"),
    (lambda a: _oxmera_file({"dict": [["w"]]}, {}), "dict entry of the structure is malformed"),
    (lambda a: _oxmera_file({"set": [1]}, {}), "unexpected node"),
    (lambda a: _oxmera_file({"dict": [[{"float": "big"}, 1]]}, {}), "unexpected node"),
    (lambda a: _oxmera_file({"dict": [[[1], 1]]}, {}), "unexpected value \\[1\\]"),
    (lambda a: _oxmera_file("{not json", {}), "structure is not valid JSON"),
    (lambda a: _oxmera_file("[" * 5000 + "]" * 5000, {}), "nested too deeply"),
    (lambda a: _oxmera_file('{"list": [' * 5000 + "1" + "]}" * 5000, {}), "nested too deeply"),
    (lambda a: st_save({}, metadata=dict(_metadata("1"), **{"oxmera.structure_crc32": "7"})),
     "structure does not match its checksum"),
    (lambda a: st_save({}, metadata={"oxmera.structure": "1"}),
     "oxmera metadata is incomplete"),
])
def test_wrong_structures(tmp_path, make, match):
    import re
    message = _load_error(make(np.arange(4, dtype=np.float32)), tmp_path)
    assert re.search(match, message), message


def test_a_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing.safetensors")


def test_a_text_mode_file_is_refused(tmp_path):
    path = tmp_path / "w.safetensors"
    save({"a": 1}, path)
    with open(path, encoding="latin-1") as handle, pytest.raises(TypeError, match="binary"):
        load(handle)


# -- with the optimizers, schedulers and modules ----------------------------------------------

OPTIMIZERS = [(SGD, dict(lr=0.1, momentum=0.9, nesterov=True)), (SGD, dict(lr=0.1)),
              (Adam, dict(lr=0.05, amsgrad=True)), (AdamW, dict(lr=0.05)),
              (RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
              (Adagrad, dict(lr=0.1, lr_decay=0.01))]


def _mlp_loss(weights, x, y):
    w1, b1, w2 = weights
    return ((oxmera.tanh(x @ w1 + b1) @ w2 - y) ** 2).mean()


def _train(opt, weights, x, y, steps):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = _mlp_loss(weights, x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("optimizer_class, options", OPTIMIZERS,
                         ids=[f"{c.__name__}-{o}" for c, o in OPTIMIZERS])
def test_checkpoint_resumes_training_exactly(tmp_path, optimizer_class, options):
    x = oxmera.tensor(RNG.standard_normal((8, 3)))
    y = oxmera.tensor(RNG.standard_normal((8, 2)))
    weights = [oxmera.tensor(RNG.standard_normal(s) * 0.5, requires_grad=True)
               for s in [(3, 5), (5,), (5, 2)]]
    opt = optimizer_class(weights, **options)
    sched = ReduceLROnPlateau(opt, patience=0, factor=0.5)
    for loss in _train(opt, weights, x, y, 4):
        sched.step(loss)
    path = tmp_path / "checkpoint.safetensors"
    save({"weights": weights, "optimizer": opt.state_dict(), "scheduler": sched.state_dict()},
         path)
    expected = _train(opt, weights, x, y, 5)
    expected_weights = [w.detach().numpy().copy() for w in weights]

    checkpoint = load(path)
    fresh = [oxmera.zeros(w.shape, dtype=w.dtype, requires_grad=True) for w in weights]
    with oxmera.no_grad():
        for w, saved in zip(fresh, checkpoint["weights"]):
            w.copy_(saved)
    opt2 = optimizer_class(fresh, lr=99.0)
    opt2.load_state_dict(checkpoint["optimizer"])
    sched2 = ReduceLROnPlateau(opt2)
    sched2.load_state_dict(checkpoint["scheduler"])
    assert sched2.best == sched.best or math.isinf(sched2.best)
    assert _train(opt2, fresh, x, y, 5) == expected
    for w, e in zip(fresh, expected_weights):
        assert w.detach().numpy().tobytes() == e.tobytes()


def test_scheduler_state_with_a_counter_round_trips():
    opt = SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0)
    sched = MultiStepLR(opt, milestones=[2, 2, 4], gamma=0.5)
    opt.step()
    sched.step()
    out = _round_trip(sched.state_dict())
    sched2 = MultiStepLR(SGD([oxmera.zeros(1, requires_grad=True)], lr=1.0), milestones=[])
    sched2.load_state_dict(out)
    assert sched2.milestones == sched.milestones and sched2.last_epoch == 1


def test_module_state_dict_round_trip(tmp_path):
    nn = oxmera.nn
    if not all(hasattr(nn, name) for name in ("Sequential", "Linear", "ReLU")):
        pytest.skip("oxmera.nn modules are not there yet")
    oxmera.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = oxmera.randn(5, 4)
    expected = model(x).detach().numpy()
    save(model.state_dict(), pathlib.Path(tmp_path) / "model.safetensors")
    oxmera.manual_seed(1)
    other = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    other.load_state_dict(load(pathlib.Path(tmp_path) / "model.safetensors"))
    assert other(x).detach().numpy().tobytes() == expected.tobytes()
