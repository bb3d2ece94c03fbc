"""The ``oxmera-graph`` directive: an example that draws a graph, and its picture.

Its content is doctest-style code (``>>>`` lines) that leaves a
``GraphPicture`` in a variable named ``picture``. The page shows the code as
a doctest block (so ``sphinx-build -b doctest`` and tests/test_docs.py run
it like any other example); the HTML build runs it too and renders the
picture to ``_images/graph-<name>.svg`` with Graphviz. When the build ends,
every picture a page asked for is checked to exist (a missing one is an
error). Without Graphviz (the ``graphviz`` package or the ``dot`` program)
the page shows the picture's DOT source instead, and says so in the log.

Usage::

    .. oxmera-graph:: scalar

       >>> picture = draw(loss)
"""
import doctest
import os

import numpy as np
from docutils import nodes
from docutils.parsers.rst import Directive, directives
from sphinx.errors import ExtensionError
from sphinx.util import logging

import oxmera

logger = logging.getLogger(__name__)


def _render(name, code, outdir):
    namespace = {"np": np, "oxmera": oxmera}
    oxmera.manual_seed(0)
    for example in doctest.DocTestParser().get_examples(code):
        exec(compile(example.source, f"<oxmera-graph {name}>", "exec"), namespace)
    picture = namespace.get("picture")
    if picture is None:
        raise ExtensionError(f"oxmera-graph {name}: the example leaves no 'picture'")
    try:
        svg = picture.pipe("svg")
    except ImportError as err:
        logger.info(f"oxmera-graph {name}: {err}; showing the DOT source instead")
        return None, picture.source
    path = os.path.join(outdir, "_images", f"graph-{name}.svg")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(svg)
    return path, picture.source


class OxmeraGraph(Directive):
    required_arguments = 1
    has_content = True
    option_spec = {"alt": directives.unchanged}

    def run(self):
        env = self.state.document.settings.env
        name = self.arguments[0]
        code = "\n".join(self.content)
        block = nodes.doctest_block(code, code)
        result = [block]
        if env.app.builder.format != "html":
            return result
        path, source = _render(name, code, env.app.outdir)
        if path is None:
            result.append(nodes.literal_block(source, source, language="none"))
            return result
        _expected(env).add(path)
        docname = env.docname
        depth = docname.count("/")
        uri = "../" * depth + f"_images/graph-{name}.svg"
        alt = self.options.get("alt", f"the autograd graph of the {name} example")
        result.append(nodes.raw("", f'<p><img src="{uri}" alt="{alt}" '
                                f'class="oxmera-graph"/></p>', format="html"))
        return result


def _expected(env):
    # The pictures the pages asked for, kept in the build environment (merged
    # from the worker processes of a parallel read by _merge).
    if not hasattr(env, "oxmera_graphs"):
        env.oxmera_graphs = set()
    return env.oxmera_graphs


def _merge(app, env, docnames, other):
    _expected(env).update(getattr(other, "oxmera_graphs", ()))


def _check_pictures(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for path in sorted(getattr(app.env, "oxmera_graphs", ())):
        if not os.path.isfile(path) or os.path.getsize(path) == 0:
            raise ExtensionError(f"oxmera-graph: the picture {path} was not made")
        with open(path, "rb") as f:
            if b"<svg" not in f.read(4096):
                raise ExtensionError(f"oxmera-graph: {path} is not an SVG picture")


def setup(app):
    app.add_directive("oxmera-graph", OxmeraGraph)
    app.connect("env-merge-info", _merge)
    app.connect("build-finished", _check_pictures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
