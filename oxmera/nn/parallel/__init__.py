"""``oxmera.nn.parallel``: PyTorch's data parallelism, on a machine without an accelerator.

PyTorch's ``DataParallel`` splits a batch over CUDA devices; when no
accelerator is available it simply runs the wrapped module (its
``device_ids`` become ``[]``). oxmera always computes on the CPU, so these
are exactly that case: a program written for ``nn.DataParallel`` runs
unchanged, its state dict keys carry the ``module.`` prefix as PyTorch's do,
and a checkpoint saved from either loads into the other.
``DistributedDataParallel`` (in ``distributed``) trains one copy of the
model per process of an ``oxmera.distributed`` process group.
"""
from oxmera.nn.modules.module import Module
from oxmera.nn.parallel.distributed import DistributedDataParallel

__all__ = ["DataParallel", "data_parallel", "DistributedDataParallel"]


class DataParallel(Module):
    """Run ``module`` on the batch; with no accelerator (always, in oxmera) that is all.

    ``device_ids``, ``output_device`` and ``dim`` are accepted for
    PyTorch's signature and have no effect, as in PyTorch without CUDA
    (``device_ids`` is then ``[]``). The wrapped module is ``.module``, so
    parameter and state-dict names start with ``module.``.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> model = nn.DataParallel(nn.Linear(3, 2))
    >>> model(oxmera.ones(4, 3)).shape
    oxmera.Size([4, 2])
    >>> list(model.state_dict())
    ['module.weight', 'module.bias']
    >>> model.device_ids
    []
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        self.module = module
        # PyTorch's value when no accelerator is available (it then ignores the
        # other arguments and sets nothing else).
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """``module(*inputs, **module_kwargs)``: the functional form of :class:`DataParallel`.

    ``inputs`` is a tuple of positional arguments (a single value is one
    argument; None is none). The device arguments have no effect, as in
    PyTorch without an accelerator.

    Examples
    --------
    >>> import oxmera
    >>> from oxmera import nn
    >>> layer = nn.Linear(3, 2)
    >>> x = oxmera.ones(4, 3)
    >>> bool((nn.parallel.data_parallel(layer, x) == layer(x)).all())
    True
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
