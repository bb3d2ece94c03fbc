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
        # Rank 0 waits in the gradient all-reduce for 3 s, then fails, naming itself
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
