"""oxmera.Generator and the default generator: seeding, state round trips, threads."""
import threading

import numpy as np
import pytest

import oxmera


def test_same_seed_same_numbers_and_independent_generators():
    a = oxmera.Generator().manual_seed(5)
    b = oxmera.Generator().manual_seed(5)
    first = oxmera.rand(4, generator=a).tolist()
    oxmera.rand(100)                           # the default generator does not disturb them
    assert oxmera.rand(4, generator=b).tolist() == first
    assert a.initial_seed() == 5 and a.device == oxmera.device("cpu")


def test_negative_seeds_wrap_as_in_pytorch():
    assert oxmera.Generator().manual_seed(-1).initial_seed() == 2 ** 64 - 1
    with pytest.raises(RuntimeError, match="out of range"):
        oxmera.Generator().manual_seed(2 ** 64)


def test_state_round_trip():
    g = oxmera.Generator().manual_seed(11)
    oxmera.randn(3, generator=g)
    state = g.get_state()
    assert state.dtype == oxmera.uint8 and state.ndim == 1
    drawn = oxmera.randn(7, generator=g).tolist()
    other = oxmera.Generator().set_state(state)
    assert oxmera.randn(7, generator=other).tolist() == drawn
    assert other.initial_seed() == 11


def test_bad_states_are_refused_and_change_nothing():
    g = oxmera.Generator().manual_seed(1)
    before = g.get_state().tolist()
    with pytest.raises(TypeError, match="uint8"):
        g.set_state(oxmera.zeros(45))
    with pytest.raises(RuntimeError, match="45 bytes"):
        g.set_state(oxmera.zeros(3, dtype=oxmera.uint8))
    assert g.get_state().tolist() == before


def test_default_generator_functions():
    oxmera.manual_seed(3)
    assert oxmera.initial_seed() == 3
    state = oxmera.get_rng_state()
    a = oxmera.rand(3).tolist()
    oxmera.set_rng_state(state)
    assert oxmera.rand(3).tolist() == a
    s = oxmera.seed()
    assert oxmera.initial_seed() == s


def test_threads_with_their_own_generators_draw_the_same_numbers():
    results = {}

    def draw(k):
        g = oxmera.Generator().manual_seed(42)
        results[k] = [oxmera.rand(50, generator=g).numpy().copy() for _ in range(200)]

    threads = [threading.Thread(target=draw, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(1, 4):
        np.testing.assert_array_equal(np.array(results[k]), np.array(results[0]))


def test_only_the_cpu():
    with pytest.raises(RuntimeError, match="CPU"):
        oxmera.Generator(device="cuda")
    with pytest.raises(TypeError, match="oxmera.Generator"):
        oxmera.rand(2, generator=3)


def test_numpy_random_is_loaded_by_the_first_draw_with_the_default_seed():
    # import oxmera does not load numpy.random (6 MB): the default generator
    # holds its seed until a draw, which then draws what a seeded one does.
    import subprocess
    import sys
    code = ("import sys, numpy, oxmera\n"
            "assert 'numpy.random' not in sys.modules, 'numpy.random loaded by import'\n"
            "assert 'multiprocessing' not in sys.modules, 'multiprocessing loaded by import'\n"
            "assert oxmera.initial_seed() == 67280421310721\n"
            "first = oxmera.rand(3).tolist()\n"
            "assert 'numpy.random' in sys.modules\n"
            "again = oxmera.Generator().manual_seed(67280421310721)\n"
            "assert oxmera.rand(3, generator=again).tolist() == first, first\n"
            "state = oxmera.Generator().get_state()      # before any draw of its own\n"
            "g = oxmera.Generator().manual_seed(1).set_state(state)\n"
            "assert oxmera.rand(3, generator=g).tolist() == first\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
