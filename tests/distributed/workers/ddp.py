"""DistributedDataParallel against one process on the whole batch (run under mpiexec).

Every rank also trains the single-process reference on the concatenated
batch, so it can compare its DDP parameters at every step (float64, 1e-12).
Prints "ddp OK <rank>" at the end.
"""
import datetime

import numpy as np

import oxmera
import oxmera.distributed as dist
from oxmera import nn
from oxmera.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=60))
rank, size = dist.get_rank(), dist.get_world_size()
oxmera.set_default_dtype(oxmera.float64)
PER_RANK = 4


def mlp(seed):
    oxmera.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 3))


def batch(step, seed=0):
    rng = np.random.default_rng(1000 * seed + step)
    return (oxmera.from_numpy(rng.normal(size=(PER_RANK * size, 5))),
            oxmera.from_numpy(rng.normal(size=(PER_RANK * size, 3))))


def mine(t):
    return t[rank * PER_RANK:(rank + 1) * PER_RANK]


def max_difference(a, b):
    return max(float(np.abs(p.detach().numpy() - q.detach().numpy()).max())
               for p, q in zip(a.parameters(), b.parameters()))


# 1. Twenty steps equal to one process on the concatenated batch. Each rank starts
#    from its own random parameters: DDP takes rank 0's. A small bucket cap makes
#    several buckets.
model = DDP(mlp(seed=rank), bucket_cap_mb=0.002)
assert len(model.reducer.buckets) > 1
reference = mlp(seed=0)
assert max_difference(model.module, reference) == 0.0
optimizer = oxmera.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
reference_optimizer = oxmera.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
for step in range(20):
    x, y = batch(step)
    optimizer.zero_grad()
    nn.functional.mse_loss(model(mine(x)), mine(y)).backward()
    optimizer.step()
    reference_optimizer.zero_grad()
    nn.functional.mse_loss(reference(x), y).backward()
    reference_optimizer.step()
    difference = max_difference(model.module, reference)
    assert difference <= 1e-12, f"step {step}: parameters differ by {difference}"
assert list(model.state_dict())[0] == "module.0.weight"
assert all(k.startswith("module.") for k in model.state_dict())

# 2. no_sync: local accumulation (the unsynchronized sum), then the synchronized step
#    averages the accumulated sums over the ranks.
model = DDP(mlp(seed=3))
local = mlp(seed=3)
local.load_state_dict(model.module.state_dict())
micro = [batch(step, seed=7) for step in range(3)]
with model.no_sync():
    for x, y in micro[:2]:
        nn.functional.mse_loss(model(mine(x)), mine(y)).backward()
for x, y in micro[:2]:
    nn.functional.mse_loss(local(mine(x)), mine(y)).backward()
for p, q in zip(model.module.parameters(), local.parameters()):
    assert np.array_equal(p.grad.numpy(), q.grad.numpy()), "no_sync communicated"
x, y = micro[2]
nn.functional.mse_loss(model(mine(x)), mine(y)).backward()
# The reference: every rank's three micro-batch gradients, summed, then averaged.
sums = []
for r in range(size):
    replica = mlp(seed=3)
    replica.load_state_dict(local.state_dict())
    for xb, yb in micro:
        part = slice(r * PER_RANK, (r + 1) * PER_RANK)
        nn.functional.mse_loss(replica(xb[part]), yb[part]).backward()
    sums.append([p.grad.numpy() for p in replica.parameters()])
for i, p in enumerate(model.module.parameters()):
    want = np.mean([s[i] for s in sums], axis=0)
    assert np.abs(p.grad.numpy() - want).max() <= 1e-12, f"no_sync then sync: parameter {i}"


# 3. find_unused_parameters: a branch only rank 0 uses gets the average (zero elsewhere).
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(2, 2)
        self.branch = nn.Linear(2, 2)

    def forward(self, x, use_branch):
        if use_branch is None:
            return x
        h = self.trunk(x)
        return self.branch(h) if use_branch else h


oxmera.manual_seed(0)
model = DDP(Branchy(), find_unused_parameters=True)
out = model(oxmera.ones(1, 2), use_branch=(rank == 0))
out.sum().backward()
replica = Branchy()
replica.load_state_dict(model.module.state_dict())
replica(oxmera.ones(1, 2), use_branch=True).sum().backward()
want = replica.branch.weight.grad.numpy() / size
assert np.abs(model.module.branch.weight.grad.numpy() - want).max() <= 1e-12
assert model.module.trunk.weight.grad is not None
# A rank whose forward uses no parameter at all still takes part in the step.
model = DDP(Branchy(), find_unused_parameters=True)
if rank == 0:
    model(oxmera.ones(1, 2), use_branch=True).sum().backward()
else:
    model(oxmera.ones(1, 2), use_branch=None)     # returns its input: no parameter used
replica = Branchy()
replica.load_state_dict(model.module.state_dict())
replica(oxmera.ones(1, 2), use_branch=True).sum().backward()
want = replica.branch.bias.grad.numpy() / size
assert np.abs(model.module.branch.bias.grad.numpy() - want).max() <= 1e-12
# Without find_unused_parameters, a step that skips a parameter is reported by the next one.
model = DDP(Branchy())
model(oxmera.ones(1, 2), use_branch=False).sum().backward()
try:
    model(oxmera.ones(1, 2), use_branch=False)
except RuntimeError as err:
    assert "find_unused_parameters=True" in str(err) and "branch.weight" in str(err), err
else:
    raise AssertionError("an unused parameter went unnoticed")


# 4. broadcast_buffers: the forward sees rank 0's buffer.
class Shifted(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(oxmera.ones(1))
        self.register_buffer("shift", oxmera.zeros(1))

    def forward(self, x):
        return x * self.scale + self.shift


model = DDP(Shifted())
model.module.shift.fill_(float(rank + 5))
assert model(oxmera.zeros(1)).item() == 5.0
model = DDP(Shifted(), broadcast_buffers=False)
model.module.shift.fill_(float(rank + 5))
assert model(oxmera.zeros(1)).item() == rank + 5.0

# 5. Different models on different ranks: the error names the parameter, on every rank.
try:
    DDP(nn.Linear(3, 2 if rank == 0 else 4))
except RuntimeError as err:
    assert "'weight'" in str(err) and "rank" in str(err), err
else:
    raise AssertionError("mismatched models went unnoticed")

# Arguments oxmera does not support are refused by name, not ignored.
for bad in (dict(gradient_as_bucket_view=True), dict(device_ids=[0]), dict(mixed_precision=1)):
    try:
        DDP(nn.Linear(2, 2), **bad)
    except ValueError as err:
        assert next(iter(bad)) in str(err), err
    else:
        raise AssertionError(f"DDP accepted {bad}")

# 6. DistributedSampler takes its replica from the default process group.
sampler = oxmera.utils.data.DistributedSampler(range(10), shuffle=False)
assert (sampler.num_replicas, sampler.rank) == (size, rank)
indices = list(range(10))
indices += indices[:(-10) % size]          # padded with the first indices: 10 -> 12 on 4
assert list(sampler) == indices[rank::size]
dist.destroy_process_group()
print(f"ddp OK {rank}", flush=True)
