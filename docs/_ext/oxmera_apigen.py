"""Write the API reference from the public modules' ``__all__``, at every build.

Nothing in the reference is listed by hand: a name added to a public module's
``__all__`` (which is also what exports it) appears in the next build, with
its own page made by autosummary from its docstring. The public modules are
``oxmera``, ``oxmera.extend`` and every module a public module lists in its
``__all__`` (``oxmera.autograd``, ``oxmera.autograd.functional``,
``oxmera.linalg``, ``oxmera.nn``, ``oxmera.nn.functional``, ...), and every
other top-level module without a leading underscore (``oxmera.optim``), so a
new public namespace is picked up the same way.

Each object is documented once, under the first public module (in the order
above) that exports it: ``oxmera.relu`` has the page, and the page of
``oxmera.nn.functional`` lists ``relu`` with a link to it. Aliases (the same
object under two names, e.g. ``asin`` and ``arcsin``) link to the first name.

Output: ``docs/api/`` (one page per public module, plus ``index.rst``) and
``docs/api/generated/`` (autosummary's page per object). Both are rebuilt
from scratch by every build and are not kept in git.
"""
import importlib
import inspect
import os
import pkgutil
import re
import shutil
import types

import numpy as np

#: Public modules that no public ``__all__`` lists. Besides these, every
#: top-level module of oxmera whose name has no leading underscore is public,
#: except those in NOT_PUBLIC.
ROOTS = ["oxmera", "oxmera.extend"]
NOT_PUBLIC = {
    "oxmera.ops",       # the op modules: their ops are documented where oxmera exports them
    "oxmera.demo",      # a script (python -m oxmera.demo)
}


#: Section titles for the modules that define public objects; the others get
#: their module name. Sections appear in this order, then the rest by name.
SECTIONS = {
    "oxmera._core.autograd": "Tensors and the autograd core",
    "oxmera.ops.creation": "Creating tensors",
    "oxmera.ops.sampling": "Random sampling",
    "oxmera.ops.conversion": "Copies and dtype conversion",
    "oxmera.ops.elementwise": "Elementwise math, comparison and logic",
    "oxmera.ops.pointwise": "More elementwise math",
    "oxmera.ops.special": "Special functions (SciPy-backed)",
    "oxmera.ops.reduce": "Reductions and scans",
    "oxmera.ops.statistics": "Statistics and order statistics",
    "oxmera.ops.sorting": "Sorting and searching",
    "oxmera.ops.linalg": "Linear algebra",
    "oxmera.ops.decompositions": "Matrix decompositions",
    "oxmera.ops.matrix_functions": "Functions of matrices",
    "oxmera.ops.blas": "Fused matrix products",
    "oxmera.ops.complex": "Complex numbers",
    "oxmera.ops.fft": "Discrete Fourier transforms",
    "oxmera.ops.shape": "Shapes, joining and splitting",
    "oxmera.ops.tensor_api": "Tensor queries and views",
    "oxmera": "Size and the legacy tensor types",
    "oxmera._dtypes": "Dtype limits and promotion",
    "oxmera._printing": "Print options",
    "oxmera.ops.index": "Indexing",
    "oxmera.ops.scatter": "Index writes, masks and scatter reductions",
    "oxmera.ops.construction": "Building tensors from others: diagonals, grids, stacks, splits",
    "oxmera.ops.inplace": "In-place operations",
    "oxmera.ops.interop": "NumPy and DLPack interoperability",
    "oxmera.ops.sparse": "Sparse tensors (SciPy-backed)",
    "oxmera.ops.activation": "Activations",
    "oxmera.ops.normalization": "Normalization",
    "oxmera.ops.conv": "Convolution and pooling",
    "oxmera.ops.pooling": "Pooling",
    "oxmera.ops.loss": "Losses",
    "oxmera.autograd.engine": "Computing gradients",
    "oxmera.autograd.grad_mode": "Grad mode",
    "oxmera.autograd.gradcheck": "Checking gradients",
    "oxmera._device": "Devices (the CPU only)",
    "oxmera._layout": "Memory formats and layouts",
    "oxmera._settings": "Matmul precision, determinism and threads",
}


def public_modules():
    """The public modules, parents before children, each once."""
    import oxmera
    top = [f"oxmera.{m.name}" for m in pkgutil.iter_modules(oxmera.__path__)
           if not m.name.startswith("_")]
    seen, order, queue = set(), [], [*ROOTS, *(m for m in top if m not in NOT_PUBLIC)]
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        seen.add(name)
        module = importlib.import_module(name)
        order.append(module)
        for attr in getattr(module, "__all__", ()):
            value = getattr(module, attr)
            if isinstance(value, types.ModuleType):
                queue.append(value.__name__)
    return order


def _kind(value):
    if isinstance(value, types.ModuleType):
        return "module"
    if isinstance(value, np.dtype):
        return "dtype"
    if inspect.isclass(value):
        return "class"
    if callable(value):
        return "function"
    return "data"


def _summary(value):
    doc = inspect.getdoc(value) or ""
    for para in doc.split("\n\n"):
        line = " ".join(para.split())
        # Cython's embedded signature comes first; it is not a summary.
        if line and not (line.endswith(")") and "(" in line and " " not in line.split("(")[0]):
            return line
    return ""


def _heading(text, char):
    return f"{text}\n{char * len(text)}\n"


def _section_of(value):
    return getattr(value, "__module__", None) or ""


def _section_title(module_name):
    return SECTIONS.get(module_name, module_name)


def _section_order(module_name):
    keys = list(SECTIONS)
    return (keys.index(module_name), "") if module_name in keys else (len(keys), module_name)


def build_pages():
    """Return ``{relative path: rst text}`` for the whole reference."""
    modules = public_modules()
    owner = {}      # id(object) -> "module.name" where it is documented
    pages = {}
    for module in modules:
        names = list(getattr(module, "__all__", ()))
        own, links, dtypes, data, submodules = {}, [], [], [], []
        for name in names:
            value = getattr(module, name)
            kind = _kind(value)
            qualified = f"{module.__name__}.{name}"
            if kind == "module":
                submodules.append(value)
                continue
            if kind == "dtype":
                dtypes.append((name, value))
                continue
            if kind == "data":
                data.append((name, value))
                continue
            if id(value) in owner:
                links.append((name, kind, owner[id(value)], value))
                continue
            owner[id(value)] = qualified
            own.setdefault(_section_of(value), []).append((name, kind))
        lines = [f".. _api-{module.__name__}:", "", _heading(module.__name__, "="),
                 f".. automodule:: {module.__name__}", "   :no-members:", "",
                 f".. currentmodule:: {module.__name__}", ""]
        if submodules:
            lines += [_heading("Submodules", "-"), ""]
            for sub in submodules:
                lines.append(f"- :mod:`{sub.__name__}`: {_summary(sub)}")
            lines.append("")
        if sum(map(len, own.values())) > SECTIONED_PAGE:
            # A long page: one section per module that defines the objects.
            for section in sorted(own, key=_section_order):
                lines += [_heading(_section_title(section), "-"), ""]
                lines += _autosummaries(own[section], with_headings=False)
        else:
            lines += _autosummaries([e for entries in own.values() for e in entries],
                                    with_headings=True)
        if dtypes:
            lines += _dtype_table(module, dtypes)
        if data:
            lines += [_heading("Constants", "-"), "", ".. list-table::", "   :header-rows: 1", "",
                      "   * - Name", "     - Value"]
            for name, value in data:
                lines += [f"   * - ``{name}``", f"     - ``{value!r}``"]
            lines.append("")
        if links:
            lines += _link_table(links)
        pages[f"{module.__name__}.rst"] = "\n".join(lines) + "\n"
    toc = "\n".join(f"   {m.__name__}" for m in modules)
    pages["index.rst"] = (
        ".. _api:\n\n" + _heading("API reference", "=") + "\n"
        "Every public name, one page per module, generated from the docstrings\n"
        "(and from each module's ``__all__``: what a module exports is what is\n"
        "listed here).\n\n"
        ".. toctree::\n   :maxdepth: 2\n\n" + toc + "\n")
    return pages


#: Pages with more objects than this are split into sections by defining module.
SECTIONED_PAGE = 40


def _autosummaries(entries, with_headings):
    lines = []
    for kind, title in (("class", "Classes"), ("function", "Functions")):
        group = sorted(name for name, k in entries if k == kind)
        if not group:
            continue
        if with_headings:
            lines += [_heading(title, "-"), ""]
        lines.append(".. autosummary::\n   :toctree: generated\n\n"
                     + "\n".join(f"   {name}" for name in group) + "\n")
    return lines


def _dtype_table(module, dtypes):
    first = {}
    for name, value in dtypes:
        first.setdefault(value, name)
    lines = [_heading("Data types", "-"), "",
             "NumPy dtypes, exposed under PyTorch's names; a NumPy dtype (or its name)\n"
             "is accepted wherever one of these is.", "",
             ".. list-table::", "   :header-rows: 1", "",
             "   * - Name", "     - NumPy dtype", "     - Aliases"]
    for value, name in first.items():
        aliases = [f"``{module.__name__}.{n}``" for n, v in dtypes if v == value and n != name]
        lines += [f"   * - ``{module.__name__}.{name}``", f"     - ``numpy.{value}``",
                  f"     - {', '.join(aliases) or '—'}"]
    lines.append("")
    return lines


def _signature(value):
    try:
        return str(inspect.signature(value))
    except (TypeError, ValueError):
        return "(...)"


def _plain(text):
    # Cross-references in a summary are relative to the module that documents
    # the object; shown elsewhere they would not resolve, so keep their text.
    return _ROLE.sub(lambda m: f"``{m.group(1).strip()}``", text)


_ROLE = re.compile(r":[\w:]+:`~?([^`<]*?)(?:\s*<[^>]*>)?`")


def _link_table(links):
    # A short entry per re-exported name: it is a cross-reference target here
    # too (``oxmera.nn.functional.relu`` resolves), pointing at the real page.
    lines = [_heading("Also available here", "-"), "",
             "Documented where first exported; the same objects under these names.", ""]
    for name, kind, target, value in sorted(links, key=lambda link: link[0]):
        if kind == "class":
            lines += [f".. py:class:: {name}", "",
                      f"   Same object as :class:`{target}`: {_plain(_summary(value))}", ""]
        else:
            lines += [f".. py:function:: {name}{_signature(value)}", "",
                      f"   Same object as :func:`{target}`: {_plain(_summary(value))}", ""]
    return lines


def write_pages(app, config):
    out = os.path.join(app.srcdir, "api")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    for path, text in build_pages().items():
        with open(os.path.join(out, path), "w", encoding="utf-8") as f:
            f.write(text)


def prose_properties(app, what, name, obj, options, lines):
    # napoleon reads a property's first line "Per input: ..." as "type:
    # description" and turns the "type" into cross-references. oxmera's
    # property docstrings are prose: an empty reST comment first leaves
    # napoleon nothing to split (it parses the rest as a normal docstring).
    if what in ("property", "attribute") and lines:
        lines[:0] = ["..", ""]


#: Depth of the sidebar's navigation: the guides, the API index, one page per module.
NAVIGATION_DEPTH = 2

#: (including page, toctree arguments) -> the sidebar's HTML, per build process.
_navigation_cache = {}


def _including_pages(env):
    # Each page's parent in the document tree (autosummary's object pages are
    # included by their module's page).
    parents = {}
    for parent, children in env.toctree_includes.items():
        for child in children:
            parents.setdefault(child, parent)
    return parents


def shallow_navigation(app, pagename, templatename, context, doctree):
    # The theme (furo) renders the whole document tree into every page's
    # sidebar, down to the ~1,600 pages autosummary makes, one per object:
    # that was most of the HTML build's time (25 minutes, quadratic in the
    # pages) and 200 KB of each page. The sidebar stops at the module pages
    # (an object's page is reached from its module's table), and is rendered
    # once for all the object pages of one module: they sit in one folder and
    # none of them shows in it, so their sidebars are the same HTML.
    toctree = context.get("toctree")
    if toctree is None:
        return
    parent = None
    if pagename.startswith("api/generated/"):
        if app.env.__dict__.get("_oxmera_parents") is None:
            app.env._oxmera_parents = _including_pages(app.env)
        parent = app.env._oxmera_parents.get(pagename)

    def shallow(**kwargs):
        if kwargs.get("maxdepth", -1) < 0 or kwargs["maxdepth"] > NAVIGATION_DEPTH:
            kwargs["maxdepth"] = NAVIGATION_DEPTH
        if parent is None:
            return toctree(**kwargs)
        key = (parent, tuple(sorted(kwargs.items())))
        if key not in _navigation_cache:
            _navigation_cache[key] = toctree(**kwargs)
        return _navigation_cache[key]

    context["toctree"] = shallow


def setup(app):
    # config-inited runs before autosummary looks for the pages to generate.
    app.connect("config-inited", write_pages)
    # autosummary generates its pages at builder-inited from the documents the
    # environment knows; one loaded from an earlier build does not know the
    # pages just written, so have it look again first.
    app.connect("builder-inited", lambda app: app.env.find_files(app.config, app.builder),
                priority=100)
    # Before napoleon (priority 500) rewrites the docstring.
    app.connect("autodoc-process-docstring", prose_properties, priority=400)
    # Before the theme's handler (priority 500) renders the navigation.
    app.connect("html-page-context", shallow_navigation, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
