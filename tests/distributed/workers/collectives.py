"""Every collective of oxmera.distributed against a NumPy reference (run under mpiexec).

Each rank's data is a function of its rank alone, so every rank can compute
what every collective must give. Prints "collectives OK <rank>" at the end.
"""
import datetime

import numpy as np

import oxmera
import oxmera.distributed as dist
from oxmera.distributed.nn import functional as dF

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=60))
rank, size = dist.get_rank(), dist.get_world_size()
ReduceOp = dist.ReduceOp


def data(r, shape=(3, 4), dtype=np.float64):
    values = np.random.default_rng(100 + r).uniform(0.5, 2.0, size=shape)
    if np.issubdtype(dtype, np.integer):
        values = np.round(values * 3)
    return values.astype(dtype)


def close(got, want, what):
    got = got.numpy() if isinstance(got, oxmera.Tensor) else got
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    # float32 and float16 sums depend on MPI's order of summation.
    tol = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-5}.get(want.dtype, 1e-12)
    assert np.allclose(got, want, rtol=tol, atol=tol) and got.shape == want.shape, (
        f"rank {rank}: {what}: got {got}, want {want}")


everyone = [data(r) for r in range(size)]
references = {ReduceOp.SUM: np.sum, ReduceOp.AVG: np.mean, ReduceOp.MAX: np.max,
              ReduceOp.MIN: np.min, ReduceOp.PRODUCT: np.prod}

# all_reduce: each op, several dtypes, in place (the same tensor object, version bumped).
for dtype in (np.float64, np.float32, np.float16, np.int64, np.int32):
    for op, reference in references.items():
        if op is ReduceOp.AVG and np.issubdtype(dtype, np.integer):
            continue
        t = oxmera.from_numpy(data(rank, dtype=dtype))
        array, version = t.numpy(), t._version
        dist.all_reduce(t, op=op)
        want = reference(np.stack([data(r, dtype=dtype) for r in range(size)]), axis=0)
        close(t, want.astype(dtype), f"all_reduce {op} {dtype}")
        assert t._version > version
        if dtype != np.float16:
            assert t.numpy() is array or np.shares_memory(t.numpy(), array), "copied"

# A non-contiguous view: written back through the view, the rest untouched.
base = oxmera.from_numpy(np.zeros((4, 3)))
view = base.T
view.copy_(oxmera.from_numpy(data(rank)))
dist.all_reduce(view, op=ReduceOp.SUM)
close(base.T.contiguous(), np.sum(everyone, axis=0), "all_reduce non-contiguous")

# A 0-d tensor, and bool (SUM is a logical or).
t = oxmera.tensor(float(rank + 1), dtype=oxmera.float64)
dist.all_reduce(t)
close(t, np.array(size * (size + 1) / 2), "all_reduce 0-d")
flags = oxmera.tensor([rank == 0, False, True])
dist.all_reduce(flags, op=ReduceOp.SUM)
assert flags.tolist() == [True, False, True], flags
flags = oxmera.tensor([rank == 0, True])
dist.all_reduce(flags, op=ReduceOp.MIN)
assert flags.tolist() == [size == 1, True], flags

# async_op: the work handle.
t = oxmera.from_numpy(data(rank))
work = dist.all_reduce(t, op=ReduceOp.MAX, async_op=True)
assert work.wait() is True and work.is_completed()
close(t, np.max(everyone, axis=0), "async all_reduce")
assert work.result()[0] is t

# broadcast from every source.
for src in range(size):
    t = oxmera.from_numpy(data(rank))
    dist.broadcast(t, src=src)
    close(t, everyone[src], f"broadcast src={src}")
    ints = oxmera.from_numpy(data(rank, dtype=np.int32))
    dist.broadcast(ints, src=src, async_op=True).wait()
    close(ints, data(src, dtype=np.int32), "broadcast int32")

# reduce to every destination: the others keep their tensor.
for dst in range(size):
    t = oxmera.from_numpy(data(rank))
    dist.reduce(t, dst=dst, op=ReduceOp.SUM)
    close(t, np.sum(everyone, axis=0) if rank == dst else everyone[rank], f"reduce dst={dst}")

# all_gather and all_gather_into_tensor (concatenated and stacked).
out = [oxmera.zeros(3, 4, dtype=oxmera.float64) for _ in range(size)]
dist.all_gather(out, oxmera.from_numpy(data(rank)))
for r in range(size):
    close(out[r], everyone[r], f"all_gather [{r}]")
cat = oxmera.zeros(3 * size, 4, dtype=oxmera.float64)
dist.all_gather_into_tensor(cat, oxmera.from_numpy(data(rank)))
close(cat, np.concatenate(everyone), "all_gather_into_tensor concatenated")
stacked = oxmera.zeros(size, 3, 4, dtype=oxmera.float64)
dist.all_gather_into_tensor(stacked, oxmera.from_numpy(data(rank)), async_op=True).wait()
close(stacked, np.stack(everyone), "all_gather_into_tensor stacked")

# reduce_scatter_tensor and reduce_scatter.
big = [data(r, shape=(2 * size, 3)) for r in range(size)]
out = oxmera.zeros(2, 3, dtype=oxmera.float64)
dist.reduce_scatter_tensor(out, oxmera.from_numpy(big[rank]), op=ReduceOp.SUM)
close(out, np.sum(big, axis=0)[2 * rank:2 * rank + 2], "reduce_scatter_tensor")
dist.reduce_scatter_tensor(out, oxmera.from_numpy(big[rank]), op=ReduceOp.AVG)
close(out, np.mean(big, axis=0)[2 * rank:2 * rank + 2], "reduce_scatter_tensor AVG")
pieces = [oxmera.from_numpy(big[rank][2 * i:2 * i + 2].copy()) for i in range(size)]
dist.reduce_scatter(out, pieces, op=ReduceOp.MAX)
close(out, np.max(big, axis=0)[2 * rank:2 * rank + 2], "reduce_scatter MAX")

# gather and scatter, every root.
for root in range(size):
    bucket = [oxmera.zeros(3, 4, dtype=oxmera.float64) for _ in range(size)]
    dist.gather(oxmera.from_numpy(data(rank)), bucket if rank == root else None, dst=root)
    if rank == root:
        for r in range(size):
            close(bucket[r], everyone[r], f"gather [{r}]")
    t = oxmera.zeros(3, 4, dtype=oxmera.float64)
    parts = [oxmera.from_numpy(data(10 * root + r)) for r in range(size)]
    dist.scatter(t, parts if rank == root else None, src=root)
    close(t, data(10 * root + rank), f"scatter src={root}")

# Point to point: a ring, blocking and not; recv from any source names the sender.
right, left = (rank + 1) % size, (rank - 1) % size
t = oxmera.zeros(3, 4, dtype=oxmera.float64)
sending = dist.isend(oxmera.from_numpy(data(rank)), dst=right)
receiving = dist.irecv(t, src=left)
receiving.wait()
sending.wait()
close(t, everyone[left], "isend/irecv ring")
if rank == 0:
    for _ in range(size - 1):
        t = oxmera.zeros(3, 4, dtype=oxmera.float64)
        sender = dist.recv(t)
        close(t, everyone[sender], f"recv from {sender}")
else:
    dist.send(oxmera.from_numpy(data(rank)), dst=0)

# Objects.
seen = [None] * size
dist.all_gather_object(seen, {"rank": rank, "payload": "x" * rank})
assert seen == [{"rank": r, "payload": "x" * r} for r in range(size)], seen
objects = [("config", rank), [rank] * 3] if rank == size - 1 else [None, None]
dist.broadcast_object_list(objects, src=size - 1)
assert objects == [("config", size - 1), [size - 1] * 3], objects
gathered = [None] * size if rank == 0 else None
dist.gather_object(rank * 10, gathered, dst=0)
assert rank != 0 or gathered == [r * 10 for r in range(size)], gathered

# A group of some ranks: ranks outside it get NON_GROUP_MEMBER and -1.
evens = dist.new_group([r for r in range(size) if r % 2 == 0])
if rank % 2 == 0:
    t = oxmera.from_numpy(data(rank))
    dist.all_reduce(t, group=evens)
    close(t, np.sum([everyone[r] for r in range(0, size, 2)], axis=0), "group all_reduce")
    assert dist.get_world_size(evens) == (size + 1) // 2
    assert dist.get_rank(evens) == rank // 2
    # src is a rank of the world
    t = oxmera.from_numpy(data(rank))
    dist.broadcast(t, src=size - 1 - (size - 1) % 2, group=evens)
    close(t, everyone[size - 1 - (size - 1) % 2], "group broadcast")
else:
    assert evens is dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(evens) == -1
dist.barrier()

# Differentiable collectives: the VJP of all_reduce SUM is all_reduce SUM of the gradients.
c = np.arange(1.0, 13.0).reshape(3, 4) * (rank + 1)
x = oxmera.from_numpy(data(rank)).requires_grad_()
y = dF.all_reduce(x * oxmera.from_numpy(c))
close(y.detach(), np.sum([everyone[r] * c / (rank + 1) * (r + 1) for r in range(size)], axis=0),
      "functional all_reduce forward")
weights = [data(50 + r) for r in range(size)]
(y * oxmera.from_numpy(weights[rank])).sum().backward()
close(x.grad, c * np.sum(weights, axis=0), "functional all_reduce backward")
assert x.grad is not None and y.grad_fn is not None
# all_gather: rank r's input gets the sum over ranks of the gradient of slot r.
x = oxmera.from_numpy(data(rank)).requires_grad_()
parts = dF.all_gather(x)
loss = sum((p * oxmera.from_numpy(data(200 + 10 * rank + i))).sum() for i, p in enumerate(parts))
loss.backward()
close(x.grad, np.sum([data(200 + 10 * r + rank) for r in range(size)], axis=0),
      "functional all_gather backward")
# broadcast: the source gets every rank's gradient, the others zero.
x = oxmera.from_numpy(data(rank)).requires_grad_()
(dF.broadcast(x, src=0) * oxmera.from_numpy(weights[rank])).sum().backward()
close(x.grad, np.sum(weights, axis=0) if rank == 0 else np.zeros((3, 4)),
      "functional broadcast backward")

# reduce: the gradient is the destination's gradient, broadcast to every rank.
x = oxmera.from_numpy(data(rank)).requires_grad_()
(dF.reduce(x, dst=size - 1) * oxmera.from_numpy(weights[rank])).sum().backward()
close(x.grad, weights[size - 1], "functional reduce backward")
# reduce_scatter: rank r's input list entry i gets the gradient of rank i's output.
x = oxmera.from_numpy(data(rank, shape=(size, 3))).requires_grad_()
out = dF.reduce_scatter(oxmera.zeros(3, dtype=oxmera.float64), list(x.unbind(0)))
close(out.detach(), np.sum([data(r, shape=(size, 3)) for r in range(size)], axis=0)[rank],
      "functional reduce_scatter forward")
(out * oxmera.from_numpy(data(300 + rank, shape=(3,)))).sum().backward()
close(x.grad, np.stack([data(300 + i, shape=(3,)) for i in range(size)]),
      "functional reduce_scatter backward")
# gather / scatter: each other's adjoint.
x = oxmera.from_numpy(data(rank)).requires_grad_()
parts = dF.gather(x, dst=0)
if rank == 0:
    for r in range(size):
        close(parts[r].detach(), everyone[r], f"functional gather [{r}]")
sum((p * oxmera.from_numpy(data(400 + i))).sum() for i, p in enumerate(parts)).backward()
# Only rank 0's outputs carry the values; their gradients go back to each rank's input.
close(x.grad, data(400 + rank), "functional gather backward")
xs = [oxmera.from_numpy(data(500 + 10 * rank + i)).requires_grad_() for i in range(size)]
got = dF.scatter(xs, src=0)
close(got.detach(), data(500 + rank), "functional scatter forward")
(got * oxmera.from_numpy(weights[rank])).sum().backward()
for i in range(size):
    want = weights[i] if rank == 0 else np.zeros((3, 4))
    close(xs[i].grad, want, f"functional scatter backward [{i}]")
# Second order: all_reduce's backward is itself differentiable.
x = oxmera.from_numpy(data(rank)).requires_grad_()
(g,) = oxmera.autograd.grad(dF.all_reduce(x * x).sum(), x, create_graph=True)
close(g.detach(), 2 * everyone[rank] * size, "functional all_reduce first order")
(h,) = oxmera.autograd.grad(g.sum(), x)
close(h, np.full((3, 4), 2.0 * size), "functional all_reduce second order")

# Errors: a list of the wrong length, a wrong shape; nothing was sent, so the ranks stay in step.
for bad in ([oxmera.zeros(3, 4, dtype=oxmera.float64)] * (size + 1),
            [oxmera.zeros(2, 2, dtype=oxmera.float64)] * size):
    try:
        dist.all_gather(bad, oxmera.from_numpy(data(rank)))
    except ValueError as err:
        assert "all_gather" in str(err), err
    else:
        raise AssertionError("all_gather took a bad list")
try:
    dist.all_reduce(oxmera.from_numpy(data(rank, dtype=np.int64)), op=ReduceOp.AVG)
except RuntimeError as err:
    assert "AVG" in str(err)
else:
    raise AssertionError("AVG of integers")
dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"collectives OK {rank}", flush=True)
