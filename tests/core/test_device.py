"""oxmera.device: made, compared and printed as PyTorch's; only the CPU holds tensors."""
import pickle

import pytest

import oxmera


@pytest.mark.parametrize("args,kwargs,text,kind,index", [
    (("cpu",), {}, "cpu", "cpu", None),
    (("cpu:0",), {}, "cpu:0", "cpu", 0),
    (("cuda", 1), {}, "cuda:1", "cuda", 1),
    ((), {"type": "mps"}, "mps", "mps", None),
    ((0,), {}, "cuda:0", "cuda", 0),
])
def test_device_forms(args, kwargs, text, kind, index):
    d = oxmera.device(*args, **kwargs)
    assert (str(d), d.type, d.index) == (text, kind, index)
    assert oxmera.device(d) == d
    assert pickle.loads(pickle.dumps(d)) == d
    assert hash(oxmera.device(text)) == hash(d)


def test_equality_is_type_and_index_never_a_string():
    assert oxmera.device("cpu") == oxmera.device("cpu")
    assert oxmera.device("cpu") != oxmera.device("cpu:0")
    assert oxmera.device("cpu") != "cpu"
    assert repr(oxmera.device("cuda", 2)) == "device(type='cuda', index=2)"


@pytest.mark.parametrize("bad,error", [("gpu", RuntimeError), ("cuda:-1", RuntimeError),
                                       ("cuda:x", RuntimeError), (1.5, TypeError)])
def test_bad_devices(bad, error):
    with pytest.raises(error):
        oxmera.device(bad)
    with pytest.raises(RuntimeError, match="negative"):
        oxmera.device("cuda", -1)


def test_only_the_cpu_is_a_default_device():
    oxmera.set_default_device("cpu")
    assert oxmera.get_default_device() == oxmera.device("cpu")
    with pytest.raises(RuntimeError, match="CPU with NumPy"):
        oxmera.set_default_device("cuda")
    with oxmera.device("cpu"):
        assert oxmera.get_default_device().type == "cpu"
    with pytest.raises(RuntimeError, match="cannot use device 'cuda:0'"):
        with oxmera.device("cuda:0"):
            pass


def test_against_torch():
    torch = pytest.importorskip("torch")
    for text in ["cpu", "cpu:0", "cuda:1", "mps"]:
        assert str(torch.device(text)) == str(oxmera.device(text))
        assert repr(torch.device(text)) == repr(oxmera.device(text))
    assert (torch.device("cpu") == torch.device("cpu:0")) is False
