"""Grad mode (SPEC §4): no_grad, enable_grad, set_grad_enabled, inference_mode."""
import threading

import pytest

import oxmera
from oxmera import autograd

MANAGERS = {
    "no_grad": (oxmera.no_grad, False),
    "enable_grad": (oxmera.enable_grad, True),
    "set_grad_enabled_false": (lambda: oxmera.set_grad_enabled(False), False),
    "set_grad_enabled_true": (lambda: oxmera.set_grad_enabled(True), True),
    "inference_mode": (oxmera.inference_mode, False),
}


def records():
    x = oxmera.ones(2, requires_grad=True)
    return (x * 2).requires_grad


def test_public_names():
    for name in ("no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
                 "is_grad_enabled"):
        assert getattr(oxmera, name) is getattr(autograd, name)


def test_default_is_enabled():
    assert oxmera.is_grad_enabled() is True
    assert records()


@pytest.mark.parametrize("outer", [True, False])
@pytest.mark.parametrize("name", MANAGERS)
def test_context_manager_sets_and_restores(name, outer):
    make, mode = MANAGERS[name]
    with oxmera.set_grad_enabled(outer):
        with make():
            assert oxmera.is_grad_enabled() is mode
            assert records() is mode
        assert oxmera.is_grad_enabled() is outer
    assert oxmera.is_grad_enabled()


@pytest.mark.parametrize("outer", [True, False])
@pytest.mark.parametrize("name", MANAGERS)
def test_restores_on_exception(name, outer):
    make, mode = MANAGERS[name]
    with oxmera.set_grad_enabled(outer):
        with pytest.raises(KeyError):
            with make():
                assert oxmera.is_grad_enabled() is mode
                raise KeyError("boom")
        assert oxmera.is_grad_enabled() is outer


@pytest.mark.parametrize("outer", [True, False])
@pytest.mark.parametrize("name", MANAGERS)
def test_function_decorator(name, outer):
    make, mode = MANAGERS[name]

    @make()
    def f(a, b=1):
        """Docstring."""
        return oxmera.is_grad_enabled(), records(), a + b

    assert f.__name__ == "f" and f.__doc__ == "Docstring."
    with oxmera.set_grad_enabled(outer):
        assert f(1, b=2) == (mode, mode, 3)
        assert oxmera.is_grad_enabled() is outer      # decorating and calling leak nothing


@pytest.mark.parametrize("name", MANAGERS)
def test_function_decorator_restores_on_exception(name):
    make, mode = MANAGERS[name]

    @make()
    def f():
        raise ValueError(oxmera.is_grad_enabled())

    for outer in (True, False):
        with oxmera.set_grad_enabled(outer):
            with pytest.raises(ValueError) as info:
                f()
            assert info.value.args == (mode,)
            assert oxmera.is_grad_enabled() is outer


@pytest.mark.parametrize("outer", [True, False])
@pytest.mark.parametrize("name", MANAGERS)
def test_generator_decorator_does_not_leak_between_yields(name, outer):
    make, mode = MANAGERS[name]

    @make()
    def gen(n):
        received = []
        for _ in range(n):
            value = yield (oxmera.is_grad_enabled(), records())
            received.append((value, oxmera.is_grad_enabled()))
        return received

    with oxmera.set_grad_enabled(outer):
        g = gen(3)
        assert oxmera.is_grad_enabled() is outer      # creating runs nothing
        assert next(g) == (mode, mode)
        assert oxmera.is_grad_enabled() is outer      # not leaked to the caller
        with oxmera.set_grad_enabled(not outer):      # the caller's mode changes meanwhile
            assert g.send("a") == (mode, mode)
            assert oxmera.is_grad_enabled() is (not outer)
        assert g.send("b") == (mode, mode)
        with pytest.raises(StopIteration) as stop:
            g.send("c")
        assert stop.value.value == [("a", mode), ("b", mode), ("c", mode)]
        assert oxmera.is_grad_enabled() is outer


@pytest.mark.parametrize("name", MANAGERS)
def test_generator_decorator_throw_close_and_yield_from(name):
    make, mode = MANAGERS[name]
    closed = []

    @make()
    def gen():
        try:
            yield 1
        except KeyError:
            yield ("caught", oxmera.is_grad_enabled())
        finally:
            closed.append(oxmera.is_grad_enabled())

    for outer in (True, False):
        with oxmera.set_grad_enabled(outer):
            closed.clear()
            g = gen()
            next(g)
            assert g.throw(KeyError("k")) == ("caught", mode)
            assert oxmera.is_grad_enabled() is outer
            g.close()
            assert closed == [mode]                    # cleanup ran in the generator's mode
            assert oxmera.is_grad_enabled() is outer

            g = gen()
            next(g)
            with pytest.raises(ValueError):
                g.throw(ValueError("not caught"))
            assert oxmera.is_grad_enabled() is outer

    @make()
    def inner():
        yield oxmera.is_grad_enabled()
        return "done"

    def outer_gen():
        result = yield from inner()
        yield result, oxmera.is_grad_enabled()

    assert list(outer_gen()) == [mode, ("done", True)]


@pytest.mark.parametrize("name, mode", [("no_grad", False), ("enable_grad", True),
                                        ("inference_mode", False)])
def test_decorator_without_parentheses(name, mode):
    # PyTorch accepts @torch.no_grad as well as @torch.no_grad().
    manager = getattr(oxmera, name)

    @manager
    def f():
        return oxmera.is_grad_enabled()

    @manager
    def gen():
        yield oxmera.is_grad_enabled()

    for outer in (True, False):
        with oxmera.set_grad_enabled(outer):
            assert f() is mode and f.__name__ == "f"
            g = gen()
            assert next(g) is mode
            assert oxmera.is_grad_enabled() is outer


def test_nesting():
    with oxmera.no_grad():
        assert not records()
        with oxmera.enable_grad():
            assert records()
            with oxmera.no_grad():
                assert not records()
                with oxmera.set_grad_enabled(True):
                    assert records()
                assert not records()
            assert records()
        assert not records()
    assert records()


def test_same_instance_reentered():
    ctx = oxmera.no_grad()
    with ctx:
        with ctx:
            assert not oxmera.is_grad_enabled()
        assert not oxmera.is_grad_enabled()
        with oxmera.enable_grad():
            with ctx:
                assert not oxmera.is_grad_enabled()
            assert oxmera.is_grad_enabled()
    assert oxmera.is_grad_enabled()


@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_same_instance_reentered_deeper_than_its_bit_stack(name):
    # The compiled base keeps 64 replaced values as bits, deeper ones in a
    # list: alternate the mode on the way in so that every level differs.
    manager, mode = MANAGERS[name]
    ctx = manager()
    other = oxmera.enable_grad if not mode else oxmera.no_grad
    outer = oxmera.is_grad_enabled()
    stack = []
    for _ in range(150):
        stack.append(other())
        stack[-1].__enter__()
        ctx.__enter__()
        assert oxmera.is_grad_enabled() is mode
    for entered in reversed(stack):
        ctx.__exit__(None, None, None)
        assert oxmera.is_grad_enabled() is (not mode)
        entered.__exit__(None, None, None)
    assert oxmera.is_grad_enabled() is outer


def test_exit_without_enter_is_an_error_that_changes_nothing():
    ctx = oxmera.no_grad()
    with pytest.raises(RuntimeError, match="without a matching __enter__"):
        ctx.__exit__(None, None, None)
    assert oxmera.is_grad_enabled()
    with ctx:
        assert not oxmera.is_grad_enabled()
    with pytest.raises(RuntimeError, match="no_grad"):
        ctx.__exit__(None, None, None)
    assert oxmera.is_grad_enabled()


def test_set_grad_enabled_as_a_plain_call():
    try:
        oxmera.set_grad_enabled(False)
        assert not oxmera.is_grad_enabled()
        assert not records()
        oxmera.set_grad_enabled(True)
        assert oxmera.is_grad_enabled()
        assert records()
    finally:
        oxmera.set_grad_enabled(True)


def test_set_grad_enabled_decorating_does_not_change_the_mode():
    @oxmera.set_grad_enabled(False)
    def f():
        return oxmera.is_grad_enabled()

    assert oxmera.is_grad_enabled()
    assert f() is False
    assert oxmera.is_grad_enabled()


def test_inference_mode_false_keeps_the_current_mode():
    with oxmera.inference_mode(False):
        assert oxmera.is_grad_enabled()
    with oxmera.no_grad():
        with oxmera.inference_mode(False):
            assert not oxmera.is_grad_enabled()
    assert oxmera.is_grad_enabled()


def test_no_grad_outputs_are_leaves_and_backward_still_works():
    x = oxmera.tensor([1.0, 2.0], requires_grad=True)
    with oxmera.no_grad():
        y = x * 2
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None
    z = (x * 3).sum()
    with oxmera.no_grad():
        z.backward()                    # backward itself may run in no_grad
    assert x.grad.tolist() == [3.0, 3.0]


def test_backward_restores_the_callers_mode():
    x = oxmera.tensor([1.0], requires_grad=True)
    for outer in (True, False):
        y = (x * x).sum()
        with oxmera.set_grad_enabled(outer):
            y.backward(create_graph=not outer)
            assert oxmera.is_grad_enabled() is outer


def test_mode_is_per_thread():
    seen = {}
    checked, entered, release = threading.Event(), threading.Event(), threading.Event()

    def worker():
        # Started while the main thread is inside no_grad: records normally.
        seen["start"] = oxmera.is_grad_enabled()
        seen["records"] = records()
        checked.set()
        with oxmera.no_grad():
            entered.set()
            release.wait(10)
            seen["inside"] = oxmera.is_grad_enabled()
        seen["after"] = oxmera.is_grad_enabled()

    with oxmera.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        assert checked.wait(10)
        assert not oxmera.is_grad_enabled()
    assert entered.wait(10)
    # The worker is inside its no_grad now; the main thread is not affected.
    assert oxmera.is_grad_enabled() and records()
    release.set()
    t.join(10)
    assert seen == {"start": True, "records": True, "inside": False, "after": True}


@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_copies_are_managers_of_the_same_kind_not_entered(name):
    # (set_grad_enabled sets the mode when made, not when entered: a copy of
    # one, made without __init__ as Python copies, only restores its _prev)
    import copy
    import pickle

    manager, mode = MANAGERS[name]
    ctx = manager()
    with oxmera.set_grad_enabled(not mode):
        with ctx:
            copies = [copy.copy(ctx), copy.deepcopy(ctx), pickle.loads(pickle.dumps(ctx))]
        for c in copies:
            assert type(c) is type(ctx) and vars(c) == vars(ctx)
            with pytest.raises(RuntimeError, match="without a matching __enter__"):
                c.__exit__(None, None, None)
            with c:
                assert oxmera.is_grad_enabled() is mode
            assert oxmera.is_grad_enabled() is (not mode)
    assert oxmera.is_grad_enabled()


def test_a_state_from_outside_cannot_crash_it():
    # (Cython's generated __setstate_cython__ crashed on an empty tuple.)
    ctx = oxmera.no_grad()
    assert not hasattr(ctx, "__setstate_cython__")
    for state in ((), (None,), ("x", -5), {"_depth": -3}):
        try:
            ctx.__setstate__(state)
        except (TypeError, AttributeError, ValueError):
            pass
    with ctx:
        assert not oxmera.is_grad_enabled()
    assert oxmera.is_grad_enabled()
