"""``oxmera.scipy.stats.poisson``: the Poisson distribution (rate ``mu``), as SciPy's.

Differentiable in the data and the parameters (see :mod:`oxmera.scipy.stats`
for the few exceptions); the formulas are in ``oxmera/scipy/stats/_families.py``.
"""
from oxmera.scipy.stats import _families

__all__ = ["logpmf", "pmf", "cdf", "logcdf", "sf", "logsf"]

_public = _families.functions(_families.poisson, __name__, __all__, "2.5")
logpmf = _public["logpmf"]
pmf = _public["pmf"]
cdf = _public["cdf"]
logcdf = _public["logcdf"]
sf = _public["sf"]
logsf = _public["logsf"]
