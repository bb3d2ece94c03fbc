"""Sphinx configuration for the oxmera docs.

Build (from the repository root, with oxmera installed, e.g. ``tox -e docs``)::

    sphinx-build -W --keep-going -n -b html docs docs/_build/html
    sphinx-build -W --keep-going -b doctest docs docs/_build/doctest

The API reference is generated at each build from the public modules'
``__all__`` (``_ext/oxmera_apigen.py``), so a new public name needs no edit
here. oxmera is imported from wherever it is installed: the docs describe the
built package, compiled core included.
"""
import os
import sys

import oxmera

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ext"))

project = "oxmera"
author = "The oxmera developers"
copyright = "2026, the oxmera developers"
release = oxmera.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "oxmera_apigen",
    "oxmera_graphs",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "_ext", "_templates", "Thumbs.db", ".DS_Store"]
html_static_path = ["_static"]
html_theme = "furo"
html_title = f"oxmera {release}"
html_show_sourcelink = False

# -- API reference -----------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_member_order = "alphabetical"
autodoc_docstring_signature = True     # Cython embeds "name(args)" as a docstring's first line
autodoc_default_options = {"undoc-members": False}
add_module_names = False

# NumPy-style docstrings. Parameter types stay plain text (not cross-references):
# they are prose like "int or tuple of int, optional".
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_param = False
napoleon_use_rtype = False
napoleon_use_ivar = True
napoleon_preprocess_types = False

# Every cross-reference must resolve (-n): names outside oxmera that docstrings
# mention and that no inventory here documents are listed.
nitpicky = True
nitpick_ignore_regex = [
    (r"py:.*", r"(numpy|np)\..*"),
    (r"py:.*", r"(threading|collections|typing)\..*"),
    (r"py:.*", r"torch(\..*)?"),
    # constraints' public names are aliases of private classes, as torch's are
    # (autodoc writes "alias of _GreaterThan"); private classes are not documented.
    (r"py:class", r"oxmera\.distributions\.constraints\._\w+"),
    # oxmera.numpy.genfromtxt's signature is NumPy's: Sphinx reads the "<" inside
    # its default deletechars string as the start of a type to cross-reference.
    (r"py:class", r";<"),
]

# -- Doctests ----------------------------------------------------------------
# Each document's examples share one namespace; every document starts from
# the default state (float32, grad mode on, the generator seeded with 0), as
# tests/test_docs.py runs them.
doctest_global_setup = """
import numpy as np
import oxmera
oxmera.set_default_dtype(oxmera.float32)
oxmera.autograd.grad_mode._set(True)
_ = oxmera.manual_seed(0)
"""
doctest_global_cleanup = """
oxmera.set_default_dtype(oxmera.float32)
oxmera.autograd.grad_mode._set(True)
"""
import doctest  # noqa: E402

doctest_default_flags = (doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
                         | doctest.IGNORE_EXCEPTION_DETAIL | doctest.DONT_ACCEPT_TRUE_FOR_1)
