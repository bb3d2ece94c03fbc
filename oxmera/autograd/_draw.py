"""Pictures of the autograd graph with Graphviz (``oxmera.autograd.graph.draw``).

Walks the graph from the given outputs back to the leaves (iteratively, so
any depth works), writes it in Graphviz's DOT language and leaves layout
and rendering to the ``graphviz`` Python package and the ``dot`` program
(the optional extra ``oxmera[viz]`` and Debian's ``graphviz`` package).
Building the DOT source needs neither; rendering needs both.
"""
import html

import numpy as np

from oxmera._core import autograd as _core

__all__ = ["draw", "GraphPicture"]

_MISSING_VIZ = ("drawing the graph needs the graphviz Python package (pip install "
                "'oxmera[viz]') and the Graphviz 'dot' program (Debian/Ubuntu: apt-get "
                "install graphviz)")
_GRADS_KEY = "oxmera.draw.grads"     # node.metadata entry: per input, (norm, shape) of its grad


def _graphviz():
    try:
        import graphviz
    except ImportError:
        raise ImportError(_MISSING_VIZ) from None
    return graphviz


def _shape_text(shape):
    return str(tuple(int(d) for d in shape))


def _dtype_text(dtype):
    return str(np.dtype(dtype))


def _grad_text(grad):
    data = np.asarray(grad._data, dtype=np.float64)
    if data.size == 1:              # a scalar (micrograd's picture): its value
        return f"grad {data.item():.4g}"
    norm = float(np.sqrt(np.sum(data * data))) if data.size else 0.0
    return f"grad {_shape_text(data.shape)} norm {norm:.4g}"


def _tensor_text(t):
    data = t._data
    if data.size == 1 and data.dtype.kind in "fiub":
        return f"data {data.item():.4g}"
    return f"{_shape_text(data.shape)} {_dtype_text(data.dtype)}"


def _grad_of(t):
    # .grad where it is kept (a leaf, or retain_grad()): no warning for the rest.
    if t.is_leaf or t.retains_grad:
        return t.grad
    return None


class _Graph:
    """The graph as plain records: boxes and edges, before any DOT is written."""

    def __init__(self):
        self.boxes = {}             # key -> [kind, title, detail lines, object]
        self.order = []             # keys, outputs first (breadth-first)
        self.edges = []             # (from key, to key, label lines)


def _walk(tensors, params, show_saved, show_grads, max_nodes):
    graph = _Graph()
    names = {id(t): name for name, t in (params or {}).items()}
    seen = {}                       # id(node or leaf) -> key; the objects stay alive in boxes
    walk_limit = 100 * max_nodes

    def box(obj, kind, title, detail):
        key = f"n{len(graph.order)}"
        seen[id(obj)] = key
        graph.boxes[key] = [kind, title, detail, obj]
        graph.order.append(key)
        return key

    def leaf_box(t):
        found = seen.get(id(t))
        if found is not None:
            return found
        title = names.get(id(t), "")
        detail = [_tensor_text(t)]
        if show_grads and _grad_of(t) is not None:
            detail.append(_grad_text(t.grad))
        return box(t, "leaf", title, detail)

    queue = []
    for i, t in enumerate(tensors):
        title = names.get(id(t), "output" if len(tensors) == 1 else f"output {i}")
        detail = [_tensor_text(t)]
        if show_grads and _grad_of(t) is not None:
            detail.append(_grad_text(t.grad))
        out_key = box(t, "output", title, detail)
        fn = t.grad_fn
        if fn is not None:
            key = seen.get(id(fn))
            if key is None:
                key = box(fn, "node", fn.name(), _node_detail(fn, show_saved))
                queue.append(fn)
            graph.edges.append((out_key, key, []))
    head = 0
    while head < len(queue):        # breadth-first: what is cut is farthest from the outputs
        fn = queue[head]
        head += 1
        key = seen[id(fn)]
        grads = fn.metadata.get(_GRADS_KEY) if show_grads else None
        for i, (nxt, _) in enumerate(fn.next_functions):
            if nxt is None:
                continue
            label = []
            if grads is not None and i < len(grads) and grads[i] is not None:
                label.append(grads[i])
            if isinstance(nxt, _core.AccumulateGrad):
                graph.edges.append((key, leaf_box(nxt.variable), label))
                continue
            target = seen.get(id(nxt))
            if target is None:
                if len(queue) >= walk_limit:
                    graph.edges.append((key, _HIDDEN, label))
                    continue
                target = box(nxt, "node", nxt.name(), _node_detail(nxt, show_saved))
                queue.append(nxt)
            graph.edges.append((key, target, label))
    return graph


_HIDDEN = "hidden"                  # the key of the box standing for what is left out


def _truncate(graph, max_nodes):
    # Keep the first max_nodes nodes (breadth-first from the outputs) and the
    # leaves they reach; every edge to the rest goes to one box instead.
    nodes = [k for k in graph.order if graph.boxes[k][0] == "node"]
    dropped = set(nodes[max_nodes:])
    edges = []
    for a, b, label in graph.edges:
        if a in dropped:
            continue
        edges.append((a, _HIDDEN if b in dropped else b, label))
    reached = {b for _, b, _ in edges}
    graph.order = [k for k in graph.order if k not in dropped and (
        graph.boxes[k][0] in ("node", "output") or k in reached)]
    hidden = sum(1 for _, b, _ in edges if b == _HIDDEN)
    if hidden:
        graph.boxes[_HIDDEN] = ["hidden", f"... {hidden} more edges not shown", [], None]
        graph.order.append(_HIDDEN)
    graph.edges = edges
    return graph


def _node_detail(fn, show_saved):
    # What the node keeps for backward; values given to saved-tensor hooks
    # are shown as packed, not unpacked (that could be costly, and a picture
    # must not run user hooks).
    if not show_saved or fn.op is None:
        return []
    if fn._released:
        return ["saved: released"]
    args, _ = fn._saved_arguments(False)
    packed = fn._packed_slots()
    lines = []
    n = len(fn.op.input_names) if fn.op.n_inputs >= 0 else 0
    for i, (name, value) in enumerate(zip(fn.op.input_names[:n], args[:n])):
        if isinstance(value, _core.Tensor):
            lines.append(f"saved {name}: {_shape_text(value.shape)}")
        elif i in packed:
            lines.append(f"saved {name}: packed")
    for k in range(fn._output_count):
        if -1 - k in packed:
            lines.append("saved result: packed")
            continue
        out = fn._saved_output_value(k)
        if out is not None:
            lines.append(f"saved result: {_shape_text(out.shape)}")
    return lines


def _collapse_chains(graph, max_nodes):
    # Above the limit, a run of nodes of the same name, each feeding only the
    # next (a deep chain of one op), becomes one box "NameBackward x k".
    nodes = [k for k in graph.order if graph.boxes[k][0] == "node"]
    if len(nodes) <= max_nodes:
        return graph
    outs = {}
    ins = {}
    for a, b, label in graph.edges:
        outs.setdefault(a, []).append((b, label))
        ins.setdefault(b, []).append(a)
    merged = {}                     # key -> the key of the box it was folded into
    for key in nodes:
        if key in merged:
            continue
        run = [key]
        cur = key
        while True:
            nxt = outs.get(cur, [])
            if len(nxt) != 1:
                break
            b = nxt[0][0]
            if (b not in graph.boxes or graph.boxes[b][0] != "node"
                    or graph.boxes[b][1] != graph.boxes[key][1]
                    or len(ins.get(b, ())) != 1 or b in merged):
                break
            run.append(b)
            cur = b
        if len(run) > 2:
            for k in run[1:]:
                merged[k] = key
            graph.boxes[key][1] = f"{graph.boxes[key][1]} x {len(run)}"
            graph.boxes[key][2] = []
    if not merged:
        return graph
    edges = []
    for a, b, label in graph.edges:
        a = merged.get(a, a)        # out of a run's last box: out of its first
        b = merged.get(b, b)
        if a != b:                  # not an edge inside a run
            edges.append((a, b, label))
    graph.edges = edges
    for key in merged:
        del graph.boxes[key]
    graph.order = [k for k in graph.order if k not in merged]
    return graph


_STYLE = {
    "node": dict(shape="box", style="filled", fillcolor="lightgrey"),
    "leaf": dict(shape="box", style="filled", fillcolor="lightblue"),
    "output": dict(shape="box", style="filled", fillcolor="darkolivegreen1"),
    "hidden": dict(shape="note", style="dashed"),
}


def _label(title, detail):
    lines = [f"<b>{html.escape(title)}</b>"] if title else []
    lines += [html.escape(line) for line in detail]
    return "<" + "<br/>".join(lines or [" "]) + ">"


def _dot_source(graph):
    out = ["digraph oxmera_graph {",
           '  graph [rankdir=TB, fontname="Helvetica"];',
           '  node [fontname="Helvetica", fontsize=11];',
           '  edge [fontname="Helvetica", fontsize=9];']
    for key in graph.order:
        kind, title, detail, _ = graph.boxes[key]
        attrs = dict(_STYLE[kind])
        attrs["label"] = _label(title, detail)
        out.append(f"  {key} [{_attributes(attrs)}];")
    for a, b, label in graph.edges:
        attrs = {"label": _label("", label)} if label else {}
        out.append(f"  {a} -> {b}" + (f" [{_attributes(attrs)}]" if attrs else "") + ";")
    out.append("}")
    return "\n".join(out)


def _attributes(attrs):
    parts = []
    for name, value in attrs.items():
        if value.startswith("<"):
            parts.append(f"{name}={value}")
        else:
            parts.append(f'{name}="{value}"')
    return ", ".join(parts)


class GraphPicture:
    """A picture of an autograd graph: its DOT ``source``, shown by Jupyter, saved to files.

    Made by ``oxmera.autograd.graph.draw``. The DOT source is written at each use, so a picture
    drawn with ``show_grads=True`` before a backward shows the gradients
    after it. Rendering (``_repr_svg_``, ``pipe``, ``save``) needs Graphviz.

    Examples
    --------
    >>> import os, tempfile
    >>> import oxmera
    >>> from oxmera.autograd.graph import draw
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> picture = draw((x * x).sum(), params={"x": x})
    >>> boxes, edges, order = picture.graph()
    >>> [boxes[k][1] for k in order]
    ['output', 'SumBackward', 'MulBackward', 'x']
    >>> edges                       # x * x: two edges from the product to x
    [('n0', 'n1', []), ('n1', 'n2', []), ('n2', 'n3', []), ('n2', 'n3', [])]
    >>> try:                        # rendering needs Graphviz: skipped without it
    ...     with tempfile.TemporaryDirectory() as folder:
    ...         path = picture.save(os.path.join(folder, "graph.png"))
    ...         rendered = open(path, "rb").read(8) == b"\\x89PNG\\r\\n\\x1a\\n"
    ... except ImportError:
    ...     rendered = True
    >>> rendered
    True
    """

    def __init__(self, tensors, params, show_saved, show_grads, max_nodes, format):
        self._args = (tensors, params, show_saved, show_grads, max_nodes)
        self.format = format

    def graph(self):
        """The boxes and edges as shown: ``(boxes, edges)`` with boxes ``{key: (kind, title,
        details)}`` and edges ``[(from key, to key, label lines)]``."""
        graph = self._build()
        boxes = {k: tuple(v[:3]) for k in graph.order for v in (graph.boxes[k],)}
        return boxes, list(graph.edges), list(graph.order)

    @property
    def source(self):
        """The graph in Graphviz's DOT language (needs no Graphviz)."""
        return _dot_source(self._build())

    def _build(self):
        tensors, params, show_saved, show_grads, max_nodes = self._args
        graph = _walk(tensors, params, show_saved, show_grads, max_nodes)
        return _truncate(_collapse_chains(graph, max_nodes), max_nodes)

    def pipe(self, format=None):
        """The rendered picture as bytes (``format``: svg, png, pdf...; default: the picture's)."""
        graphviz = _graphviz()
        try:
            return graphviz.Source(self.source).pipe(format=format or self.format)
        except graphviz.ExecutableNotFound:
            raise ImportError(_MISSING_VIZ) from None

    def _repr_svg_(self):
        return self.pipe("svg").decode("utf-8")

    def save(self, path, format=None):
        """Write the picture to ``path`` (format from ``format``, else its suffix, else the
        picture's); returns the path."""
        path = str(path)
        if format is None:
            suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
            format = suffix if suffix in ("svg", "png", "pdf", "jpg", "jpeg", "gv", "dot") \
                else self.format
        if format in ("gv", "dot"):
            data = self.source.encode("utf-8")
        else:
            data = self.pipe(format)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def __repr__(self):
        return f"<GraphPicture ({self.format})>"


def _record_grads(tensors):
    # A hook on each node not yet watched: per input, the gradient sent along
    # that edge, kept as text in the node's metadata (no tensor kept alive).
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None]
    seen = set()
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        if _GRADS_KEY not in fn.metadata:
            fn.metadata[_GRADS_KEY] = None
            fn.register_hook(_grad_recorder(fn.metadata))
        for nxt, _ in fn.next_functions:
            if nxt is not None and not isinstance(nxt, _core.AccumulateGrad):
                stack.append(nxt)


def _grad_recorder(metadata):
    def hook(grad_inputs, grad_outputs):
        metadata[_GRADS_KEY] = [None if g is None else _grad_text(g) for g in grad_inputs]
    return hook


def draw(*tensors, params=None, show_saved=False, show_grads=False, path=None, format="svg",
         max_nodes=500):
    """Draw the autograd graph that produced ``tensors``, with Graphviz.

    One box per node (its name, e.g. ``MulBackward``), the leaves with their
    names (from ``params``) and shapes/dtypes, the outputs on top; edges go
    the way gradients flow, from each node to the nodes of its inputs.

    Parameters
    ----------
    *tensors : Tensor
        The outputs to draw the graph of.
    params : dict, optional
        Names for tensors, e.g. ``dict(model.named_parameters())``.
    show_saved : bool
        Also list what each node saved for backward (shapes), or
        ``released`` once a backward freed it.
    show_grads : bool
        Show the gradients (shape, norm): of leaves and outputs that have a
        ``.grad``, and along each edge once a backward ran. Edges show them
        when the picture is drawn *before* that backward (drawing puts a hook
        on each node that notes what it sends).
    path : str, optional
        Also save the picture there (the format from its suffix, else ``format``).
    format : str
        The default format to render: ``"svg"``, ``"png"``, ``"pdf"``...
    max_nodes : int
        Above this many nodes, runs of one op in a chain are folded into one
        box (``TanhBackward x 200``), and what is still beyond it is left out
        (one box says how many edges lead there). The walk stops after
        ``100 * max_nodes`` nodes: big graphs never hang.

    Returns
    -------
    GraphPicture
        Shown by Jupyter (``_repr_svg_``); ``.source`` is its DOT text,
        ``.save(path)`` writes SVG, PNG or PDF.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.autograd.graph import draw
    >>> a = oxmera.tensor(2.0, requires_grad=True)
    >>> b = oxmera.tensor(-3.0, requires_grad=True)
    >>> picture = draw(a * b + a, params={"a": a, "b": b})
    >>> print(picture.source)  # doctest: +ELLIPSIS
    digraph oxmera_graph {
    ...
      n0 [... label=<<b>output</b><br/>data -4>];
      n1 [... label=<<b>AddBackward</b>>];
      n2 [... label=<<b>MulBackward</b>>];
      n3 [... label=<<b>a</b><br/>data 2>];
      n4 [... label=<<b>b</b><br/>data -3>];
      n0 -> n1;
      n1 -> n2;
      n1 -> n3;
      n2 -> n3;
      n2 -> n4;
    }
    """
    if not tensors:
        raise TypeError("draw() needs at least one tensor")
    if params is not None and not hasattr(params, "items"):
        raise TypeError(f"draw(): params must be a dict of name -> Tensor, got "
                        f"{type(params).__name__}")
    if not isinstance(max_nodes, int) or max_nodes < 1:
        raise ValueError(f"draw(): max_nodes must be a positive int, got {max_nodes!r}")
    for i, t in enumerate(tensors):
        if not isinstance(t, _core.Tensor):
            raise TypeError(f"draw(): expected Tensors, got {type(t).__name__} at {i}")
    if show_grads:
        _record_grads(tensors)
    picture = GraphPicture(tensors, dict(params) if params else None, show_saved, show_grads,
                           max_nodes, format)
    if path is not None:
        picture.save(path)
    return picture
