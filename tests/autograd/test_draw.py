"""oxmera.autograd.graph.draw: the graph's structure from its DOT source, and rendering."""
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import oxmera
from oxmera.autograd.graph import draw

_NODE = re.compile(r"^\s+(n\d+|hidden) \[.*label=<(.*)>\];$")
_EDGE = re.compile(r"^\s+(n\d+|hidden) -> (n\d+|hidden)(?: \[label=<(.*)>\])?;$")


def _parse(source):
    """Boxes {key: [label lines]} and edges [(from, to, label)] read back from DOT text."""
    boxes, edges = {}, []
    for line in source.splitlines():
        m = _NODE.match(line)
        if m:
            boxes[m.group(1)] = [re.sub("</?b>", "", part) for part in m.group(2).split("<br/>")]
            continue
        m = _EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2), m.group(3)))
    return boxes, edges


def _by_title(boxes):
    return {lines[0]: key for key, lines in boxes.items()}


def test_scalar_graph_structure_labels_and_gradients():
    a = oxmera.tensor(2.0, requires_grad=True)
    b = oxmera.tensor(-3.0, requires_grad=True)
    c = oxmera.tensor(10.0, requires_grad=True)
    loss = (a * b + c) * c
    picture = draw(loss, params={"a": a, "b": b, "c": c}, show_grads=True)
    boxes, edges = _parse(picture.source)
    assert sorted(lines[0] for lines in boxes.values()) == sorted(
        ["output", "MulBackward", "AddBackward", "MulBackward", "a", "b", "c"])
    assert boxes["n0"] == ["output", "data 40"]
    # Edges go the way gradients flow: output -> loss's node -> ... -> leaves.
    names = {key: lines[0] for key, lines in boxes.items()}
    assert sorted((names[x], names[y]) for x, y, _ in edges) == sorted([
        ("output", "MulBackward"), ("MulBackward", "AddBackward"), ("MulBackward", "c"),
        ("AddBackward", "MulBackward"), ("AddBackward", "c"), ("MulBackward", "a"),
        ("MulBackward", "b")])
    assert all(label is None for _, _, label in edges)      # no backward yet
    loss.backward()
    boxes, edges = _parse(picture.source)                   # the same picture, now with grads
    leaf = _by_title(boxes)
    assert boxes[leaf["a"]] == ["a", "data 2", "grad -30"]
    assert boxes[leaf["c"]] == ["c", "data 10", "grad 14"]  # 10 from the add, 4 from the mul
    carried = sorted((names[x], names[y], label) for x, y, label in edges if label)
    assert ("MulBackward", "c", "grad 4") in carried and ("AddBackward", "c", "grad 10") in carried
    assert ("MulBackward", "a", "grad -30") in carried


def test_mlp_params_shapes_and_saved_tensors():
    oxmera.manual_seed(0)
    model = oxmera.nn.Sequential(oxmera.nn.Linear(3, 4), oxmera.nn.Tanh(),
                                 oxmera.nn.Linear(4, 2))
    loss = model(oxmera.randn(5, 3)).pow(2).mean()
    boxes, edges = _parse(draw(loss, params=dict(model.named_parameters()),
                               show_saved=True).source)
    leaves = {lines[0]: lines[1:] for lines in boxes.values()
              if lines[0] in ("0.weight", "0.bias", "2.weight", "2.bias")}
    assert leaves == {"0.weight": ["(4, 3) float32"], "0.bias": ["(4,) float32"],
                      "2.weight": ["(2, 4) float32"], "2.bias": ["(2,) float32"]}
    tanh = [lines for lines in boxes.values() if lines[0] == "TanhBackward"]
    assert tanh == [["TanhBackward", "saved result: (5, 4)"]]
    loss.backward()
    boxes, _ = _parse(draw(loss, show_saved=True).source)
    assert [lines for lines in boxes.values() if lines[0] == "TanhBackward"] == [
        ["TanhBackward", "saved: released"]]


def test_several_outputs_and_a_leaf_output():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    boxes, edges = _parse(draw(x * 2, x.exp(), x).source)
    titles = sorted(lines[0] for lines in boxes.values())
    # x is drawn once: as output 2, which both nodes send their gradients to.
    assert titles == ["ExpBackward", "MulBackward", "output 0", "output 1", "output 2"]
    names = {key: lines[0] for key, lines in boxes.items()}
    assert sorted((names[a], names[b]) for a, b, _ in edges) == [
        ("ExpBackward", "output 2"), ("MulBackward", "output 2"),
        ("output 0", "MulBackward"), ("output 1", "ExpBackward")]


def test_create_graph_gradient_graph():
    x = oxmera.tensor(2.0, requires_grad=True)
    g, = oxmera.autograd.grad(x ** 3, x, create_graph=True)
    boxes, edges = _parse(draw(g, params={"x": x}).source)
    assert "x" in _by_title(boxes) and len(boxes) >= 3
    # Every box but the output is reached by an edge, and the leaf ends the graph.
    assert {y for _, y, _ in edges} == set(boxes) - {"n0"}
    assert not [e for e in edges if e[0] == _by_title(boxes)["x"]]


_LONG_CHAIN = """
import oxmera
from oxmera.autograd.graph import draw
h = oxmera.tensor([1.0], requires_grad=True)
for _ in range(3000):
    h = h.tanh() * 1.0
print(draw(h, max_nodes=100).source)
"""


def test_long_chain_is_collapsed_and_never_hangs():
    # In a child process with a timeout: a hang fails the test instead of the run.
    done = subprocess.run([sys.executable, "-c", _LONG_CHAIN], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    boxes, edges = _parse(done.stdout)
    assert len(boxes) <= 100 + 3
    # Alternating ops do not fold; the first 100 nodes are kept, the rest is one box.
    assert boxes["hidden"] == ["... 1 more edges not shown"]
    g = oxmera.tensor([1.0], requires_grad=True)
    for _ in range(3000):
        g = g.tanh()
    boxes, edges = _parse(draw(g, max_nodes=100).source)
    # The unnamed leaf has no title: its value is its first line.
    assert [lines[0] for lines in boxes.values()] == ["output", "TanhBackward x 3000", "data 1"]
    assert len(edges) == 2


def test_walk_stops_on_huge_graphs():
    g = oxmera.tensor([1.0], requires_grad=True)
    for _ in range(2000):
        g = g * 1.0
    boxes, edges = _parse(draw(g, max_nodes=5).source)      # walks 500 nodes, not 2000
    assert "hidden" in boxes and len(boxes) <= 8
    assert boxes[_by_title(boxes)["MulBackward x 500"]] == ["MulBackward x 500"]


def test_bad_arguments():
    x = oxmera.tensor([1.0], requires_grad=True)
    with pytest.raises(TypeError, match="at least one"):
        draw()
    with pytest.raises(TypeError, match="expected Tensors"):
        draw(np.ones(2))
    with pytest.raises(ValueError, match="max_nodes"):
        draw(x, max_nodes=0)
    with pytest.raises(TypeError, match="params"):
        draw(x, params=[x])


def test_missing_graphviz_names_the_extra_and_the_system_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)      # import graphviz fails
    picture = draw(oxmera.tensor([1.0], requires_grad=True) * 2)
    assert "MulBackward" in picture.source                  # the DOT text needs no Graphviz
    with pytest.raises(ImportError, match=r"oxmera\[viz\].*apt-get install graphviz"):
        picture._repr_svg_()


_RENDERS = shutil.which("dot") is not None


@pytest.mark.skipif(not _RENDERS, reason="Graphviz's dot program is not installed")
@pytest.mark.parametrize("fmt, magic", [("svg", b"<?xml"), ("png", b"\x89PNG"),
                                        ("pdf", b"%PDF")])
def test_rendering(tmp_path, fmt, magic):
    pytest.importorskip("graphviz")
    a = oxmera.tensor(2.0, requires_grad=True)
    picture = draw(a * a + a, params={"a": a})
    path = picture.save(tmp_path / f"graph.{fmt}")
    with open(path, "rb") as f:
        assert f.read().startswith(magic)
    svg = picture._repr_svg_()
    assert "AddBackward" in svg and "MulBackward" in svg
    draw(a * 3, path=str(tmp_path / "direct.svg"))
    assert (tmp_path / "direct.svg").read_bytes().startswith(b"<?xml")


def test_saved_values_given_to_hooks_are_shown_packed_without_unpacking():
    from oxmera.autograd.graph import saved_tensors_hooks
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    unpacked = []
    with saved_tensors_hooks(lambda t: t, lambda t: unpacked.append(1) or t):
        y = (x * x).exp()
    boxes, _ = _parse(draw(y, show_saved=True).source)
    details = sorted(lines[1:] for lines in boxes.values() if lines[0].endswith("Backward"))
    assert details == [["saved input: packed", "saved other: packed"],
                       ["saved result: packed"]]
    assert unpacked == []


def test_the_viz_extra_is_the_one_the_error_names():
    import pathlib
    tomllib = pytest.importorskip("tomllib")
    pyproject = pathlib.Path(__file__).resolve().parents[2] / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("not in the source tree")
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert [re.match(r"[A-Za-z0-9_.-]+", r).group() for r in extras["viz"]] == ["graphviz"]
    assert any(r.startswith("graphviz") for r in extras["docs"])    # the docs' pictures
