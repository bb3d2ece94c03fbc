"""The LKJ distribution over Cholesky factors of correlation matrices."""
import math

import numpy as np

import oxmera
from oxmera.distributions import constraints
from oxmera.distributions.beta import Beta
from oxmera.distributions.distribution import Distribution
from oxmera.distributions.utils import _draw, _rng, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution (Lewandowski, Kurowicka & Joe, 2009) of the lower Cholesky
    factor ``L`` of a ``dim x dim`` correlation matrix, with density of ``L L^T``
    proportional to ``det(L L^T) ** (concentration - 1)``.

    ``sample`` uses the onion method (Beta-distributed squared row norms and uniform
    directions); there is no ``rsample``, as in PyTorch.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera.distributions import LKJCholesky
    >>> d = LKJCholesky(3, oxmera.tensor(2.0))
    >>> _ = oxmera.manual_seed(0); L = d.sample()
    >>> [round(v, 6) for v in (L @ L.mT).diagonal().tolist()]
    [1.0, 1.0, 1.0]
    """

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # the onion method's Beta draws, vectorized over the rows (Sec. 3.2 of the paper)
        marginal_concentration = self.concentration + 0.5 * (self.dim - 2)
        offset = oxmera.cat([oxmera.zeros(1, dtype=self.concentration.dtype),
                             oxmera.arange(self.dim - 1, dtype=self.concentration.dtype)])
        self._beta = Beta(offset + 0.5, marginal_concentration.unsqueeze(-1) - 0.5 * offset)
        super().__init__(tuple(self.concentration.shape), (dim, dim), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = tuple(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(*batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=()):
        with oxmera.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = tuple(self._extended_shape(sample_shape))
            normals = _rng("LKJCholesky.sample()").standard_normal(shape)
            normals = np.tril(normals, -1)
            norms = np.linalg.norm(normals, axis=-1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                directions = normals / norms
            directions[..., 0, :] = 0.0  # the first row has no below-diagonal entries
            w = y.sqrt() * _draw(directions, y)
            tiny = float(np.finfo(w.dtype).tiny)
            diagonal = (1 - (w ** 2).sum(-1)).clamp(min=tiny).sqrt()
            return w + oxmera.diag_embed(diagonal)

    def log_prob(self, value):
        # density of L: prod_i L_ii ** (2 (concentration - 1) + dim - i), i = 2..dim
        # (the correlation density times the Jacobian of L -> L L^T)
        if self._validate_args:
            self._validate_sample(value)
        diagonal = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = oxmera.arange(2, self.dim + 1, dtype=value.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diagonal.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = oxmera.lgamma(alpha) * dm1
        numerator = oxmera.mvlgamma(alpha - 0.5, dm1)
        # the paper's pi term is D (D - 1) / 4 log(pi); mvlgamma's holds (D - 1)(D - 2) / 4
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized - (pi_constant + numerator - denominator)
