"""Collectives that autograd differentiates (``torch.distributed.nn.functional``).

Each returns new tensors (the inputs are untouched) and records one node
whose backward is itself a collective of this module, so higher-order
gradients work too: the VJP of ``all_reduce`` (SUM or AVG) is an
``all_reduce`` of the gradient, of ``broadcast`` a ``reduce`` to the source
(zero on the other ranks), of ``all_gather`` a ``reduce_scatter`` of the
gradients (SUM), of ``gather`` a ``scatter``, and the other way round.
Every rank must run the backward, as every rank ran the forward.
"""
import numpy as np

from oxmera._core import autograd as _core
from oxmera.autograd.function import Function
from oxmera.distributed import distributed_c10d as c10d
from oxmera.distributed.distributed_c10d import ReduceOp

__all__ = ["all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "gather",
           "scatter"]


def _group(group):
    pg = c10d._resolve(group, "oxmera.distributed.nn.functional")
    if pg is None:
        raise RuntimeError("oxmera.distributed.nn.functional: this rank is not a member of "
                           "the group")
    return pg


def _empty_like(tensor):
    return _core._wrap(np.zeros(tensor._data.shape, tensor._data.dtype))


def _clone(tensor):
    return _core._wrap(np.array(tensor._data, copy=True, order="C"))


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        out = _clone(tensor)
        c10d.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        if ctx.op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise RuntimeError(f"oxmera.distributed.nn.functional.all_reduce: the gradient of "
                               f"{ctx.op} is not implemented (only SUM and AVG)")
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad_output)


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        out = _clone(tensor)
        c10d.broadcast(out, src=src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        grad = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad_output)
        if c10d.get_rank() != ctx.src:
            grad = grad * 0         # only the source's value reached the outputs
        return None, None, grad


class _Reduce(Function):
    @staticmethod
    def forward(ctx, dst, op, group, tensor):
        ctx.dst, ctx.group = dst, group
        out = _clone(tensor)
        c10d.reduce(out, dst=dst, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, None, _Broadcast.apply(ctx.dst, ctx.group, grad_output)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        outs = [_empty_like(tensor) for _ in range(_group(group).size())]
        c10d.all_gather(outs, tensor, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return None, _ReduceScatter.apply(ReduceOp.SUM, ctx.group, *grad_outputs)


class _ReduceScatter(Function):
    @staticmethod
    def forward(ctx, op, group, *tensors):
        if op not in (ReduceOp.SUM, ReduceOp.AVG):
            raise RuntimeError(f"oxmera.distributed.nn.functional.reduce_scatter: only SUM and "
                               f"AVG are differentiable, got {op}")
        ctx.op, ctx.group = op, group
        out = _empty_like(tensors[0])
        c10d.reduce_scatter(out, list(tensors), op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        grads = _AllGather.apply(ctx.group, grad_output)
        if ctx.op is ReduceOp.AVG:
            grads = tuple(g / _group(ctx.group).size() for g in grads)
        return (None, None, *grads)


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        outs = [_empty_like(tensor) for _ in range(_group(group).size())]
        on_dst = c10d.get_rank() == dst
        c10d.gather(tensor, outs if on_dst else None, dst=dst, group=group)
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return None, None, _Scatter.apply(ctx.dst, ctx.group, *grad_outputs)


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        out = _empty_like(tensors[0])
        on_src = c10d.get_rank() == src
        c10d.scatter(out, list(tensors) if on_src else None, src=src, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, *_Gather.apply(ctx.src, ctx.group, grad_output))


def all_reduce(tensor, op=ReduceOp.SUM, group=None):
    """``tensor`` reduced over the group, as a new tensor that autograd differentiates.

    The gradient of a SUM (AVG) is the SUM (AVG) over the ranks of the
    gradients; other ops have no gradient here.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> from oxmera.distributed.nn.functional import all_reduce
    >>> dist.init_process_group("mpi")
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> y = all_reduce(x * x)
    >>> y.sum().backward()
    >>> x.grad                                    # 2x, summed over the one rank
    tensor([2., 4.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _group(group)
    return _AllReduce.apply(op, group, tensor)


def broadcast(tensor, src, group=None):
    """Rank ``src``'s ``tensor`` on every rank, as a new tensor that autograd differentiates.

    The gradient reaching ``src`` is the sum of every rank's; the other
    ranks' inputs get zero.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> from oxmera.distributed.nn.functional import broadcast
    >>> dist.init_process_group("mpi")
    >>> x = oxmera.tensor([3.0], requires_grad=True)
    >>> broadcast(x, src=0).sum().backward()
    >>> x.grad
    tensor([1.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _group(group)
    return _Broadcast.apply(src, group, tensor)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None):
    """``tensor`` reduced over the group on rank ``dst`` (the input elsewhere), differentiably.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> from oxmera.distributed.nn.functional import reduce
    >>> dist.init_process_group("mpi")
    >>> x = oxmera.tensor([3.0], requires_grad=True)
    >>> (reduce(x, dst=0) * 2).sum().backward()
    >>> x.grad
    tensor([2.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _group(group)
    return _Reduce.apply(dst, op, group, tensor)


def all_gather(tensor, group=None):
    """Every rank's ``tensor``, as a tuple (one per rank) that autograd differentiates.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> from oxmera.distributed.nn.functional import all_gather
    >>> dist.init_process_group("mpi")
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> parts = all_gather(x)
    >>> oxmera.stack(parts).sum().backward()
    >>> len(parts), x.grad
    (1, tensor([1., 1.], dtype=float32))
    >>> dist.destroy_process_group()
    """
    _group(group)
    return _AllGather.apply(group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None):
    """``input_list`` reduced over the group, rank ``i`` keeping entry ``i``, differentiably.

    ``output`` gives the result's shape and dtype and is not written (the
    result is a new tensor, as in PyTorch's functional form).

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> from oxmera.distributed.nn.functional import reduce_scatter
    >>> dist.init_process_group("mpi")
    >>> x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    >>> out = reduce_scatter(oxmera.zeros(2), [x * 3])
    >>> out.sum().backward()
    >>> out.detach(), x.grad
    (tensor([3., 6.], dtype=float32), tensor([3., 3.], dtype=float32))
    >>> dist.destroy_process_group()
    """
    _group(group)
    c10d._check_list("reduce_scatter", "input_list", input_list, _group(group).size())
    c10d._check_same("reduce_scatter", "input_list", input_list, output)
    return _ReduceScatter.apply(op, group, *input_list)


def gather(tensor, dst=0, group=None):
    """Every rank's ``tensor`` as a tuple on rank ``dst`` (zeros elsewhere), differentiably.

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> from oxmera.distributed.nn.functional import gather
    >>> dist.init_process_group("mpi")
    >>> x = oxmera.tensor([5.0], requires_grad=True)
    >>> parts = gather(x, dst=0)
    >>> (parts[0] * 4).sum().backward()
    >>> x.grad
    tensor([4.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _group(group)
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=None):
    """Entry ``i`` of rank ``src``'s ``tensors`` on rank ``i``, differentiably.

    Every rank passes a list of tensors of the same shapes (only ``src``'s
    values are sent).

    Examples
    --------
    >>> import oxmera, oxmera.distributed as dist
    >>> from oxmera.distributed.nn.functional import scatter
    >>> dist.init_process_group("mpi")
    >>> x = oxmera.tensor([5.0], requires_grad=True)
    >>> (scatter([x], src=0) * 3).sum().backward()
    >>> x.grad
    tensor([3.], dtype=float32)
    >>> dist.destroy_process_group()
    """
    _group(group)
    c10d._check_list("scatter", "tensors", tensors, _group(group).size())
    return _Scatter.apply(src, group, *tensors)
