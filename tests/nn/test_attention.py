"""scaled_dot_product_attention, multi_head_attention_forward and nn.MultiheadAttention.

Against PyTorch (values and gradients, float64, weights copied) where it is
installed; gradcheck and gradgradcheck either way, and the masks' rules
against closed forms.
"""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn
from oxmera.autograd import gradcheck, gradgradcheck


def _t(array, requires_grad=False):
    return oxmera.tensor(np.asarray(array), dtype=oxmera.float64, requires_grad=requires_grad)


def _sdpa_inputs(seed=0, q_shape=(2, 3, 4, 8), k_len=5, ev=6):
    rng = np.random.default_rng(seed)
    *batch, length, e = q_shape
    return (rng.standard_normal(q_shape), rng.standard_normal((*batch, k_len, e)),
            rng.standard_normal((*batch, k_len, ev)))


def _mask_cases():
    rng = np.random.default_rng(1)
    bool_mask = rng.random((4, 5)) < 0.6
    bool_mask[2] = False                          # a row masked out entirely
    return {"none": {}, "causal": {"is_causal": True}, "bool": {"attn_mask": bool_mask},
            "float": {"attn_mask": rng.standard_normal((2, 1, 4, 5))},
            "scale": {"scale": 0.3}}


MASKS = _mask_cases()


@pytest.mark.parametrize("case", sorted(MASKS))
def test_sdpa_gradients(case):
    q, k, v = (_t(a, True) for a in _sdpa_inputs(q_shape=(1, 2, 4, 3), ev=2))
    kwargs = {key: (_t(val) if isinstance(val, np.ndarray) and val.dtype != bool
                    else oxmera.tensor(val) if isinstance(val, np.ndarray) else val)
              for key, val in MASKS[case].items()}
    if case == "float":
        kwargs["attn_mask"] = kwargs["attn_mask"][:1]
    fn = lambda q, k, v: F.scaled_dot_product_attention(q, k, v, **kwargs)  # noqa: E731
    assert gradcheck(fn, (q, k, v))
    assert gradgradcheck(fn, (q, k, v))


def test_sdpa_masked_out_row_is_zero_with_finite_gradients():
    q, k, v = (_t(a, True) for a in _sdpa_inputs(q_shape=(4, 3), ev=2))
    mask = np.ones((4, 5), dtype=bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=oxmera.tensor(mask))
    np.testing.assert_array_equal(out[1].detach().numpy(), 0.0)
    out.sum().backward()
    assert np.isfinite(q.grad.numpy()).all() and np.isfinite(k.grad.numpy()).all()
    np.testing.assert_array_equal(q.grad.numpy()[1], 0.0)


def test_sdpa_causal_first_position_sees_itself_only():
    q, k, v = (_t(a) for a in _sdpa_inputs(q_shape=(4, 3), k_len=4, ev=2))
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    np.testing.assert_allclose(out[0].numpy(), v[0].numpy())


def test_sdpa_grouped_query_heads():
    q, k, v = (_t(a) for a in _sdpa_inputs(q_shape=(1, 4, 3, 2), ev=2))
    k2, v2 = k[:, :2], v[:, :2]
    out = F.scaled_dot_product_attention(q, k2, v2, enable_gqa=True)
    expanded = F.scaled_dot_product_attention(
        q, k2.repeat(1, 1, 1, 1)[:, [0, 0, 1, 1]], v2[:, [0, 0, 1, 1]])
    np.testing.assert_allclose(out.numpy(), expanded.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="multiple"):
        F.scaled_dot_product_attention(q, k[:, :3], v[:, :3], enable_gqa=True)


def test_sdpa_errors_change_nothing():
    q, k, v = (_t(a, True) for a in _sdpa_inputs())
    with pytest.raises(RuntimeError, match="should not be set when is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=oxmera.ones(4, 5, dtype=oxmera.bool),
                                       is_causal=True)
    with pytest.raises(RuntimeError, match="do not fit"):
        F.scaled_dot_product_attention(q, k[..., :3], v)
    with pytest.raises(RuntimeError, match="does not broadcast"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=oxmera.zeros(3, 3, dtype=oxmera.float64))
    assert q.grad is None and q._version == 0


@pytest.mark.parametrize("case", sorted(MASKS))
def test_sdpa_against_torch(case):
    torch = pytest.importorskip("torch")
    arrays = _sdpa_inputs()
    kwargs = MASKS[case]
    ours = [_t(a, True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = F.scaled_dot_product_attention(
        *ours, **{k: oxmera.tensor(v) if isinstance(v, np.ndarray) else v
                  for k, v in kwargs.items()})
    expected = torch.nn.functional.scaled_dot_product_attention(
        *theirs, **{k: torch.tensor(v) if isinstance(v, np.ndarray) else v
                    for k, v in kwargs.items()})
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=1e-12)
    weights = np.random.default_rng(2).standard_normal(expected.shape)
    (out * _t(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-12)


# -- nn.MultiheadAttention ------------------------------------------------------------------

MHA_CONFIGS = {
    "plain": ({}, {}),
    "batch_first": ({"batch_first": True}, {}),
    "no_bias": ({"bias": False}, {}),
    "kdim_vdim": ({"kdim": 5, "vdim": 3}, {}),
    "bias_kv_zero_attn": ({"add_bias_kv": True, "add_zero_attn": True}, {}),
    "masks": ({}, {"attn_mask": "bool", "key_padding_mask": True}),
    "float_mask": ({}, {"attn_mask": "float"}),
    "no_weights": ({}, {"need_weights": False, "attn_mask": "bool", "key_padding_mask": True}),
    "per_head_weights": ({}, {"average_attn_weights": False}),
    "causal": ({}, {"attn_mask": "causal", "is_causal": True}),
    "unbatched": ({}, {"unbatched": True}),
}


def _mha_inputs(config, call, length=4, source=6, batch=2, embed=8):
    rng = np.random.default_rng(3)
    kdim, vdim = config.get("kdim", embed), config.get("vdim", embed)
    if call.get("unbatched"):
        shapes = [(length, embed), (source, kdim), (source, vdim)]
    elif config.get("batch_first"):
        shapes = [(batch, length, embed), (batch, source, kdim), (batch, source, vdim)]
    else:
        shapes = [(length, batch, embed), (source, batch, kdim), (source, batch, vdim)]
    arrays = [rng.standard_normal(s) for s in shapes]
    kwargs = {k: v for k, v in call.items() if k not in ("attn_mask", "key_padding_mask",
                                                         "unbatched")}
    masks = {}
    if call.get("attn_mask") == "bool":
        masks["attn_mask"] = rng.random((length, source)) < 0.3
    elif call.get("attn_mask") == "float":
        masks["attn_mask"] = rng.standard_normal((length, source))
    elif call.get("attn_mask") == "causal":
        masks["attn_mask"] = np.triu(np.full((length, source), -np.inf), 1)
    if call.get("key_padding_mask"):
        padding = np.zeros((batch, source), dtype=bool)
        padding[0, -2:] = True
        masks["key_padding_mask"] = padding
    return arrays, kwargs, masks


@pytest.mark.parametrize("name", sorted(MHA_CONFIGS))
def test_multihead_attention_against_torch(name):
    torch = pytest.importorskip("torch")
    config, call = MHA_CONFIGS[name]
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(8, 2, **config).double()
    ours = nn.MultiheadAttention(8, 2, dtype=oxmera.float64, **config)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: oxmera.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    arrays, kwargs, masks = _mha_inputs(config, call)
    o_in = [_t(a, True) for a in arrays]
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, weights = ours(*o_in, **kwargs, **{k: oxmera.tensor(v) for k, v in masks.items()})
    t_out, t_weights = theirs(*t_in, **kwargs, **{k: torch.tensor(v) for k, v in masks.items()})
    np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), atol=1e-12)
    if t_weights is None:
        assert weights is None
    else:
        np.testing.assert_allclose(weights.detach().numpy(), t_weights.detach().numpy(),
                                   atol=1e-12)
    g = np.random.default_rng(4).standard_normal(t_out.shape)
    (out * _t(g)).sum().backward()
    (t_out * torch.tensor(g)).sum().backward()
    for a, b in zip(o_in, t_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-11)
    for (key, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=1e-11, err_msg=key)


def test_multihead_attention_gradcheck():
    attention = nn.MultiheadAttention(4, 2, dtype=oxmera.float64, add_bias_kv=True)
    rng = np.random.default_rng(5)
    x = _t(rng.standard_normal((3, 1, 4)), True)
    mask = oxmera.tensor(np.array([[False, True, False]] * 3))
    fn = lambda x: attention(x, x, x, attn_mask=mask)[0]  # noqa: E731
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_multihead_attention_errors():
    with pytest.raises(AssertionError, match="divisible"):
        nn.MultiheadAttention(7, 2)
    attention = nn.MultiheadAttention(8, 2)
    x = oxmera.randn(4, 2, 8)
    with pytest.raises(RuntimeError, match="embedding dimension of 8"):
        attention(oxmera.randn(4, 2, 6), x, x)
    with pytest.raises(RuntimeError, match=r"2D attn_mask is \(3, 3\), but should be \(4, 4\)"):
        attention(x, x, x, attn_mask=oxmera.zeros(3, 3))
    with pytest.raises(RuntimeError, match="key_padding_mask shape"):
        attention(x, x, x, key_padding_mask=oxmera.zeros(2, 3, dtype=oxmera.bool))
    with pytest.raises(RuntimeError, match="is_causal"):
        attention(x, x, x, is_causal=True)
