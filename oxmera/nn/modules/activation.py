"""Activation layers: thin modules over ``oxmera.nn.functional``, reprs as in PyTorch."""
from oxmera.nn import functional as F
from oxmera.nn import init
from oxmera.nn import init as _init
from oxmera.nn.modules._utils import empty, factory_dtype
from oxmera.nn.modules.linear import Linear
from oxmera.nn.modules.module import Module
from oxmera.nn.parameter import Parameter

__all__ = ["ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Softplus", "Tanh", "Sigmoid",
           "Softmax", "LogSoftmax", "MultiheadAttention", "ReLU6", "Hardtanh", "Hardswish",
           "Hardsigmoid", "Mish", "SELU", "CELU", "Softsign", "LogSigmoid", "GLU", "PReLU",
           "RReLU", "Threshold", "Softmin", "Softmax2d", "Tanhshrink", "Softshrink",
           "Hardshrink"]


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



class _Elementwise(Module):
    """A module applying one function of ``oxmera.nn.functional`` with fixed arguments.

    Subclasses name the function (``_function``) and the constructor
    arguments passed to it (``_arguments``, in order), which are also the
    repr's; ``inplace`` (when the function takes it) shows only when True,
    as in PyTorch.
    """

    _function = None
    _arguments = ()
    _takes_inplace = False

    def forward(self, input):
        kwargs = {name: getattr(self, name) for name in self._arguments}
        if self._takes_inplace:
            kwargs["inplace"] = self.inplace
        return type(self)._function(input, **kwargs)

    def extra_repr(self):
        parts = [f"{name}={getattr(self, name)}" for name in self._arguments]
        if self._takes_inplace and self.inplace:
            parts.append("inplace=True")
        return ", ".join(parts)


class Hardtanh(_Elementwise):
    """``input`` clamped to ``[min_val, max_val]`` (see ``F.hardtanh``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Hardtanh(-2.0, 2.0)(oxmera.tensor([-3.0, 1.0]))
    tensor([-2.,  1.], dtype=float32)
    """

    _function = F.hardtanh
    _arguments = ("min_val", "max_val")
    _takes_inplace = True

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val ({min_val}) cannot be greater than max_val "
                             f"({max_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.ReLU6()(oxmera.tensor([-1.0, 8.0]))
    tensor([0., 6.], dtype=float32)
    """

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


def _inplace_module(name, function, doc, repr_inplace=True):
    """A module class taking only ``inplace`` (Hardsigmoid, Hardswish, Mish, SELU).

    PyTorch's Hardsigmoid and Hardswish do not show ``inplace`` in their repr.
    """
    def __init__(self, inplace=False):
        Module.__init__(self)
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace and repr_inplace else ""
    return type(name, (_Elementwise,), {"__init__": __init__, "extra_repr": extra_repr,
                                         "_function": function, "_takes_inplace": True,
                                         "__doc__": doc, "__module__": __name__})


def _plain_module(name, function, doc):
    """A module class without arguments (Softsign, LogSigmoid, Tanhshrink)."""
    def __init__(self):
        Module.__init__(self)
    return type(name, (_Elementwise,), {"__init__": __init__, "_function": function,
                                         "__doc__": doc, "__module__": __name__})


Hardsigmoid = _inplace_module("Hardsigmoid", F.hardsigmoid, """``relu6(x + 3) / 6``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Hardsigmoid()(oxmera.tensor([0.0]))
    tensor([0.5], dtype=float32)
    """, repr_inplace=False)
Hardswish = _inplace_module("Hardswish", F.hardswish, """``x * relu6(x + 3) / 6``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Hardswish()(oxmera.tensor([4.0]))
    tensor([4.], dtype=float32)
    """, repr_inplace=False)
Mish = _inplace_module("Mish", F.mish, """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Mish()(oxmera.tensor([0.0]))
    tensor([0.], dtype=float32)
    """)
SELU = _inplace_module("SELU", F.selu, """Scaled ELU with SELU's fixed constants.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.SELU()(oxmera.tensor([1.0]))
    tensor([1.0507], dtype=float32)
    """)
Softsign = _plain_module("Softsign", F.softsign, """``x / (1 + |x|)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Softsign()(oxmera.tensor([1.0]))
    tensor([0.5], dtype=float32)
    """)
LogSigmoid = _plain_module("LogSigmoid", F.logsigmoid, """``log(sigmoid(x))``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.LogSigmoid()(oxmera.tensor([0.0]))
    tensor([-0.6931], dtype=float32)
    """)
Tanhshrink = _plain_module("Tanhshrink", F.tanhshrink, """``x - tanh(x)``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Tanhshrink()(oxmera.tensor([0.0]))
    tensor([0.], dtype=float32)
    """)


class CELU(_Elementwise):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.CELU(alpha=2.0)
    CELU(alpha=2.0)
    """

    _function = F.celu
    _arguments = ("alpha",)
    _takes_inplace = True

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace


class GLU(_Elementwise):
    """Gated linear unit over ``dim`` (see ``F.glu``).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.GLU()(oxmera.randn(3, 4)).shape
    oxmera.Size([3, 2])
    """

    _function = F.glu
    _arguments = ("dim",)

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim


class Threshold(_Elementwise):
    """``x`` where ``x > threshold``, else ``value``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Threshold(0.1, 20.0)
    Threshold(threshold=0.1, value=20.0)
    """

    _function = F.threshold
    _arguments = ("threshold", "value")
    _takes_inplace = True

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace


class Softmin(_Elementwise):
    """``softmax(-x)`` along ``dim``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Softmin(dim=0)(oxmera.tensor([1.0, 1.0]))
    tensor([0.5, 0.5], dtype=float32)
    """

    _function = F.softmin
    _arguments = ("dim",)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of a ``(C, H, W)`` or ``(N, C, H, W)`` input.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Softmax2d()(oxmera.zeros(1, 2, 1, 1)).flatten().tolist()
    [0.5, 0.5]
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input of 3 or 4 dims (C, H, W) or "
                             f"(N, C, H, W), got shape {tuple(input.shape)}")
        return F.softmax(input, -3)


class _Shrink(_Elementwise):
    _arguments = ("lambd",)

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(_Shrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Softshrink(1.0)(oxmera.tensor([3.0]))
    tensor([2.], dtype=float32)
    """

    _function = F.softshrink


class Hardshrink(_Shrink):
    """``x`` where ``|x| > lambd``, else 0.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.Hardshrink()(oxmera.tensor([0.2, 3.0]))
    tensor([0., 3.], dtype=float32)
    """

    _function = F.hardshrink


class PReLU(Module):
    """``x`` where ``x > 0``, else ``weight * x``, with a learned ``weight`` (one entry, or
    one per channel: ``num_parameters``), initialized to ``init``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.PReLU(3)
    >>> layer.weight.shape, layer(oxmera.randn(2, 3, 4)).shape
    (oxmera.Size([3]), oxmera.Size([2, 3, 4]))
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(empty((num_parameters,), factory_dtype(device, dtype, "PReLU")))
        self.reset_parameters()

    def reset_parameters(self):
        """Set every slope to ``init``."""
        _init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: random slopes in ``[lower, upper]`` while training, their mean
    in evaluation.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> nn.RReLU(0.1, 0.3).eval()(oxmera.tensor([-1.0, 1.0]))
    tensor([-0.2,  1. ], dtype=float32)
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_inplace_suffix(self.inplace)}"

class NonDynamicallyQuantizableLinear(Linear):
    """The ``out_proj`` of :class:`MultiheadAttention`: a ``Linear`` (PyTorch's class name,
    so reprs and ``isinstance`` checks of ported code agree).

    Examples
    --------
    >>> from oxmera import nn
    >>> nn.MultiheadAttention(8, 2).out_proj
    NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)
    """


class MultiheadAttention(Module):
    """Multi-head attention, as PyTorch's ``nn.MultiheadAttention``.

    ``forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)`` returns
    ``(output, weights)``; inputs are ``(L, N, E)`` (``(N, L, E)`` with
    ``batch_first``) or unbatched ``(L, E)``. Boolean masks mark positions
    that are masked out (True); float masks are added to the scores.

    Parameters and their names are PyTorch's: ``in_proj_weight``
    ``(3E, E)`` and ``in_proj_bias`` when key and value have the embedding
    size (else ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``),
    ``out_proj`` (a Linear), and ``bias_k``/``bias_v`` with
    ``add_bias_kv``; initialized as in PyTorch (xavier-uniform projections,
    zero biases), so a PyTorch ``state_dict`` loads as it is.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> attention = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
    >>> x = oxmera.randn(3, 5, 8)
    >>> out, weights = attention(x, x, x)
    >>> out.shape, weights.shape
    (oxmera.Size([3, 5, 8]), oxmera.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        dtype = factory_dtype(device, dtype, "MultiheadAttention")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), dtype))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), dtype))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty((3 * embed_dim,), dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), dtype))
            self.bias_v = Parameter(empty((1, 1, embed_dim), dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        output, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        if self.batch_first and batched:
            output = output.transpose(1, 0)
        return output, weights
