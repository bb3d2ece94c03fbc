"""Small data sets shipped inside the package, so examples need no network.

``load_digits()`` returns the 8x8 handwritten digits (1,797 images, the test
set of the UCI "Optical Recognition of Handwritten Digits" collection by
E. Alpaydin and C. Kaynak, 1998, licensed CC BY 4.0; see ``README.md`` in
this directory for the attribution and ``_make_digits.py`` for how the
bundled ``digits.npz`` was made). This module owns the data files and their
loading; splitting, batching and training are left to ``oxmera.utils.data``
and the user (``oxmera.demo`` shows all of it).
"""
import functools
import importlib.resources

import numpy as np

import oxmera

__all__ = ["load_digits"]

#: Where the digits come from; printed by the demo and quoted in README.md.
DIGITS_CITATION = (
    "Optical Recognition of Handwritten Digits, E. Alpaydin and C. Kaynak (1998), "
    "UCI Machine Learning Repository, https://doi.org/10.24432/C50P49, CC BY 4.0")


@functools.lru_cache(maxsize=1)
def _digits_uint8():
    resource = importlib.resources.files(__name__).joinpath("digits.npz")
    with resource.open("rb") as file, np.load(file, allow_pickle=False) as data:
        images, labels = data["images"], data["labels"]
    images.flags.writeable = False
    labels.flags.writeable = False
    return images, labels


def load_digits(*, as_numpy=False):
    """Load the 8x8 handwritten digits: 1,797 grey-scale images and their labels.

    Each image is a digit 0-9 written by one of 13 people, scanned at 32x32
    and reduced to 8x8 by counting the ink pixels in each 4x4 block (counts
    0..16). The images come back divided by 16, so their values lie in
    [0, 1], with a channel axis, ready for ``nn.Conv2d(1, ...)``.

    Source: the test set of "Optical Recognition of Handwritten Digits",
    E. Alpaydin and C. Kaynak (1998), UCI Machine Learning Repository,
    https://doi.org/10.24432/C50P49, licensed CC BY 4.0. The data ships in
    the package (``oxmera/datasets/digits.npz``, 45 KB), so no network is needed.

    Parameters
    ----------
    as_numpy : bool, default False
        Return NumPy arrays instead of oxmera tensors.

    Returns
    -------
    images : Tensor or ndarray
        float32, shape (1797, 1, 8, 8), values in [0, 1]. A fresh copy each call.
    labels : Tensor or ndarray
        int64, shape (1797,), the digits 0-9 (about 180 of each).

    Examples
    --------
    >>> from oxmera.datasets import load_digits
    >>> images, labels = load_digits()
    >>> images.shape, images.dtype, labels.shape, labels.dtype
    (oxmera.Size([1797, 1, 8, 8]), dtype('float32'), oxmera.Size([1797]), dtype('int64'))
    >>> labels[:10].tolist()
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    >>> float(images.min()), float(images.max())
    (0.0, 1.0)
    """
    pixels, digits = _digits_uint8()
    images = (pixels.astype(np.float32) / np.float32(16.0))[:, None, :, :]
    labels = digits.astype(np.int64)
    if as_numpy:
        return images, labels
    return oxmera.from_numpy(images), oxmera.from_numpy(labels)


import sys as _sys  # noqa: E402

from oxmera import _exports  # noqa: E402

_exports.tidy(_sys.modules[__name__])
