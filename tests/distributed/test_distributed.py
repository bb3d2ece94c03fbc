"""oxmera.distributed in jobs of 2 and 4 processes on this machine (loopback).

Each test starts a job with ``python -m oxmera.distributed.run`` (so the
launcher is tested too) running a script of ``workers/`` that checks itself
against NumPy or a single-process reference and prints a line per rank.
Skipped when mpi4py or mpiexec is missing (the extra ``oxmera[distributed]``,
which the test extra includes).
"""
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

import oxmera
import oxmera.distributed as dist
from oxmera.distributed.run import find_mpiexec, main

WORKERS = pathlib.Path(__file__).resolve().parent / "workers"
needs_mpi = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or find_mpiexec() is None,
    reason="mpi4py or mpiexec is missing (pip install 'oxmera[distributed]')")


def launch(nproc, script, *args, timeout=240):
    command = [sys.executable, "-m", "oxmera.distributed.run", "-n", str(nproc),
               str(WORKERS / script), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def check(result, line, nproc):
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for rank in range(nproc):
        assert f"{line} {rank}" in result.stdout, output


@needs_mpi
@pytest.mark.parametrize("nproc", [2, 4])
def test_collectives_match_numpy(nproc):
    check(launch(nproc, "collectives.py"), "collectives OK", nproc)


@needs_mpi
def test_ddp_matches_one_process_on_the_whole_batch():
    # 20 steps equal at every step to 1e-12; no_sync; find_unused_parameters;
    # broadcast_buffers; mismatched models.
    check(launch(2, "ddp.py"), "ddp OK", 2)


@needs_mpi
def test_ddp_on_four_ranks():
    check(launch(4, "ddp.py"), "ddp OK", 4)


@needs_mpi
@pytest.mark.parametrize("mode", ["raise", "hang"])
def test_a_failing_rank_ends_the_job_naming_it(mode):
    result = launch(2, "failing.py", mode, timeout=90)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "finished" not in result.stdout, output
    if mode == "raise":
        assert "rank 1 (of 2) failed with ValueError: rank 1 gives up in step 2" in output
    else:
        # Rank 0 waits in the gradient all-reduce for 10 s, then fails, naming itself
        # and the collective, and the job ends (long before rank 1's sleep would).
        assert "timed out" in output and "rank 0 (of 2) failed" in output, output


def test_without_mpi4py_import_works_and_init_names_the_extra():
    # A fresh interpreter in which mpi4py cannot be imported.
    code = (
        "import sys; sys.modules['mpi4py'] = None\n"
        "import importlib.util as u; u.find_spec = lambda name, *a: None\n"
        "import oxmera.distributed as dist\n"
        "assert not dist.is_available() and not dist.is_initialized()\n"
        "try:\n"
        "    dist.init_process_group('mpi')\n"
        "except ImportError as err:\n"
        "    assert 'oxmera[distributed]' in str(err), err\n"
        "    print('ImportError names the extra')\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert "ImportError names the extra" in result.stdout, result.stdout + result.stderr


def test_errors_before_initialization():
    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="init_process_group"):
        dist.get_rank()
    with pytest.raises(ValueError, match="init_process_group"):
        dist.all_reduce(oxmera.ones(2))
    with pytest.raises(ValueError, match="nccl"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="init_method"):
        dist.init_process_group("mpi", init_method="tcp://127.0.0.1:23456")
    with pytest.raises(ValueError, match="twice|not been"):
        oxmera.nn.parallel.DistributedDataParallel(oxmera.nn.Linear(2, 2))
    assert not dist.is_initialized()


def test_launcher_refuses_several_nodes():
    with pytest.raises(ValueError, match="srun"):
        main(["--nnodes", "2", "train.py"])


@needs_mpi
def test_launcher_passes_arguments_and_exit_status(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "import os, sys\n"
        "import oxmera.distributed as dist\n"
        "dist.init_process_group()\n"
        "print('rank', dist.get_rank(), os.environ['RANK'], os.environ['WORLD_SIZE'],\n"
        "      os.environ['LOCAL_RANK'], sys.argv[1:])\n"
        "dist.destroy_process_group()\n"
        "sys.exit(3)\n")
    result = subprocess.run([sys.executable, "-m", "oxmera.distributed.run", "-n", "2",
                             str(script), "--lr", "0.1"], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 3, result.stdout + result.stderr
    for rank in range(2):
        assert f"rank {rank} {rank} 2 {rank} ['--lr', '0.1']" in result.stdout, result.stdout


@needs_mpi
def test_scripts_run_directly_under_mpiexec():
    from oxmera.distributed.run import mpiexec_command
    command, env = mpiexec_command(2, [str(WORKERS / "collectives.py")])
    # The script's folder comes first on sys.path, not the one oxmera was imported from.
    package_root = os.path.dirname(os.path.dirname(oxmera.__file__))
    env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH")])])
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    check(result, "collectives OK", 2)


@pytest.fixture
def world_of_one():
    # The pytest process itself, started without mpiexec, is a job of one process.
    dist.init_process_group("mpi")
    try:
        yield dist.group.WORLD
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


needs_mpi4py = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None,
                                  reason="mpi4py is missing (pip install 'oxmera[distributed]')")


@needs_mpi4py
def test_bad_arguments_are_refused_and_change_nothing(world_of_one):
    t = oxmera.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="twice"):
        dist.init_process_group("mpi")
    with pytest.raises(TypeError, match="all_reduce: tensor must be a Tensor"):
        dist.all_reduce([1.0, 2.0])
    with pytest.raises(TypeError, match="ReduceOp"):
        dist.all_reduce(t, op="sum")
    with pytest.raises(ValueError, match="src=3 is not a rank of the group"):
        dist.broadcast(t, src=3)
    with pytest.raises(RuntimeError, match="BAND needs an integer"):
        dist.all_reduce(t, op=dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="read-only or broadcast view"):
        dist.all_reduce(oxmera.ones(1).expand(3))
    with pytest.raises(ValueError, match="ranks must be distinct ranks"):
        dist.new_group([0, 0])
    with pytest.raises(TypeError, match="async_op"):
        dist.barrier(async_op=1)
    assert t.tolist() == [1.0, 2.0] and t._version == 0


@needs_mpi4py
def test_integer_reductions_and_bitwise_ops(world_of_one):
    t = oxmera.tensor([6, 3], dtype=oxmera.int32)
    for op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR, dist.ReduceOp.PRODUCT):
        dist.all_reduce(t, op=op)
    assert t.tolist() == [6, 3]


@needs_mpi4py
def test_environment_variables_must_agree_with_mpi(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "4")
    with pytest.raises(ValueError, match="WORLD_SIZE is 4 but the MPI launcher says 1"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()
    monkeypatch.setenv("WORLD_SIZE", "1")
    monkeypatch.setenv("RANK", "0")
    dist.init_process_group("gloo", init_method="env://")
    try:
        assert dist.get_backend() == "mpi" and dist.get_world_size() == 1
    finally:
        dist.destroy_process_group()


@needs_mpi4py
def test_a_wait_with_no_partner_times_out(world_of_one):
    import datetime
    work = dist.irecv(oxmera.zeros(1), src=0, tag=7)        # nobody sends
    with pytest.raises(RuntimeError, match="irecv on rank 0 timed out"):
        work.wait(timeout=datetime.timedelta(seconds=0.2))
    assert not work.is_completed()
    dist.send(oxmera.ones(1), dst=0, tag=7)                  # let it finish cleanly
    assert work.wait()


@needs_mpi4py
def test_uncaught_exceptions_abort_only_while_initialized(world_of_one):
    import sys
    assert sys.excepthook is dist.distributed_c10d._abort_job
    dist.destroy_process_group()
    assert sys.excepthook is not dist.distributed_c10d._abort_job
