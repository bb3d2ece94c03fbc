"""Tensor subclasses (what nn.Parameter needs): construction, ops, isinstance, attributes,
pickle and copy keeping the subclass."""
import copy
import pickle

import numpy as np
import pytest

import oxmera


class Parameter(oxmera.Tensor):
    """A minimal nn.Parameter: requires grad by default, carries attributes."""

    def __init__(self, data=None, requires_grad=True):
        super().__init__(data, requires_grad=requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Slotted(oxmera.Tensor):
    __slots__ = ("tag",)


class CustomState(oxmera.Tensor):
    def __getstate__(self):
        return {"note": "from getstate"}

    def __setstate__(self, state):
        self.restored = state["note"]


def test_construct_and_isinstance():
    p = Parameter([1.0, 2.0])
    assert isinstance(p, oxmera.Tensor) and isinstance(p, Parameter)
    assert p.requires_grad and p.is_leaf and p.dtype == np.float32
    assert repr(p).startswith("Parameter containing:")
    q = Parameter(oxmera.ones(2, 2), requires_grad=False)
    assert not q.requires_grad and q.shape == (2, 2)


def test_ops_on_a_subclass_return_plain_tensors_and_gradients_reach_it():
    p = Parameter([1.0, 2.0])
    y = (p * p).sum() + oxmera.sin(p).sum() + (p @ p)
    assert type(y) is oxmera.Tensor
    assert type(p + 1) is oxmera.Tensor and type(p[0]) is oxmera.Tensor
    assert type(p.detach()) is oxmera.Tensor
    y.backward()
    expected = 2 * np.array([1.0, 2.0]) + np.cos([1.0, 2.0]) + 2 * np.array([1.0, 2.0])
    np.testing.assert_allclose(p.grad.numpy(), expected, rtol=1e-6)
    assert type(p.grad) is oxmera.Tensor


def test_numpy_functions_on_a_subclass():
    p = Parameter([[1.0, 2.0]])
    out = np.sum(np.exp(p), axis=1)
    assert type(out) is oxmera.Tensor and out.requires_grad


def test_attributes_on_instances():
    p = Parameter([1.0])
    p.name = "weight"
    p.lr_scale = 0.5
    assert p.__dict__ == {"name": "weight", "lr_scale": 0.5}
    with pytest.raises(AttributeError):
        oxmera.tensor([1.0]).name = "plain tensors have no __dict__"


def test_pickle_round_trips_the_subclass_and_its_attributes():
    p = Parameter([1.0, 2.0])
    p.name = "weight"
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is Parameter and q.requires_grad and q.name == "weight"
    assert q.tolist() == [1.0, 2.0]
    frozen = pickle.loads(pickle.dumps(Parameter([3.0], requires_grad=False)))
    assert type(frozen) is Parameter and not frozen.requires_grad


def test_copy_and_deepcopy_keep_the_subclass():
    p = Parameter([1.0, 2.0])
    p.name = "weight"
    p.meta = {"shared": [1]}
    (p * p).sum().backward()
    c = copy.copy(p)
    assert type(c) is Parameter and c.name == "weight" and c.meta is p.meta
    d = copy.deepcopy(p)
    assert type(d) is Parameter and d.name == "weight"
    assert d.meta == p.meta and d.meta is not p.meta
    assert d.grad.tolist() == [2.0, 4.0] and d.grad is not p.grad


def test_deepcopy_of_a_module_like_structure():
    weight = Parameter(np.ones((2, 2), np.float32))
    module = {"weight": weight, "tied": weight, "buffers": [oxmera.zeros(2)]}
    clone = copy.deepcopy(module)
    assert clone["weight"] is clone["tied"] and type(clone["weight"]) is Parameter
    clone["weight"].numpy(force=True)[0, 0] = 5.0
    assert weight.detach().numpy()[0, 0] == 1.0


def test_slots_and_custom_state_round_trip():
    s = Slotted([1.0])
    s.tag = "t"
    for clone in (pickle.loads(pickle.dumps(s)), copy.copy(s), copy.deepcopy(s)):
        assert type(clone) is Slotted and clone.tag == "t"
    c = CustomState([2.0])
    for clone in (pickle.loads(pickle.dumps(c)), copy.copy(c), copy.deepcopy(c)):
        assert type(clone) is CustomState and clone.restored == "from getstate"
        assert clone.tolist() == [2.0]


def test_subclass_requires_grad_rules_hold():
    # (a list of ints is float data to Tensor(...), as to torch.Tensor(...); an int64 array
    # keeps its dtype)
    with pytest.raises(RuntimeError, match="floating point"):
        Parameter(np.array([1, 2]))
