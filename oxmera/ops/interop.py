"""Interoperability: the NumPy protocols (``__array_ufunc__``, ``__array_function__``) and DLPack."""

__all__ = []
