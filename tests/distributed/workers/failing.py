"""A job in which one rank fails (run under mpiexec): the job must end, naming the rank.

``raise``: rank 1 raises in the middle of a DDP step, while the others wait in
the gradient all-reduce. ``hang``: rank 1 never joins an all_reduce; the
others time out (after 10 s: long enough for a loaded machine's healthy
collectives) instead of waiting forever.
"""
import datetime
import sys
import time

import oxmera
import oxmera.distributed as dist
from oxmera import nn
from oxmera.nn.parallel import DistributedDataParallel as DDP

mode = sys.argv[1]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=10))
rank = dist.get_rank()
model = DDP(nn.Linear(4, 2))
for step in range(5):
    loss = model(oxmera.ones(3, 4)).sum()
    if step == 2 and rank == 1:
        if mode == "raise":
            raise ValueError("rank 1 gives up in step 2")
        time.sleep(120)
    loss.backward()
print(f"rank {rank} finished", flush=True)
