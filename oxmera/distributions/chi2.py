"""The chi-squared distribution: ``Gamma(df / 2, 1 / 2)``."""
import numbers

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.gamma import Gamma
from oxmera.distributions.utils import broadcast_all

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution with ``df`` degrees of freedom.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import Chi2
    >>> d = Chi2(oxmera.tensor(4.0))
    >>> d.mean.item(), d.variance.item()
    (4.0, 8.0)
    """

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if isinstance(df, numbers.Number):
            df = oxmera.tensor(float(df))
        (df,) = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
