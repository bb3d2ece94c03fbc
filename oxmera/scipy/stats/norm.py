"""``oxmera.scipy.stats.norm``: the normal distribution, as ``scipy.stats.norm``.

Differentiable in the data and the parameters (see :mod:`oxmera.scipy.stats`
for the few exceptions); the formulas are in ``oxmera/scipy/stats/_families.py``.
"""
from oxmera.scipy.stats import _families

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]

_public = _families.functions(_families.norm, __name__, __all__, "loc=1.0, scale=2.0")
logpdf = _public["logpdf"]
pdf = _public["pdf"]
cdf = _public["cdf"]
logcdf = _public["logcdf"]
sf = _public["sf"]
logsf = _public["logsf"]
ppf = _public["ppf"]
