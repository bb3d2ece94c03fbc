"""oxmera.load and oxmera.save at the edges: hostile files, odd paths, what one writes
and the other reads.

- Every field of the structure is type-checked and every reference to a tensor is
  checked (a tensor referenced twice is checked twice): a malformed file is a
  ValueError naming the file, never a TypeError or another exception, whether it is
  read from a path, a seekable file object or a stream.
- A path that is not a regular file (FIFO, device, directory, a symlink to one) is
  refused before anything is read, and the 8-byte header length is read before the
  body: these loads run in a subprocess with a timeout, so a hang is a failure.
- ``save()`` never writes what ``load()`` refuses (nesting depth, cycles, header
  size); it follows symlinks as ``open()`` does, atomically, and its errors name the
  user's path, not a temporary file.
"""
import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

import oxmera
import oxmera.serialization as serialization
from oxmera.serialization import load, save

W = np.arange(4, dtype=np.float32)


# -- hand-made files ------------------------------------------------------------------------

def _raw_file(header, data=b""):
    """A safetensors file from a header dict (or raw header bytes) and the data bytes."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + data


def _oxmera_file(structure, arrays=None):
    """A file holding ``arrays`` (name -> array) and the structure JSON ``structure``
    (an object, or its text), with a correct structure checksum: only the structure
    can be wrong."""
    arrays = {"w": W} if arrays is None else arrays
    text = structure if isinstance(structure, str) else json.dumps(structure)
    header, data = {}, b""
    for name, array in arrays.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": serialization._DTYPE_NAMES[array.dtype],
                        "shape": list(array.shape),
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    header["__metadata__"] = {"oxmera.format_version": "1", "oxmera.structure": text,
                              "oxmera.structure_crc32": str(zlib.crc32(text.encode()))}
    return _raw_file(header, data)


def _node(kind="tensor", name="w", array=W, **fields):
    node = {kind: name, "dtype": serialization._DTYPE_NAMES[array.dtype],
            "shape": list(array.shape), "crc32": zlib.crc32(array.tobytes())}
    node.update(fields)
    return node


class _Stream(io.RawIOBase):
    """A non-seekable binary stream (a pipe, a socket) over ``data``; counts what is read."""

    def __init__(self, data):
        self.data, self.position = data, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        chunk = self.data[self.position:self.position + len(buffer)]
        buffer[:len(chunk)] = chunk
        self.position += len(chunk)
        return len(chunk)


VIAS = ["path", "file object", "stream"]


def _load_via(data, via, tmp_path):
    if via == "path":
        path = tmp_path / "hostile.safetensors"
        path.write_bytes(data)
        return load(path), repr(str(path))
    if via == "file object":
        return load(io.BytesIO(data)), "<BytesIO object>"
    return load(io.BufferedReader(_Stream(data))), "<BufferedReader object>"


def _refused(data, via, tmp_path, *words):
    """Load ``data``: it must raise ValueError naming the source and every word."""
    with pytest.raises(ValueError) as info:
        _load_via(data, via, tmp_path)
    message = str(info.value)
    source = repr(str(tmp_path / "hostile.safetensors")) if via == "path" else "<"
    assert message.startswith(f"oxmera.load(): cannot load {source}"), message
    for word in words:
        assert word in message, (word, message)
    return message


# -- a tensor referenced twice: every reference is checked --------------------------------

@pytest.mark.parametrize("second, words", [
    (_node(dtype="I32", shape=[9], crc32=0), ["structure says I32 [9]"]),      # the issue's
    (_node(shape=[2, 2]), ["structure says F32 [2, 2]"]),
    (_node(crc32=0), ["does not match its checksum"]),
    (_node(kind="ndarray"), ["referred to twice"]),
    (_node(requires_grad=True), ["referred to twice"]),
    (_node(dtype=["F32"]), ["malformed"]),
])
@pytest.mark.parametrize("via", VIAS)
def test_every_reference_to_a_tensor_is_checked(tmp_path, via, second, words):
    data = _oxmera_file({"list": [_node(), second]})
    _refused(data, via, tmp_path, *words)
    # the same two references the other way round, and the good one twice, for contrast
    _refused(_oxmera_file({"list": [second, _node()]}), via, tmp_path)
    out, _ = _load_via(_oxmera_file({"list": [_node(), _node()]}), via, tmp_path)
    assert out[0] is out[1] and out[0].tolist() == W.tolist()


# -- every field of every kind of node ------------------------------------------------------

JSON_VALUES = [None, True, False, 0, 1, -1, 7, 2 ** 32, 1.5, "", "w", "F32", [], [4], [4.0],
               [-4], [True], {}, {"float": "nan"}, [[1, 2]]]


def _valid_structures():
    """(name, a valid structure, the object it loads as), one per kind of node."""
    return [
        ("tensor", _node(), None),
        ("tensor+requires_grad", _node(requires_grad=True), None),
        ("ndarray", _node(kind="ndarray"), None),
        ("numpy_scalar", _node(kind="numpy_scalar", name="s", array=np.array(2.5, np.float32)),
         None),
        ("dict", {"dict": [["a", 1], [2, "b"], [{"float": "inf"}, None]]}, None),
        ("list", {"list": [1, "x", None]}, None),
        ("tuple", {"tuple": [1.5, True]}, None),
        ("float", {"float": "-inf"}, None),
    ]


def _arrays_for(name):
    return {"s": np.array(2.5, np.float32)} if name == "numpy_scalar" else {"w": W}


def _mutations(node):
    """Every node made from ``node`` by replacing one field's value, deleting a field, or
    adding one; each nested value of a container replaced too."""
    for key in list(node):
        for value in JSON_VALUES:
            yield f"{key}={value!r}", dict(node, **{key: value})
        yield f"no {key}", {k: v for k, v in node.items() if k != key}
    for extra in ("extra", "tensor", "list", "dict", "float"):
        if extra not in node:
            yield f"+{extra}", dict(node, **{extra: []})
    for kind in ("dict", "list", "tuple"):
        if kind in node:
            for i in range(len(node[kind])):
                for value in JSON_VALUES:
                    items = list(node[kind])
                    items[i] = value
                    yield f"{kind}[{i}]={value!r}", {kind: items}
                    if kind == "dict" and isinstance(node[kind][i], list):
                        for j in range(2):
                            pair = list(node[kind][i])
                            pair[j] = value
                            items = list(node[kind])
                            items[i] = pair
                            yield f"{kind}[{i}][{j}]={value!r}", {kind: items}


@pytest.mark.parametrize("name, structure, _", _valid_structures(),
                         ids=[s[0] for s in _valid_structures()])
def test_a_malformed_field_is_a_value_error_naming_the_file(tmp_path, name, structure, _):
    """Each field of each kind of node replaced by each JSON type, deleted, or joined by
    another: the file loads (as a tensor if the node still is one) or is refused with a
    ValueError naming the file — never a TypeError, KeyError or AttributeError."""
    arrays = _arrays_for(name)
    refused = 0
    path = tmp_path / "hostile.safetensors"
    for label, mutated in _mutations(structure):
        # inside a list, so a surviving array node must still account for the array
        data = _oxmera_file({"list": [mutated, _node(**_first_ref(name))]}, arrays)
        path.write_bytes(data)
        try:
            load(path)
        except ValueError as err:
            assert str(err).startswith(f"oxmera.load(): cannot load {str(path)!r}: "), err
            refused += 1
        except Exception as err:                       # pragma: no cover - the failure
            pytest.fail(f"{label}: {type(err).__name__}: {err}")
    assert refused > 10


def _first_ref(name):
    if name == "numpy_scalar":
        return dict(kind="numpy_scalar", name="s", array=np.array(2.5, np.float32))
    return {}


@pytest.mark.parametrize("structure, words", [
    (_node(dtype=[1]), ["malformed"]),                         # was: unhashable list
    (_node(dtype=5), ["malformed"]),
    (_node(shape="4"), ["malformed"]),
    (_node(shape=[4.0]), ["malformed"]),
    (_node(shape=[True, 1]), ["malformed"]),
    (_node(crc32="0"), ["malformed"]),
    (_node(crc32=-1), ["malformed"]),
    (_node(crc32=2 ** 32), ["malformed"]),
    (_node(requires_grad="yes"), ["malformed"]),
    (_node(kind="ndarray", requires_grad=True), ["malformed"]),
    (_node(device="cpu"), ["malformed"]),
    ({k: v for k, v in _node().items() if k != "crc32"}, ["malformed"]),
    (dict(_node(), list=[]), ["fields of 2 kinds"]),
    (_node(name=5), ["refers to a tensor 5"]),
    (_node(name=["w"]), ["refers to a tensor ['w']"]),
    ({"list": 5}, ["list node", "malformed"]),
    ({"list": [], "x": 1}, ["list node", "malformed"]),
    ({"tuple": "ab"}, ["tuple node", "malformed"]),
    ({"dict": {"a": 1}}, ["dict node", "malformed"]),
    ({"dict": [["a", 1, 2]]}, ["dict entry", "malformed"]),
    ({"dict": [[["a"], 1]]}, ["unexpected value ['a']"]),     # an unhashable key
    ({"dict": [["a", 1], ["a", 2]]}, ["key 'a' twice"]),
    ({"dict": [[{"float": 5}, 1]]}, ["unexpected node"]),
    ({"float": "big"}, ["unexpected node"]),
    ('{"list": [NaN]}', ["not valid JSON", "NaN"]),
    ('{"list": [Infinity]}', ["not valid JSON"]),
])
@pytest.mark.parametrize("via", VIAS)
def test_malformed_structures(tmp_path, via, structure, words):
    has_tensor = not isinstance(structure, str) and any(k in structure for k in
                                                          ("tensor", "ndarray"))
    arrays = {"w": W} if has_tensor else {}
    _refused(_oxmera_file(structure, arrays), via, tmp_path, *words)


def test_a_numpy_scalar_node_must_have_an_empty_shape(tmp_path):
    _refused(_oxmera_file(_node(kind="numpy_scalar")), "path", tmp_path, "numpy_scalar",
             "shape [4]")
    ints = np.arange(3, dtype=np.int64)
    _refused(_oxmera_file(_node(array=ints, requires_grad=True), {"w": ints}), "path", tmp_path,
             "requires grad")


@pytest.mark.parametrize("entry", [
    {"dtype": "F32", "shape": ["4"], "data_offsets": [0, 16]},
    {"dtype": "F32", "shape": [4], "data_offsets": [0, "16"]},
    {"dtype": "F32", "shape": [4], "data_offsets": [0]},
    {"dtype": "F32", "shape": [4], "data_offsets": [0, -16]},
    {"dtype": "F32", "shape": [4], "data_offsets": [0, True]},
    {"dtype": "F32", "shape": 4, "data_offsets": [0, 16]},
])
@pytest.mark.parametrize("via", VIAS)
def test_malformed_header_entries(tmp_path, via, entry):
    _refused(_raw_file({"w": entry}, W.tobytes()), via, tmp_path, "entry of tensor 'w'",
             "malformed")


# -- header first: the 8-byte length, then the header, then the body ------------------------

@pytest.mark.parametrize("length", [2 ** 63, 2 ** 64 - 1, serialization._MAX_HEADER + 1])
@pytest.mark.parametrize("via", VIAS)
def test_a_huge_header_length_is_refused_before_reading_on(tmp_path, via, length):
    data = struct.pack("<Q", length) + b"{}" * 10
    _refused(data, via, tmp_path, f"header of {length} bytes")


def test_a_stream_is_read_no_further_than_the_header_lets():
    stream = _Stream(struct.pack("<Q", 2 ** 40) + b"\x00" * 1000)
    with pytest.raises(ValueError, match="header of 1099511627776 bytes"):
        load(io.BufferedReader(stream, buffer_size=8))
    assert stream.position <= 8
    header = json.dumps({"w": {"dtype": "F32", "shape": [4],
                               "data_offsets": [0, 16]}}).encode()
    short = _Stream(struct.pack("<Q", len(header)) + header + b"\x00" * 3)
    with pytest.raises(ValueError, match="16 bytes of tensor data but the file holds 3"):
        load(io.BufferedReader(short))
    longer = _Stream(struct.pack("<Q", len(header)) + header + b"\x00" * 17)
    with pytest.raises(ValueError, match="16 bytes of tensor data but more follow"):
        load(io.BufferedReader(longer))


@pytest.mark.parametrize("via", VIAS)
def test_valid_files_load_through_every_kind_of_source(tmp_path, via):
    obj = {"w": oxmera.ones(2, 3), "tied": None, "n": [1, (2.5, None)], "s": np.float16(1)}
    obj["tied"] = obj["w"]
    buffer = io.BytesIO()
    save(obj, buffer)
    out, _ = _load_via(buffer.getvalue(), via, tmp_path)
    assert out["tied"] is out["w"] and out["w"].tolist() == [[1.0] * 3] * 2
    assert out["n"] == [1, (2.5, None)] and out["s"] == np.float16(1)


def test_a_file_object_is_read_from_its_position(tmp_path):
    buffer = io.BytesIO()
    buffer.write(b"junk")
    save({"a": 1}, buffer)
    buffer.seek(4)
    assert load(buffer) == {"a": 1}


# -- paths that are not regular files: a subprocess with a timeout -------------------------

def _load_in_subprocess(code, timeout=60):
    """Run ``code`` (which prints the outcome of a load) in a fresh interpreter."""
    program = "import oxmera\nfrom oxmera.serialization import load\n" + textwrap.dedent(code)
    try:
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"oxmera.load did not return within {timeout} s (it blocked or read "
                    f"forever):\n{code}")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _outcome_of_loading(path):
    return _load_in_subprocess(f"""
        try:
            load({str(path)!r})
        except Exception as err:
            print(type(err).__name__, err)
        else:
            print("loaded")
    """)


@pytest.fixture
def fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_a_fifo_is_refused_without_blocking(tmp_path, fifo):
    link = tmp_path / "link-to-pipe"
    link.symlink_to(fifo)
    for path in (fifo, link):
        outcome = _outcome_of_loading(path)
        assert outcome.startswith(f"ValueError oxmera.load(): cannot load {str(path)!r}: it "
                                  f"is a FIFO (named pipe), not a regular file"), outcome


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_is_refused_without_reading(tmp_path):
    link = tmp_path / "zeros.safetensors"
    link.symlink_to("/dev/zero")
    for path in ("/dev/zero", link):
        outcome = _outcome_of_loading(path)
        assert outcome.startswith(f"ValueError oxmera.load(): cannot load {str(path)!r}: it "
                                  f"is a character device, not a regular file"), outcome
    # opened by the caller, it is a stream: refused from its first bytes
    outcome = _load_in_subprocess("""
        with open("/dev/zero", "rb") as handle:
            try:
                load(handle)
            except ValueError as err:
                print("ValueError", err)
    """)
    assert outcome.startswith("ValueError oxmera.load(): cannot load '/dev/zero': the header "
                              "is not valid JSON"), outcome


def test_a_directory_is_a_value_error_naming_it(tmp_path):
    with pytest.raises(ValueError, match=f"cannot load {str(tmp_path)!r}: it is a directory"):
        load(tmp_path)
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "missing")


def test_a_pipe_stream_loads(tmp_path):
    """A stream is read header first, as much as the header describes: no size needed."""
    path = tmp_path / "w.safetensors"
    save({"w": oxmera.arange(5)}, path)
    outcome = _load_in_subprocess(f"""
        import os, threading
        read_end, write_end = os.pipe()
        data = open({str(path)!r}, "rb").read()
        def feed():
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
        threading.Thread(target=feed).start()
        with os.fdopen(read_end, "rb") as handle:
            print(load(handle)["w"].tolist())
    """)
    assert outcome == "[0, 1, 2, 3, 4]"


# -- save() writes nothing load() refuses ---------------------------------------------------

def _nested(kind, depth):
    value = 1
    for _ in range(depth):
        value = {"k": value} if kind == "dict" else [value] if kind == "list" else (value,)
    return value


@pytest.mark.parametrize("kind", ["dict", "list", "tuple"])
def test_what_save_writes_load_reads_at_every_depth(tmp_path, kind):
    path = tmp_path / "deep.safetensors"
    saved_depths = []
    for depth in range(140, 260):
        obj = _nested(kind, depth)
        try:
            save(obj, path)
        except ValueError as err:
            assert "nested too deeply" in str(err)
            assert not path.exists()
            continue
        saved_depths.append(depth)
        assert load(path) == obj
        path.unlink()
    assert saved_depths and saved_depths == list(range(140, saved_depths[-1] + 1))
    assert saved_depths[-1] < 259                    # some depth was refused
    # one level deeper than save allows, written by hand: load refuses it
    too_deep = json.loads(json.dumps(serialization._Encoder().encode(
        _nested(kind, saved_depths[-1]))))
    too_deep = {"list": [too_deep]}
    _refused(_oxmera_file(too_deep, {}), "path", tmp_path, "nested too deeply")


def test_save_refuses_very_deep_and_cyclic_objects_before_writing(tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(ValueError, match="nested too deeply"):
        save(_nested("list", 5000), path)          # not a RecursionError
    cyclic = {"a": []}
    cyclic["a"].append(cyclic)
    with pytest.raises(ValueError, match=r"obj\['a'\]\[0\] contains itself"):
        save(cyclic, path)
    assert list(tmp_path.iterdir()) == []
    shared = [1, 2]
    save({"x": shared, "y": shared}, path)        # a shared list is not a cycle
    assert load(path) == {"x": [1, 2], "y": [1, 2]}


def test_save_refuses_a_header_load_would_refuse(tmp_path, monkeypatch):
    monkeypatch.setattr(serialization, "_MAX_HEADER", 2000)
    path = tmp_path / "big-header.safetensors"
    with pytest.raises(ValueError, match="header would be .* more than the 2000"):
        save({"values": list(range(1000))}, path)
    assert not path.exists()
    save({"values": oxmera.arange(1000)}, path)      # the remedy the message gives
    assert load(path)["values"].shape == (1000,)


# -- save(): paths -----------------------------------------------------------------------------

def test_save_into_a_missing_directory_names_the_users_path(tmp_path):
    path = tmp_path / "missing" / "w.safetensors"
    with pytest.raises(FileNotFoundError) as info:
        save({"a": 1}, path)
    assert info.value.filename == str(path)
    assert str(path) in str(info.value) and "oxmera-tmp" not in str(info.value)
    assert "does not exist" in str(info.value)


def test_save_through_a_symlink_replaces_the_file_it_points_to(tmp_path):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "w.safetensors"
    save({"v": 1}, target)
    os.chmod(target, 0o640)
    link = tmp_path / "w.safetensors"
    link.symlink_to(os.path.join("real", "w.safetensors"))       # relative, as ln -s makes
    save({"v": 2}, link)
    assert link.is_symlink() and load(target) == {"v": 2} and load(link) == {"v": 2}
    assert oct(os.stat(target).st_mode & 0o777) == oct(0o640)    # the file's permissions kept
    assert sorted(os.listdir(tmp_path / "real")) == ["w.safetensors"]   # no temporary left
    dangling = tmp_path / "dangling"
    dangling.symlink_to("created.safetensors")
    save({"v": 3}, dangling)                                      # open() would create it
    assert dangling.is_symlink() and load(tmp_path / "created.safetensors") == {"v": 3}


def test_a_new_file_gets_open_s_permissions(tmp_path):
    reference = tmp_path / "by-open"
    reference.write_bytes(b"")
    path = tmp_path / "w.safetensors"
    save({"a": 1}, path)
    assert os.stat(path).st_mode & 0o777 == os.stat(reference).st_mode & 0o777


def test_save_never_replaces_a_directory_or_a_fifo(tmp_path, fifo):
    directory = tmp_path / "dir"
    directory.mkdir()
    with pytest.raises(IsADirectoryError) as info:
        save({"a": 1}, directory)
    assert info.value.filename == str(directory)
    link = tmp_path / "fifo-link"
    link.symlink_to(fifo)
    for path in (fifo, link):
        with pytest.raises(ValueError, match=f"cannot write {str(path)!r}: it is a FIFO"):
            save({"a": 1}, path)
    assert os.path.isdir(directory) and list(directory.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "fifo-link", "pipe"]
    assert not os.path.isfile(fifo)


def test_a_failed_write_keeps_the_old_file_and_names_the_path(tmp_path, monkeypatch):
    path = tmp_path / "w.safetensors"
    save({"v": 1}, path)

    def broken_replace(source, destination):
        raise OSError(28, "No space left on device", source)

    monkeypatch.setattr(serialization.os, "replace", broken_replace)
    with pytest.raises(OSError) as info:
        save({"v": 2}, path)
    assert info.value.filename == str(path) and "oxmera-tmp" not in str(info.value)
    monkeypatch.undo()
    assert load(path) == {"v": 1} and sorted(os.listdir(tmp_path)) == ["w.safetensors"]
