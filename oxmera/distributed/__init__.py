"""``oxmera.distributed``: PyTorch's ``torch.distributed`` on MPI.

Processes started by an MPI launcher (``mpiexec``, ``srun``, or
``python -m oxmera.distributed.run -n N script.py``) form the default process
group with ``init_process_group()``; the collectives work on tensors in
place. Needs the extra ``oxmera[distributed]`` (mpi4py and an MPI library);
without it this module still imports, ``is_available()`` answers False and
``init_process_group()`` raises an ImportError naming the extra.
``DistributedDataParallel`` is in ``oxmera.nn.parallel``; the differentiable
collectives are in ``oxmera.distributed.nn.functional``.
"""
# Not ``run``: importing it here would make ``python -m oxmera.distributed.run``
# find it imported already (runpy warns).
from oxmera.distributed import distributed_c10d, nn
from oxmera.distributed.distributed_c10d import *  # noqa: F401,F403
from oxmera.distributed.distributed_c10d import __all__ as _c10d_all

__all__ = [*_c10d_all, "distributed_c10d", "nn"]
