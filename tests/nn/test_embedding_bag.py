"""EmbeddingBag / F.embedding_bag, Embedding(scale_grad_by_freq=True) and from_pretrained:
outputs, gradients and errors compared with torch where installed, closed forms otherwise."""
import numpy as np
import pytest

import oxmera
import oxmera.nn.functional as F
from oxmera import nn

_WEIGHT = np.random.default_rng(0).standard_normal((7, 3))
_INPUT = [1, 2, 4, 5, 4, 3, 2, 6, 0]


def test_sum_mean_max_closed_form():
    w = oxmera.tensor(_WEIGHT)
    idx = oxmera.tensor(_INPUT)
    offsets = oxmera.tensor([0, 3, 3, 7])
    bags = [[1, 2, 4], [], [5, 4, 3, 2], [6, 0]]
    for mode, reduce in (("sum", np.sum), ("mean", np.mean), ("max", np.max)):
        got = F.embedding_bag(idx, w, offsets, mode=mode).numpy()
        expected = np.stack([reduce(_WEIGHT[b], axis=0) if b else np.zeros(3) for b in bags])
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def _case_inputs(lib, case):
    kwargs = dict(case)
    out = {}
    for key, value in kwargs.items():
        if key in ("input", "offsets"):
            out[key] = lib.tensor(value)
        elif key == "per_sample_weights":
            out[key] = lib.tensor(np.array(value), requires_grad=True)
        else:
            out[key] = value
    return out


_CASES = [
    dict(input=_INPUT, offsets=[0, 3, 3, 7], mode="sum"),
    dict(input=_INPUT, offsets=[0, 3, 3, 7], mode="mean"),
    dict(input=_INPUT, offsets=[0, 3, 3, 7], mode="max"),
    # (the last offset is the input's length, as PyTorch documents; its kernels
    # disagree with each other for other values)
    dict(input=_INPUT, offsets=[0, 2, 9], mode="mean", include_last_offset=True),
    dict(input=_INPUT, offsets=[0, 2, 9], mode="max", include_last_offset=True),
    dict(input=[[1, 2, 2], [0, 6, 3]], mode="mean"),
    dict(input=[[1, 2, 2], [0, 6, 3]], mode="max"),
    dict(input=_INPUT, offsets=[0, 4], mode="sum",
         per_sample_weights=[0.5, -1.0, 2.0, 1.5, 0.25, 3.0, -0.5, 1.0, 2.0]),
    dict(input=[[1, 2], [4, 4]], mode="sum", per_sample_weights=[[1.0, 2.0], [3.0, 4.0]]),
    dict(input=_INPUT, offsets=[0, 2, 3, 6], mode="mean", padding_idx=2),
    dict(input=_INPUT, offsets=[0, 2, 3, 6], mode="max", padding_idx=-3),
    dict(input=_INPUT, offsets=[0, 2, 3, 6], mode="sum", padding_idx=4),
    dict(input=_INPUT, offsets=[0, 5], mode="sum", max_norm=1.0),
    dict(input=_INPUT, offsets=[0, 5], mode="mean", max_norm=0.5, norm_type=1.0),
    dict(input=[], offsets=[0, 0], mode="sum"),
    dict(input=[], offsets=[0, 0], mode="max"),
]


@pytest.mark.parametrize("case", _CASES, ids=[str(i) for i in range(len(_CASES))])
def test_embedding_bag_as_torch(case):
    torch = pytest.importorskip("torch")
    results = []
    for lib, fn in ((torch, torch.nn.functional.embedding_bag), (oxmera, F.embedding_bag)):
        kwargs = _case_inputs(lib, case)
        if lib is torch and not case["input"]:
            kwargs["input"] = torch.zeros(0, dtype=torch.int64)
        if lib is oxmera and not case["input"]:
            kwargs["input"] = oxmera.zeros(0, dtype=oxmera.int64)
        w = lib.tensor(_WEIGHT.copy(), requires_grad=True)
        out = fn(weight=w, **kwargs)
        (out * lib.tensor(np.arange(1.0, 1.0 + out.numel()).reshape(tuple(out.shape)))
         ).sum().backward()
        psw = kwargs.get("per_sample_weights")
        results.append((out.detach().numpy(), w.grad.numpy(), w.detach().numpy(),
                        None if psw is None else psw.grad.numpy()))
    for got, want in zip(results[1], results[0]):
        if want is None:
            assert got is None
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)


def test_embedding_bag_errors_as_torch():
    torch = pytest.importorskip("torch")
    w_t, w = torch.tensor(_WEIGHT), oxmera.tensor(_WEIGHT)
    cases = [
        (dict(input=[[1, 2]], offsets=[0]), ValueError,
         "if input is 2D, then offsets has to be None"),
        (dict(input=[1, 2]), ValueError, "offsets has to be a 1D Tensor but got None"),
        (dict(input=[[[1]]]), ValueError, "input has to be 1D or 2D Tensor"),
        (dict(input=[1, 2], offsets=[0], mode="prod"), ValueError, "mode has to be one of"),
        (dict(input=[1, 2], offsets=[0], mode="max", scale_grad_by_freq=True), ValueError,
         "max mode does not support scaling"),
        (dict(input=[1, 2], offsets=[0], mode="mean", per_sample_weights=[1.0, 2.0]),
         NotImplementedError, "only supported for mode='sum'"),
        (dict(input=[1, 2], offsets=[0], mode="sum", per_sample_weights=[1.0]), ValueError,
         "must have the same shape as the input"),
        (dict(input=[1, 2], offsets=[1]), RuntimeError, "offsets\\[0\\] has to be 0"),
        (dict(input=[1, 2], offsets=[0, 3]), RuntimeError, "can not be greater than input"),
    ]
    for case, error, message in cases:
        for lib, fn, weight in ((torch, torch.nn.functional.embedding_bag, w_t),
                                (oxmera, F.embedding_bag, w)):
            kwargs = {k: (lib.tensor(v) if k in ("input", "offsets", "per_sample_weights")
                          else v) for k, v in case.items()}
            with pytest.raises(error, match=message):
                fn(weight=weight, **kwargs)
    with pytest.raises(IndexError, match="not in the valid range \\[0, 7\\)"):
        F.embedding_bag(oxmera.tensor([1, 9]), w, oxmera.tensor([0]))
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor"):
        F.embedding_bag(oxmera.tensor([1]), oxmera.ones(3), oxmera.tensor([0]))


def test_embedding_bag_module_as_torch():
    torch = pytest.importorskip("torch")
    for kwargs in (dict(mode="sum"), dict(mode="max", padding_idx=-1),
                   dict(mode="mean", include_last_offset=True, max_norm=2.0)):
        t_bag = torch.nn.EmbeddingBag(7, 3, **kwargs).double()
        bag = nn.EmbeddingBag(7, 3, dtype=oxmera.float64, **kwargs)
        assert repr(bag) == repr(t_bag)
        assert list(bag.state_dict()) == list(t_bag.state_dict())
        if "padding_idx" in kwargs:
            assert bag.weight[6].tolist() == [0.0, 0.0, 0.0]
        bag.load_state_dict({k: v.numpy() for k, v in t_bag.state_dict().items()})
        idx = [1, 2, 6, 5, 4, 3]
        offsets = [0, 2, 4, 6] if kwargs.get("include_last_offset") else [0, 2, 4]
        t_out = t_bag(torch.tensor(idx), torch.tensor(offsets))
        out = bag(oxmera.tensor(idx), oxmera.tensor(offsets))
        np.testing.assert_allclose(out.detach().numpy(), t_out.detach().numpy(), rtol=1e-12)
        t_out.sum().backward()
        out.sum().backward()
        np.testing.assert_allclose(bag.weight.grad.numpy(), t_bag.weight.grad.numpy(),
                                   rtol=1e-12)
    with pytest.raises(ValueError, match="padding_idx 7 must be within"):
        nn.EmbeddingBag(7, 3, padding_idx=7)


def test_from_pretrained_freeze_and_sharing():
    table = oxmera.tensor([[1.0, 2.0], [4.0, 6.0]])
    for cls in (nn.Embedding, nn.EmbeddingBag):
        frozen = cls.from_pretrained(table)
        assert not frozen.weight.requires_grad
        trainable = cls.from_pretrained(table, freeze=False)
        assert trainable.weight.requires_grad
        with pytest.raises(ValueError, match="2-D"):
            cls.from_pretrained(oxmera.ones(3))
    bag = nn.EmbeddingBag.from_pretrained(table, mode="max", padding_idx=0)
    assert bag(oxmera.tensor([[0, 1], [0, 0]])).tolist() == [[4.0, 6.0], [0.0, 0.0]]


def test_embedding_scale_grad_by_freq_as_torch():
    torch = pytest.importorskip("torch")
    idx = [[1, 1, 2], [1, 4, 4], [0, 3, 2]]
    grads = []
    for lib, nn_mod in ((torch, torch.nn), (oxmera, nn)):
        emb = nn_mod.Embedding(5, 2, scale_grad_by_freq=True, padding_idx=0)
        with (torch.no_grad() if lib is torch else oxmera.no_grad()):
            emb.weight.copy_(lib.tensor(np.arange(10.0).reshape(5, 2)))
        out = emb(lib.tensor(idx))
        (out * lib.tensor(np.arange(18.0).reshape(3, 3, 2))).sum().backward()
        grads.append((out.detach().numpy(), emb.weight.grad.numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0])
    np.testing.assert_allclose(grads[1][1], grads[0][1], rtol=1e-6)
    assert "scale_grad_by_freq=True" in repr(nn.Embedding(5, 2, scale_grad_by_freq=True))


def test_embedding_scale_grad_by_freq_closed_form():
    w = oxmera.ones(4, 2, dtype=oxmera.float64, requires_grad=True)
    out = F.embedding(oxmera.tensor([3, 3, 3, 1]), w, scale_grad_by_freq=True)
    assert out.tolist() == [[1.0, 1.0]] * 4
    out.sum().backward()
    assert w.grad.tolist() == [[0.0, 0.0], [1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    with pytest.raises(NotImplementedError, match="sparse=True"):
        F.embedding(oxmera.tensor([1]), w, sparse=True)


def test_embedding_bag_scale_grad_by_freq_closed_form():
    # Each row's gradient divided by its count in the input, as for embedding. (torch's
    # CPU kernel gives other numbers here, e.g. row 4, met twice, gets 2.0 in mode
    # "sum" while rows met once get 0.5 or 1.0: not the documented rule.)
    w = oxmera.ones(7, 1, dtype=oxmera.float64, requires_grad=True)
    F.embedding_bag(oxmera.tensor(_INPUT), w, oxmera.tensor([0, 5]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    assert w.grad.flatten().tolist() == [1.0] * 7
    w.grad = None
    F.embedding_bag(oxmera.tensor(_INPUT), w, oxmera.tensor([0, 5]), mode="mean",
                    scale_grad_by_freq=True).sum().backward()
    # row 2 is met once in each bag (sizes 5 and 4): (1/5 + 1/4) / 2
    np.testing.assert_allclose(w.grad.flatten().numpy(),
                               [1 / 4, 1 / 5, (1 / 5 + 1 / 4) / 2, 1 / 4, 1 / 5, 1 / 5, 1 / 4])
