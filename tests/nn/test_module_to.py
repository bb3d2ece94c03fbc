"""nn.Module.to / type / cpu / cuda / half / float / double, compared with torch.nn.Module."""
import numpy as np
import pytest

import oxmera
from oxmera import nn

F16, F32, F64, I32, I64 = (oxmera.float16, oxmera.float32, oxmera.float64, oxmera.int32,
                           oxmera.int64)
NOT_CPU = "oxmera computes on the CPU"


def _model(lib):
    return lib.nn.Sequential(lib.nn.Conv2d(2, 3, 3), lib.nn.BatchNorm2d(3),
                             lib.nn.Flatten(), lib.nn.Linear(3 * 2 * 2, 2))


def _state(module):
    """name -> (dtype name, element strides) of every parameter and buffer."""
    found = {}
    for name, t in [*module.named_parameters(), *module.named_buffers()]:
        if isinstance(t, oxmera.Tensor):
            array = t._data
            found[name] = (str(array.dtype), tuple(s // array.itemsize for s in array.strides))
        else:
            found[name] = (str(t.dtype).replace("torch.", ""), tuple(t.stride()))
    return found


CALLS = {
    "dtype": lambda lib, m: m.to(lib.float64),
    "device": lambda lib, m: m.to("cpu"),
    "device-obj": lambda lib, m: m.to(lib.device("cpu")),
    "device-dtype": lambda lib, m: m.to("cpu", lib.float16),
    "device-dtype-non-blocking": lambda lib, m: m.to("cpu", lib.float64, True),
    "tensor": lambda lib, m: m.to(lib.zeros(1, dtype=lib.float64)),
    "keywords": lambda lib, m: m.to(device="cpu", dtype=lib.float64, non_blocking=False),
    "channels-last": lambda lib, m: m.to(memory_format=lib.channels_last),
    "dtype-channels-last": lambda lib, m: m.to(lib.float64, memory_format=lib.channels_last),
    "type": lambda lib, m: m.type(lib.float64),
    "half": lambda lib, m: m.half(),
    "float": lambda lib, m: m.double().float(),
    "double": lambda lib, m: m.double(),
    "cpu": lambda lib, m: m.cpu(),
}


@pytest.mark.parametrize("call", CALLS)
def test_conversions_match_torch(call):
    torch = pytest.importorskip("torch")
    ours, theirs = _model(oxmera), _model(torch)
    assert CALLS[call](oxmera, ours) is ours
    assert CALLS[call](torch, theirs) is theirs
    assert _state(ours) == _state(theirs)


def test_integer_buffers_keep_their_dtype_and_gradients_follow():
    model = _model(oxmera)
    model(oxmera.ones(1, 2, 4, 4)).sum().backward()
    weight = model[0].weight
    model.to(F64)
    assert model[1].num_batches_tracked.dtype == I64
    assert model[1].running_mean.dtype == F64
    assert model[0].weight is weight                    # same Parameter, new values
    assert weight.dtype == F64 and weight.grad.dtype == F64
    model.type(F32)
    assert model[1].num_batches_tracked.dtype == F32    # type() converts everything


@pytest.mark.parametrize("call,error,match", [
    (lambda m: m.to("cuda"), RuntimeError, f"Module.to\\(\\): cannot use device 'cuda': {NOT_CPU}"),
    (lambda m: m.to(0), RuntimeError, "'cuda:0'"),
    (lambda m: m.to(device="mps", dtype=F64), RuntimeError, "'mps'"),
    (lambda m: m.cuda(), RuntimeError, f"Module.cuda\\(\\): cannot use device 'cuda': {NOT_CPU}"),
    (lambda m: m.cuda(1), RuntimeError, "'cuda:1'"),
    (lambda m: m.to(I64), TypeError, "only accepts floating point or complex dtypes"),
    (lambda m: m.to(F64, copy=True), RuntimeError, "does not accept copy argument"),
    (lambda m: m.to(F64, False, True), TypeError, "unexpected argument True"),
    (lambda m: m.to(foo=1), TypeError, "unexpected keyword argument 'foo'"),
    (lambda m: m.to(memory_format="channels_last"), TypeError, "memory_format must be"),
    (lambda m: m.type(I32), RuntimeError, "requires gradients and cannot become int32"),
])
def test_errors_change_nothing(call, error, match):
    model = _model(oxmera)
    before = _state(model)
    with pytest.raises(error, match=match):
        call(model)
    assert _state(model) == before


def test_channels_last_needs_rank_four_when_a_5d_tensor_is_met():
    model = _model(oxmera)
    model.register_buffer("volume", oxmera.zeros(1, 2, 2, 2, 2))
    before = _state(model)
    with pytest.raises(RuntimeError, match="'volume'.*required rank 4"):
        model.to(F64, memory_format=oxmera.channels_last)
    assert _state(model) == before                  # the conv weight was not converted first
    with pytest.raises(RuntimeError, match="'0.weight'.*required rank 5"):
        model.to(memory_format=oxmera.channels_last_3d)
    del model.volume
    model[0].to(memory_format=oxmera.channels_last)
    layer = nn.Linear(2, 2)
    layer.register_buffer("volume", oxmera.zeros(1, 2, 2, 2, 2))
    layer.to(memory_format=oxmera.channels_last_3d)
    assert _state(layer)["volume"] == ("float32", (16, 1, 8, 4, 2))


def test_converted_model_computes_what_the_plain_one_does():
    oxmera.manual_seed(0)
    plain = _model(oxmera).double()
    converted = _model(oxmera)
    converted.load_state_dict(plain.state_dict())
    converted.to("cpu", F64, memory_format=oxmera.channels_last)
    assert _state(converted)["0.weight"][1] == (18, 1, 6, 2)
    x = oxmera.randn(2, 2, 4, 4, dtype=F64)
    for model in (plain, converted):
        model(x).square().sum().backward()
    np.testing.assert_allclose(converted(x).detach().numpy(), plain(x).detach().numpy())
    for a, b in zip(converted.parameters(), plain.parameters()):
        assert a.grad.dtype == F64
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)
