"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``,
``ParameterDict`` (PyTorch's semantics).

Their members are registered submodules under the keys ``"0"``, ``"1"``, ...
(``ModuleDict``: the given keys), so parameters, ``state_dict`` names and
the repr follow from ``Module``. Deleting from a ``Sequential`` or a
``ModuleList`` renumbers the rest, as in PyTorch.
"""
import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from itertools import chain, islice

from oxmera._core.autograd import Tensor
from oxmera.nn.modules.module import Module, _addindent
from oxmera.nn.parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _renumbered(modules):
    return {str(i): module for i, module in enumerate(modules.values())}


class Sequential(Module):
    """A chain of modules: calling it feeds the input through each in turn.

    Built from modules given in order (keys ``"0"``, ``"1"``, ...) or from
    one ``OrderedDict`` of named modules. Supports ``len``, iteration,
    indexing (a slice gives a ``Sequential``), item assignment and
    deletion, ``append``, ``insert``, ``extend``, ``pop`` and ``+``.

    Examples
    --------
    >>> import oxmera
    >>> from collections import OrderedDict
    >>> from oxmera import nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> model
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ReLU()
      (2): Linear(in_features=8, out_features=2, bias=True)
    )
    >>> model(oxmera.randn(3, 4)).shape
    oxmera.Size([3, 2])
    >>> model[:2]
    Sequential(
      (0): Linear(in_features=4, out_features=8, bias=True)
      (1): ReLU()
    )
    >>> len(model.append(nn.Softmax(dim=1)))
    4
    >>> nn.Sequential(OrderedDict([("conv", nn.Conv2d(1, 4, 3)), ("act", nn.ReLU())])).act
    ReLU()
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for index, module in enumerate(args):
                self.add_module(str(index), module)

    def _key_at(self, index):
        size = len(self)
        index = operator.index(index)
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of range for a Sequential of length {size}")
        return next(islice(self._modules, index % size, None))

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return self._modules[self._key_at(index)]

    def __setitem__(self, index, module):
        setattr(self, self._key_at(index), module)

    def __delitem__(self, index):
        if isinstance(index, slice):
            for key in list(self._modules)[index]:
                delattr(self, key)
        else:
            delattr(self, self._key_at(index))
        # Renumber, so that the keys stay 0..len-1.
        self._modules = _renumbered(self._modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other).__name__} is given.")
        combined = Sequential()
        for layer in chain(self, other):
            combined.append(layer)
        return combined

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other).__name__} is given.")
        return self.extend(other)

    def _check_factor(self, other):
        if not isinstance(other, int) or isinstance(other, bool):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and "
                            f"{type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other):
        # The same module objects repeated (shared parameters), as in PyTorch.
        self._check_factor(other)
        combined = Sequential()
        for _ in range(other):
            for module in self:
                combined.append(module)
        return combined

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        self._check_factor(other)
        originals = list(self)
        for _ in range(other - 1):
            for module in originals:
                self.append(module)
        return self

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, module):
        """Add ``module`` at the end; returns the Sequential.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.Sequential(nn.ReLU()).append(nn.Tanh())
        Sequential(
          (0): ReLU()
          (1): Tanh()
        )
        """
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``; returns the Sequential.

        Examples
        --------
        >>> from oxmera import nn
        >>> list(nn.Sequential(nn.ReLU(), nn.Tanh()).insert(1, nn.Sigmoid()))
        [ReLU(), Sigmoid(), Tanh()]
        """
        if not isinstance(module, Module):
            raise TypeError(f"Sequential.insert: expected a Module, got {type(module).__name__}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Sequential.insert: index {index} out of range for length {n}")
        if index < 0:
            index += n
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules = {str(i): m for i, m in enumerate(items)}
        return self

    def extend(self, sequential):
        """Append every module of ``sequential`` (any iterable of modules).

        Examples
        --------
        >>> from oxmera import nn
        >>> len(nn.Sequential(nn.ReLU()).extend([nn.Tanh(), nn.Sigmoid()]))
        3
        """
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key):
        """Remove and return the module at position ``key``.

        Examples
        --------
        >>> from oxmera import nn
        >>> model = nn.Sequential(nn.ReLU(), nn.Tanh())
        >>> model.pop(0), len(model)
        (ReLU(), 1)
        """
        module = self[key]
        del self[key]
        return module

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of submodules, registered (so their parameters are the list's).

    Supports indexing (a slice gives a ``ModuleList``), assignment,
    deletion, ``len``, iteration, ``append``, ``extend``, ``insert``, ``pop``,
    ``+`` and ``+=``. It has no ``forward``: iterate over it in yours.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
    >>> layers
    ModuleList(
      (0-2): 3 x Linear(in_features=4, out_features=4, bias=True)
    )
    >>> x = oxmera.randn(2, 4)
    >>> for layer in layers:
    ...     x = layer(x).relu()
    >>> len(list(layers.parameters()))
    6
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _absolute_key(self, index):
        index = operator.index(index)
        if not -len(self) <= index < len(self):
            raise IndexError(f"index {index} is out of range for a ModuleList of length "
                             f"{len(self)}")
        return str(index + len(self) if index < 0 else index)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])
        return self._modules[self._absolute_key(index)]

    def __setitem__(self, index, module):
        setattr(self, self._absolute_key(index), module)

    def __delitem__(self, index):
        if isinstance(index, slice):
            for k in range(len(self._modules))[index]:
                delattr(self, str(k))
        else:
            delattr(self, self._absolute_key(index))
        self._modules = _renumbered(self._modules)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def __repr__(self):
        # PyTorch's: runs of identical consecutive reprs print once, as "(i-j): n x ...".
        reprs = [repr(module) for module in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []                                  # [start, end, repr]
        for i, text in enumerate(reprs):
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, text])
        lines = []
        for start, end, text in blocks:
            if start == end:
                line = f"({start}): {text}"
            else:
                line = f"({start}-{end}): {end - start + 1} x {text}"
            lines.append(_addindent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def insert(self, index, module):
        """Insert ``module`` before position ``index``.

        Examples
        --------
        >>> from oxmera import nn
        >>> layers = nn.ModuleList([nn.ReLU()])
        >>> layers.insert(0, nn.Tanh())
        >>> list(layers)
        [Tanh(), ReLU()]
        """
        items = list(self._modules.values())
        items.insert(index, module)
        for item in items:
            if not isinstance(item, Module) and item is not None:
                raise TypeError(f"ModuleList.insert: {type(module).__name__} is not a Module "
                                f"subclass")
        self._modules = {str(i): m for i, m in enumerate(items)}

    def append(self, module):
        """Add ``module`` at the end; returns the list.

        Examples
        --------
        >>> from oxmera import nn
        >>> len(nn.ModuleList().append(nn.ReLU()))
        1
        """
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove and return the module at position ``key``.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.ModuleList([nn.ReLU(), nn.Tanh()]).pop(-1)
        Tanh()
        """
        module = self[key]
        del self[key]
        return module

    def extend(self, modules):
        """Append every module of the iterable ``modules``; returns the list.

        Examples
        --------
        >>> from oxmera import nn
        >>> len(nn.ModuleList([nn.ReLU()]).extend([nn.Tanh(), nn.Tanh()]))
        3
        """
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}")
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """A dict of submodules (insertion ordered), registered under their keys.

    Supports ``d[key]``, assignment, ``del``, ``len``, iteration over keys,
    ``in``, ``keys``, ``values``, ``items``, ``update``, ``pop``, ``clear``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})
    >>> acts["tanh"](oxmera.zeros(1))
    tensor([0.], dtype=float32)
    >>> list(acts)
    ['relu', 'tanh']
    >>> acts
    ModuleDict(
      (relu): ReLU()
      (tanh): Tanh()
    )
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module.

        Examples
        --------
        >>> from oxmera import nn
        >>> d = nn.ModuleDict({"a": nn.ReLU()})
        >>> d.clear()
        >>> len(d)
        0
        """
        self._modules.clear()

    def pop(self, key):
        """Remove the module under ``key`` and return it.

        Examples
        --------
        >>> from oxmera import nn
        >>> nn.ModuleDict({"a": nn.ReLU()}).pop("a")
        ReLU()
        """
        module = self[key]
        del self[key]
        return module

    def keys(self):
        """The keys, in insertion order.

        Examples
        --------
        >>> from oxmera import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()}).keys())
        ['a', 'b']
        """
        return self._modules.keys()

    def items(self):
        """``(key, module)`` pairs, in insertion order.

        Examples
        --------
        >>> from oxmera import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU()}).items())
        [('a', ReLU())]
        """
        return self._modules.items()

    def values(self):
        """The modules, in insertion order.

        Examples
        --------
        >>> from oxmera import nn
        >>> list(nn.ModuleDict({"a": nn.ReLU()}).values())
        [ReLU()]
        """
        return self._modules.values()

    def update(self, modules):
        """Add (or replace) modules from a mapping or an iterable of ``(key, module)`` pairs.

        Examples
        --------
        >>> from oxmera import nn
        >>> d = nn.ModuleDict()
        >>> d.update([("a", nn.ReLU()), ("b", nn.Tanh())])
        >>> list(d)
        ['a', 'b']
        """
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleDict.update should be called with an iterable of key/value "
                            f"pairs, but got {type(modules).__name__}")
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, item in enumerate(modules):
            if not isinstance(item, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; "
                                f"is {type(item).__name__}")
            item = tuple(item)
            if len(item) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(item)}; 2 is required")
            self[item[0]] = item[1]


def _as_parameter(value):
    """A tensor given to a ParameterList/Dict becomes a Parameter (as in PyTorch)."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _parameter_line(key, value):
    if isinstance(value, Tensor):
        dtype = {"float16": "HalfTensor", "float32": "FloatTensor",
                 "float64": "DoubleTensor"}.get(str(value.dtype), f"{value.dtype} tensor")
        kind = "Parameter containing" if isinstance(value, Parameter) else "Tensor"
        size = " x ".join(str(n) for n in value.shape) or "()"
        return f"({key}): {kind}: [oxmera.{dtype} of size {size}]"
    return f"({key}): Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of parameters, registered under ``"0"``, ``"1"``, ... (tensors given to it
    become Parameters; other objects are kept as they are, as in PyTorch).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> params = nn.ParameterList([nn.Parameter(oxmera.zeros(2)), oxmera.ones(3)])
    >>> [name for name, _ in params.named_parameters()]
    ['0', '1']
    >>> type(params[1]).__name__, len(params.append(oxmera.zeros(1)))
    ('Parameter', 3)
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _absolute(self, index):
        index = operator.index(index)
        if not -self._size <= index < self._size:
            raise IndexError(f"index {index} is out of range for a ParameterList of length "
                             f"{self._size}")
        return index + self._size if index < 0 else index

    def __getitem__(self, index):
        if isinstance(index, slice):
            return ParameterList([self[i] for i in range(self._size)[index]])
        return getattr(self, str(self._absolute(index)))

    def __setitem__(self, index, value):
        setattr(self, str(self._absolute(index)), _as_parameter(value))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def __iadd__(self, values):
        return self.extend(values)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value):
        """Add ``value`` at the end; returns the list."""
        setattr(self, str(self._size), _as_parameter(value))
        self._size += 1
        return self

    def extend(self, values):
        """Append every item of the iterable ``values``; returns the list."""
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(f"ParameterList.extend should be called with an iterable, but got "
                            f"{type(values).__name__}")
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(_parameter_line(i, value) for i, value in enumerate(self))


class ParameterDict(Module):
    """An ordered dict of parameters, registered under their keys (tensors given to it
    become Parameters).

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> params = nn.ParameterDict({"scale": oxmera.ones(2)})
    >>> params["shift"] = nn.Parameter(oxmera.zeros(2))
    >>> list(params.keys()), sorted(params.state_dict())
    (['scale', 'shift'], ['scale', 'shift'])
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return getattr(self, key) if key in self._keys else self._missing(key)

    def _missing(self, key):
        raise KeyError(key)

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings, got {type(key).__name__}")
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def __reversed__(self):
        return reversed(list(self._keys))

    def keys(self):
        """The keys, in order."""
        return self._keys.keys()

    def values(self):
        """The parameters, in key order."""
        return [self[k] for k in self._keys]

    def items(self):
        """``(key, parameter)`` pairs, in order."""
        return [(k, self[k]) for k in self._keys]

    def get(self, key, default=None):
        """The parameter under ``key``, or ``default``."""
        return self[key] if key in self._keys else default

    def pop(self, key):
        """Remove ``key`` and return its parameter."""
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Remove and return the last ``(key, parameter)`` pair."""
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def setdefault(self, key, default=None):
        """The parameter under ``key``, set to ``default`` first if missing."""
        if key not in self._keys:
            self[key] = default
        return self[key]

    def clear(self):
        """Remove every parameter."""
        for key in list(self._keys):
            del self[key]

    def update(self, parameters):
        """Add the pairs of a mapping or of an iterable of ``(key, value)``."""
        if isinstance(parameters, (Mapping, ParameterDict)):
            pairs = parameters.items()
        else:
            if not isinstance(parameters, Iterable):
                raise TypeError(f"ParametersDict.update should be called with an iterable of "
                                f"key/value pairs, but got {type(parameters).__name__}")
            pairs = parameters
        for pair in pairs:
            key, value = pair
            self[key] = value

    def copy(self):
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(self.items())

    def __or__(self, other):
        merged = self.copy()
        merged.update(other)
        return merged

    def extra_repr(self):
        return "\n".join(_parameter_line(k, v) for k, v in self.items())
