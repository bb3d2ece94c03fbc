"""Activation layers: thin modules over ``oxmera.nn.functional``, reprs as in PyTorch."""
from oxmera.nn import functional as F
from oxmera.nn.modules.module import Module

__all__ = ["ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Softplus", "Tanh", "Sigmoid",
           "Softmax", "LogSoftmax"]


def _inplace_suffix(inplace):
    return ", inplace=True" if inplace else ""


class ReLU(Module):
    """``max(x, 0)`` elementwise (``inplace=True`` writes into the input).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.ReLU()(oxmera.tensor([-1.0, 2.0]))
    tensor([0., 2.], dtype=float32)
    >>> nn.ReLU(inplace=True)
    ReLU(inplace=True)
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """``x`` where ``x > 0``, else ``negative_slope * x``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.LeakyReLU(0.1)
    >>> layer
    LeakyReLU(negative_slope=0.1)
    >>> layer(oxmera.tensor([-2.0, 3.0]))
    tensor([-0.2,  3. ], dtype=float32)
    """

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class ELU(Module):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.ELU()
    ELU(alpha=1.0)
    >>> nn.ELU()(oxmera.tensor([0.0, 1.0]))
    tensor([0., 1.], dtype=float32)
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class GELU(Module):
    """Gaussian error linear unit ``x * Phi(x)`` (``approximate='tanh'``: its tanh form).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.GELU(approximate="tanh")
    GELU(approximate='tanh')
    >>> nn.GELU()(oxmera.tensor([0.0, 10.0]))
    tensor([ 0., 10.], dtype=float32)
    """

    def __init__(self, approximate="none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)`` (swish).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.SiLU()(oxmera.tensor([0.0]))
    tensor([0.], dtype=float32)
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold`` (in units of ``beta * x``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Softplus()
    Softplus(beta=1.0, threshold=20.0)
    >>> nn.Softplus()(oxmera.tensor([0.0]))
    tensor([0.6931], dtype=float32)
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Tanh(Module):
    """Hyperbolic tangent, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Tanh()(oxmera.tensor([0.0]))
    tensor([0.], dtype=float32)
    """

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """Logistic sigmoid ``1 / (1 + exp(-x))``, elementwise.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Sigmoid()(oxmera.tensor([0.0]))
    tensor([0.5], dtype=float32)
    """

    def forward(self, input):
        return F.sigmoid(input)


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim`` (each slice along it sums to 1).

    ``dim=None`` is PyTorch's deprecated implicit choice (with its warning).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.Softmax(dim=1)
    >>> layer
    Softmax(dim=1)
    >>> layer(oxmera.tensor([[0.0, 0.0]]))
    tensor([[0.5, 0.5]], dtype=float32)
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log(softmax(x))`` along ``dim``, computed stably.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.LogSoftmax(dim=-1)(oxmera.tensor([0.0, 0.0]))
    tensor([-0.6931, -0.6931], dtype=float32)
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"
