"""``oxmera.scipy.stats.binom``: the binomial distribution, as ``scipy.stats.binom``.

``n`` trials, success probability ``p``.

Differentiable in the data and the parameters (see :mod:`oxmera.scipy.stats`
for the few exceptions); the formulas are in ``oxmera/scipy/stats/_families.py``.
"""
from oxmera.scipy.stats import _families

__all__ = ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]

_public = _families.functions(_families.binom, __name__, __all__, "5, 0.3")
logpmf = _public["logpmf"]
pmf = _public["pmf"]
cdf = _public["cdf"]
logcdf = _public["logcdf"]
sf = _public["sf"]
logsf = _public["logsf"]
