"""Transformer layers against PyTorch (state_dicts loaded both ways), gradcheck, errors."""
import numpy as np
import pytest

import oxmera
from oxmera import nn
from oxmera.autograd import gradcheck, gradgradcheck

LAYER_CONFIGS = {
    "post_norm": {},
    "pre_norm": {"norm_first": True},
    "gelu_batch_first": {"activation": "gelu", "batch_first": True},
    "no_bias": {"bias": False},
}


def _copy_from_torch(ours, theirs):
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: oxmera.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})


def _compare(ours, theirs, o_args, t_args, kwargs_o=None, kwargs_t=None, atol=1e-10):
    torch = pytest.importorskip("torch")
    out = ours(*o_args, **(kwargs_o or {}))
    expected = theirs(*t_args, **(kwargs_t or {}))
    np.testing.assert_allclose(out.detach().numpy(), expected.detach().numpy(), atol=atol)
    g = np.random.default_rng(9).standard_normal(expected.shape)
    (out * oxmera.tensor(g)).sum().backward()
    (expected * torch.tensor(g)).sum().backward()
    for (name, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=atol, err_msg=name)


def _inputs(shape, seed):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(seed).standard_normal(shape)
    return oxmera.tensor(a), torch.tensor(a)


@pytest.mark.parametrize("name", sorted(LAYER_CONFIGS))
def test_encoder_layer_against_torch(name):
    torch = pytest.importorskip("torch")
    config = LAYER_CONFIGS[name]
    torch.manual_seed(0)
    theirs = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, **config).double()
    ours = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, dtype=oxmera.float64, **config)
    _copy_from_torch(ours, theirs)
    shape = (2, 5, 8) if config.get("batch_first") else (5, 2, 8)
    x, tx = _inputs(shape, 1)
    padding = np.zeros((2, 5), dtype=bool)
    padding[1, -2:] = True
    mask = np.triu(np.ones((5, 5), dtype=bool), 1)          # True: masked out
    _compare(ours, theirs, (x,), (tx,),
             {"src_mask": oxmera.tensor(mask), "src_key_padding_mask": oxmera.tensor(padding)},
             {"src_mask": torch.tensor(mask), "src_key_padding_mask": torch.tensor(padding)})


@pytest.mark.parametrize("name", sorted(LAYER_CONFIGS))
def test_decoder_layer_against_torch(name):
    torch = pytest.importorskip("torch")
    config = LAYER_CONFIGS[name]
    torch.manual_seed(0)
    theirs = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, **config).double()
    ours = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, dtype=oxmera.float64, **config)
    _copy_from_torch(ours, theirs)
    bf = config.get("batch_first")
    x, tx = _inputs((2, 4, 8) if bf else (4, 2, 8), 2)
    m, tm = _inputs((2, 6, 8) if bf else (6, 2, 8), 3)
    mask = np.triu(np.full((4, 4), -np.inf), 1)
    _compare(ours, theirs, (x, m), (tx, tm), {"tgt_mask": oxmera.tensor(mask)},
             {"tgt_mask": torch.tensor(mask)})


def test_transformer_against_torch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=True).double()
    ours = nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, batch_first=True, dtype=oxmera.float64)
    _copy_from_torch(ours, theirs)
    src, tsrc = _inputs((2, 6, 8), 4)
    tgt, ttgt = _inputs((2, 5, 8), 5)
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=oxmera.float64)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    np.testing.assert_array_equal(mask.numpy(), tmask.numpy())
    _compare(ours, theirs, (src, tgt), (tsrc, ttgt), {"tgt_mask": mask}, {"tgt_mask": tmask})


def test_transformer_init_is_xavier_for_matrices():
    model = nn.Transformer(16, 2, 1, 1, 32)
    w = model.encoder.layers[0].linear1.weight.numpy(force=True)
    bound = np.sqrt(6.0 / (16 + 32))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert model.encoder.norm is not None and model.decoder.norm is not None


def test_encoder_layer_gradcheck():
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, dtype=oxmera.float64)
    x = oxmera.tensor(np.random.default_rng(6).standard_normal((3, 1, 4)), requires_grad=True)
    assert gradcheck(layer, (x,))
    assert gradgradcheck(layer, (x,))


def test_stack_layers_are_independent_copies():
    layer = nn.TransformerEncoderLayer(4, 2, 6)
    encoder = nn.TransformerEncoder(layer, 3)
    weights = [id(m.linear1.weight) for m in encoder.layers]
    assert len(set(weights)) == 3
    assert sorted(encoder.state_dict())[0].startswith("layers.0.")


def test_errors():
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    model = nn.Transformer(8, 2, 1, 1, 16)
    with pytest.raises(RuntimeError, match="batch number"):
        model(oxmera.randn(3, 2, 8), oxmera.randn(3, 4, 8))
    with pytest.raises(RuntimeError, match="d_model"):
        model(oxmera.randn(3, 2, 6), oxmera.randn(3, 2, 6))
