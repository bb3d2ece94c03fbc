"""``Identity``, ``Linear`` and ``Bilinear``, initialized as in PyTorch."""
import math

from oxmera.ops.linalg import einsum
from oxmera.nn import functional as F
from oxmera.nn import init
from oxmera.nn.modules._utils import empty, factory_dtype
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]


class Identity(Module):
    """A placeholder that returns its input; any constructor arguments are ignored.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Identity(54, unused="argument")(oxmera.ones(2))
    tensor([1., 1.], dtype=float32)
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """An affine map ``y = x @ weight.T + bias`` over the last dim.

    ``weight`` is ``(out_features, in_features)`` and ``bias``
    ``(out_features,)``, both drawn from ``U(-1/sqrt(in_features),
    1/sqrt(in_features))`` as in PyTorch (``kaiming_uniform_`` with
    ``a=sqrt(5)``), in the default float dtype unless ``dtype`` is given.

    Parameters
    ----------
    in_features, out_features : int
        Sizes of each input and output sample.
    bias : bool, default True
        Whether to learn an additive bias.
    device : str, optional
        ``None`` or ``"cpu"`` (the only device).
    dtype : dtype, optional
        The parameters' float dtype; the default dtype (float32) if omitted.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.Linear(20, 30)
    >>> layer
    Linear(in_features=20, out_features=30, bias=True)
    >>> layer(oxmera.randn(128, 20)).shape
    oxmera.Size([128, 30])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "Linear")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), dtype))
        if bias:
            self.bias = Parameter(empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw weight and bias from PyTorch's default distributions."""
        # kaiming_uniform_ with a=sqrt(5) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """A bilinear map ``y[..., o] = x1 @ weight[o] @ x2 + bias[o]``.

    ``weight`` is ``(out_features, in1_features, in2_features)``; weight and
    bias are drawn from ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``
    as in PyTorch. The inputs share their leading dims.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.Bilinear(20, 30, 40)
    >>> layer(oxmera.randn(128, 20), oxmera.randn(128, 30)).shape
    oxmera.Size([128, 40])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "Bilinear")
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features), dtype))
        if bias:
            self.bias = Parameter(empty((out_features,), dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Redraw weight and bias from ``U(-1/sqrt(in1_features), 1/sqrt(in1_features))``."""
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        shape1, shape2 = tuple(input1.shape), tuple(input2.shape)
        if (not shape1 or not shape2 or shape1[-1] != self.in1_features
                or shape2[-1] != self.in2_features or shape1[:-1] != shape2[:-1]):
            raise ValueError(f"Bilinear: expected inputs of shapes (*, {self.in1_features}) and "
                             f"(*, {self.in2_features}) with the same leading dims, got "
                             f"{shape1} and {shape2}")
        out = einsum("...i,oij,...j->...o", input1, self.weight, input2)
        if self.bias is not None:
            out = out + self.bias
        return out

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
