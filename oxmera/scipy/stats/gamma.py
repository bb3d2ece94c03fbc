"""``oxmera.scipy.stats.gamma``: the gamma distribution (shape ``a``), as ``scipy.stats.gamma``.

Differentiable in the data and the parameters (see :mod:`oxmera.scipy.stats`
for the few exceptions); the formulas are in ``oxmera/scipy/stats/_families.py``.
"""
from oxmera.scipy.stats import _families

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]

_public = _families.functions(_families.gamma, __name__, __all__, "2.5, loc=0.0, scale=2.0")
logpdf = _public["logpdf"]
pdf = _public["pdf"]
cdf = _public["cdf"]
logcdf = _public["logcdf"]
sf = _public["sf"]
logsf = _public["logsf"]
