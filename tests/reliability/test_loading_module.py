"""``Module.load_state_dict``: every conversion is checked before the first write.

A value NumPy would cast only with a warning (complex into real, NaN or infinity
into an integer, an integer out of range, a float that overflows the target's
dtype) is an error naming the key — under any warnings filter, ``python -W error``
included — and nothing of the module changes: no value, no ``_version``, no
tensor identity (``assign=True`` too). Valid conversions still load silently.
"""
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import oxmera
from oxmera import nn


def _model():
    """A Linear (float32 parameters) then a BatchNorm1d (an int64 buffer) and a uint8
    buffer: parameters load before the buffers that come later in the state dict."""
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    model.register_buffer("codes", oxmera.tensor(np.array([1, 2], dtype=np.uint8)))
    model.register_buffer("scale16", oxmera.zeros(2, dtype=oxmera.float16))
    return model


def _snapshot(model):
    tensors = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    return {name: (id(t), t._version, t.numpy(force=True).copy(), t.dtype)
            for name, t in tensors.items()}


def _assert_unchanged(model, before):
    after = _snapshot(model)
    assert after.keys() == before.keys()
    for name in before:
        ident, version, value, dtype = before[name]
        assert after[name][0] == ident and after[name][1] == version, name
        assert after[name][3] == dtype, name
        np.testing.assert_array_equal(after[name][2], value, err_msg=name)


def _state(model, **changes):
    """The model's state dict as new arrays (every value differing from the model's),
    with ``changes`` by key."""
    state = {key: value.numpy(force=True) + 1 for key, value in model.state_dict().items()}
    state.update({key.replace("__", "."): value for key, value in changes.items()})
    return state


BAD = [
    ("complex into a float32 weight", dict(**{"0__weight": np.ones((2, 2)) * 1j}),
     "0.weight", "complex"),
    ("complex into the int64 buffer", dict(**{"1__num_batches_tracked": np.array(1 + 0j)}),
     "1.num_batches_tracked", "complex"),
    ("NaN into the int64 buffer", dict(**{"1__num_batches_tracked": np.array(np.nan)}),
     "1.num_batches_tracked", "NaN or infinite"),
    ("inf into the uint8 buffer", dict(codes=np.array([np.inf, 1.0])), "codes",
     "NaN or infinite"),
    ("300 into the uint8 buffer", dict(codes=np.array([300, 1])), "codes",
     "beyond the range"),
    ("-1 into the uint8 buffer", dict(codes=np.array([-1.0, 1.0])), "codes",
     "beyond the range"),
    ("1e20 into the int64 buffer", dict(**{"1__num_batches_tracked": np.array(1e20)}),
     "1.num_batches_tracked", "beyond the range"),
    ("uint64 max into the int64 buffer",
     dict(**{"1__num_batches_tracked": np.array(2 ** 64 - 1, dtype=np.uint64)}),
     "1.num_batches_tracked", "beyond the range"),
    ("1e300 into a float32 bias", dict(**{"0__bias": np.array([1e300, 0.0])}), "0.bias",
     "beyond the range"),
    ("1e5 into the float16 buffer", dict(scale16=np.array([1e5, 0.0])), "scale16",
     "beyond the range"),
    ("an int64 too big for float16", dict(scale16=np.array([10 ** 6, 0])), "scale16",
     "beyond the range"),
    ("a string array", dict(scale16=np.array(["a", "b"])), "scale16", "dtype <U1"),
    ("a wrong shape", dict(scale16=np.zeros(3)), "scale16", "size mismatch"),
]


@pytest.mark.parametrize("assign", [False, True], ids=["copy", "assign"])
@pytest.mark.parametrize("label, changes, key, words", BAD, ids=[b[0] for b in BAD])
def test_a_lossy_conversion_is_an_error_naming_the_key_before_any_write(label, changes, key,
                                                                         words, assign):
    model = _model()
    before = _snapshot(model)
    state = _state(model, **changes)
    if assign and "complex" not in words and "dtype" not in words and "size" not in words:
        # assign=True keeps the checkpoint's dtype: no conversion, nothing to refuse
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            model.load_state_dict(state, assign=True)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # what python -W error does
        with pytest.raises(RuntimeError) as info:
            model.load_state_dict(state, assign=assign)
    message = str(info.value)
    assert message.startswith("Error(s) in loading state_dict for Sequential:"), message
    assert f'"{key}"' in message or f"for {key}:" in message, message
    assert words in message, message
    _assert_unchanged(model, before)


def test_every_problem_is_listed_at_once():
    model = _model()
    before = _snapshot(model)
    state = _state(model, **{"0__weight": np.ones((2, 2)) * 1j,
                             "1__num_batches_tracked": np.array(np.nan)})
    state["extra"] = np.zeros(1)
    del state["codes"]
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(state)
    message = str(info.value)
    for words in ('Missing key(s) in state_dict: "codes"', 'Unexpected key(s) in state_dict: '
                  '"extra"', '"0.weight"', '"1.num_batches_tracked"'):
        assert words in message, message
    _assert_unchanged(model, before)
    # strict=False: the keys may differ, the conversions are still checked
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        model.load_state_dict(state, strict=False)
    _assert_unchanged(model, before)


def test_the_issue_s_load_under_python_w_error_changes_nothing():
    """The report: under ``python -W error`` a NaN into an integer buffer raised a
    warning-turned-error after the parameters before it were overwritten."""
    code = textwrap.dedent("""
        import numpy as np, oxmera
        from oxmera import nn
        model = nn.BatchNorm1d(2)
        version = model.weight._version
        state = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        state["weight"] = np.array([5.0, 5.0])
        state["num_batches_tracked"] = np.array(np.nan)
        try:
            model.load_state_dict(state)
        except RuntimeError as err:
            print(type(err).__name__, "num_batches_tracked" in str(err))
        print(model.weight.tolist(), model.weight._version - version)
    """)
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["RuntimeError True", "[1.0, 1.0] 0"], done.stdout


def test_valid_conversions_load_silently_under_warnings_as_errors():
    model = _model()
    state = {
        "0.weight": np.full((2, 2), 0.1),                      # float64 -> float32 (rounds)
        "0.bias": np.array([1, 2], dtype=np.int64),            # int -> float
        "1.weight": oxmera.tensor([np.inf, -np.inf]),          # non-finite floats stay
        "1.bias": np.array([np.nan, 0.0]),
        "1.running_mean": np.array([True, False]),             # bool -> float
        "1.running_var": np.ones(2, dtype=np.float16),
        "1.num_batches_tracked": np.array(7.9),                 # truncates, as PyTorch does
        "codes": np.array([255.0, 0.0]),
        "scale16": np.array([65504.0, -1e-9]),                    # the largest float16; underflow
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.load_state_dict(state)
    assert model[0].weight.dtype == np.float32 and model[0].bias.tolist() == [1.0, 2.0]
    assert model[1].weight.tolist() == [np.inf, -np.inf] and np.isnan(model[1].bias[0].item())
    assert model[1].running_mean.tolist() == [1.0, 0.0]
    assert model[1].num_batches_tracked.item() == 7 and model.codes.tolist() == [255, 0]
    assert model.scale16.tolist()[0] == 65504.0


def test_assign_builds_every_new_tensor_before_assigning_any():
    model = _model()
    before = _snapshot(model)
    state = _state(model)
    state["0.weight"] = oxmera.ones(2, 2)
    state["scale16"] = np.zeros(2, dtype=np.complex64)            # refused: after 0.weight
    with pytest.raises(RuntimeError, match='"scale16".*complex'):
        model.load_state_dict(state, assign=True)
    _assert_unchanged(model, before)
    state["scale16"] = np.zeros(2, dtype=np.float64)
    model.load_state_dict(state, assign=True)
    assert model[0].weight.requires_grad and isinstance(model[0].weight, nn.Parameter)
    assert model.scale16.dtype == np.float64                      # the checkpoint's dtype
