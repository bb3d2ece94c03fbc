"""``nn.AdaptiveLogSoftmaxWithLoss`` against PyTorch's with copied weights (skipped without
torch), and its own consistency (log_prob normalizes, forward picks log_prob's entries)."""
import numpy as np
import pytest

import oxmera
from oxmera import nn

CONFIGS = [
    (16, 10, [4, 7], 4.0, False),
    (12, 20, [2, 9, 15], 2.0, True),
    (8, 5, [1], 1.0, False),
]


def _pair(torch, config):
    in_features, n_classes, cutoffs, div_value, head_bias = config
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value,
                                                 head_bias).double()
    ours = nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value, head_bias,
                                         dtype=oxmera.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("config", CONFIGS)
def test_forward_and_gradients_against_torch(config):
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(torch, config)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(9, config[0]))
    target = rng.integers(0, config[1], 9)
    target[:2] = [0, config[1] - 1]
    a_in, b_in = oxmera.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a, b = ours(a_in, oxmera.tensor(target)), theirs(b_in, torch.tensor(target))
    assert type(a).__name__ == "_ASMoutput" and a._fields == ("output", "loss")
    np.testing.assert_allclose(a.output.detach().numpy(), b.output.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(a.loss.item(), b.loss.item(), rtol=1e-12)
    a.loss.backward()
    b.loss.backward()
    np.testing.assert_allclose(a_in.grad.numpy(), b_in.grad.numpy(), rtol=1e-10, atol=1e-14)
    grads = {name: p.grad for name, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(ours.log_prob(oxmera.tensor(x)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x)).detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(oxmera.tensor(x)).numpy(),
                                  theirs.predict(torch.tensor(x)).numpy())


def test_unbatched_against_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(torch, CONFIGS[0])
    x = np.random.default_rng(1).normal(size=16)
    a = ours(oxmera.tensor(x), oxmera.tensor(8))
    b = theirs(torch.tensor(x), torch.tensor(8))
    assert a.output.shape == () and a.loss.shape == ()
    np.testing.assert_allclose(a.output.item(), b.output.item(), rtol=1e-12)
    # torch 2.13's log_prob and predict fail on unbatched input (IndexError: they take
    # dim 1); ours give the batched answer's row
    np.testing.assert_allclose(ours.log_prob(oxmera.tensor(x)).detach().numpy(),
                               theirs.log_prob(torch.tensor(x)[None])[0].detach().numpy(),
                               rtol=1e-12)
    assert ours.predict(oxmera.tensor(x)).item() == theirs.predict(torch.tensor(x)[None]).item()


def test_predict_mixes_head_and_tail_classes_as_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = _pair(torch, CONFIGS[1])
    with torch.no_grad():
        theirs.head.weight.mul_(5.0)            # confident heads: some pick clusters
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(2).normal(size=(40, 12))
    a, b = ours.predict(oxmera.tensor(x)).numpy(), theirs.predict(torch.tensor(x)).numpy()
    assert (b >= 2).any() and (b < 2).any()
    np.testing.assert_array_equal(a, b)


def test_log_prob_normalizes_and_forward_reads_it():
    oxmera.manual_seed(0)
    asm = nn.AdaptiveLogSoftmaxWithLoss(12, 20, [2, 9, 15], div_value=2.0,
                                        dtype=oxmera.float64)
    x = oxmera.randn(6, 12, dtype=oxmera.float64)
    log_prob = asm.log_prob(x)
    np.testing.assert_allclose(log_prob.exp().sum(1).detach().numpy(), 1.0, rtol=1e-12)
    target = oxmera.tensor([0, 3, 9, 14, 15, 19])
    out = asm(x, target)
    np.testing.assert_allclose(out.output.detach().numpy(),
                               log_prob.detach().numpy()[np.arange(6), target.numpy()],
                               rtol=1e-12)
    np.testing.assert_allclose(out.loss.item(), -out.output.detach().numpy().mean(), rtol=1e-12)
    np.testing.assert_array_equal(asm.predict(x).numpy(), log_prob.argmax(1).numpy())


def test_gradcheck():
    oxmera.manual_seed(1)
    asm = nn.AdaptiveLogSoftmaxWithLoss(6, 7, [2, 4], div_value=2.0, dtype=oxmera.float64)
    x = oxmera.randn(5, 6, dtype=oxmera.float64, requires_grad=True)
    target = oxmera.tensor([0, 2, 3, 5, 6])

    def fn(x):
        return asm(x, target).output
    assert oxmera.autograd.gradcheck(fn, (x,))
    assert oxmera.autograd.gradgradcheck(fn, (x,))


def test_errors():
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])
    for cutoffs in ([5, 3], [0, 4], [4, 10], [3, 3], [2.5]):
        with pytest.raises(ValueError, match="unique, positive integers"):
            nn.AdaptiveLogSoftmaxWithLoss(4, 10, cutoffs)
    asm = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        asm(oxmera.ones(3, 4), oxmera.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="1D target tensor expects 2D input"):
        asm(oxmera.ones(2, 2, 4), oxmera.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="0D target tensor expects 1D input"):
        asm(oxmera.ones(2, 4), oxmera.tensor(1))
    with pytest.raises(RuntimeError, match="multi-target not supported"):
        asm(oxmera.ones(2, 4), oxmera.tensor([[1], [2]]))
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
        asm(oxmera.ones(2, 4), oxmera.tensor([1, 10]))
