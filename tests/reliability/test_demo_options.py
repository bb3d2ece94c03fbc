"""The demo's options are checked before it trains, and its progress display suits a log.

Issue 12: a bad ``--save``/``--plot`` path failed only after training ended,
``--lr -1`` ended in a traceback from Adam, and with stderr redirected to a
file the progress bar wrote every ``\\r`` redraw into it. Now every option is
checked by ``parse_args`` (an argparse error: exit status 2, the usage line,
the option's name, no traceback) before any data is loaded, and the bar is
drawn only on a terminal.

The three triggers the issue names run ``python -m oxmera.demo`` in a
subprocess (with a timeout); the other bad values run ``demo.main`` in
process with ``train`` replaced by a function that fails the test, so "nothing
trained" is checked directly.
"""
import importlib.util
import io
import os
import subprocess
import sys
import time

import pytest

from oxmera import demo

USAGE = "usage: python -m oxmera.demo"
#: So many epochs that a run which trained before failing would hit the timeout.
MANY_EPOCHS = "100000"
TIMEOUT = 120


def run_demo(*args, stderr=subprocess.PIPE):
    """Run ``python -m oxmera.demo ARGS`` with stdout and stderr pipes (not terminals)."""
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "oxmera.demo", *args], stdout=subprocess.PIPE,
                          stderr=stderr, text=True, timeout=TIMEOUT)
    return done, time.perf_counter() - began


def assert_usage_error(done, *words):
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert USAGE in done.stderr and "Traceback" not in done.stderr
    for word in words:
        assert word in done.stderr
    assert done.stdout == ""        # not even the first line: nothing was loaded or trained


@pytest.fixture
def no_training(monkeypatch):
    """``demo.train`` replaced: the tests that use this fail if the demo gets that far."""
    def train(args, save_path):
        raise AssertionError("the demo started training")
    monkeypatch.setattr(demo, "train", train)


def usage_error(argv, capsys):
    """Run ``demo.main(argv)``, expecting an argparse error; its stderr."""
    with pytest.raises(SystemExit) as excinfo:
        demo.main(argv)
    err = capsys.readouterr().err
    assert excinfo.value.code == 2, err
    assert USAGE in err
    return err


# -- the triggers, as a user runs them ---------------------------------------------

def test_a_save_path_in_a_missing_folder_fails_before_training(tmp_path):
    target = tmp_path / "no-such-folder" / "weights.safetensors"
    done, seconds = run_demo("--epochs", MANY_EPOCHS, "--save", str(target))
    assert_usage_error(done, "--save", str(target), "does not exist")
    assert "epoch " not in done.stdout + done.stderr     # no epoch line, no progress bar
    assert not target.parent.exists()
    # Import and argument parsing only; training 100,000 epochs would take hours.
    assert seconds < TIMEOUT


def test_a_negative_learning_rate_is_a_usage_error_not_a_traceback():
    done, _ = run_demo("--epochs", MANY_EPOCHS, "--lr", "-1")
    assert_usage_error(done, "--lr", "finite number above 0", "-1")


def test_a_log_gets_one_line_per_epoch_and_no_carriage_returns():
    # stdout and stderr both into one pipe, as `python -m oxmera.demo > log 2>&1` does
    done, _ = run_demo("--epochs", "3", "--batch-size", "512", stderr=subprocess.STDOUT)
    assert done.returncode == 0, done.stdout
    assert "\r" not in done.stdout
    epoch_lines = [line for line in done.stdout.splitlines() if line.startswith("epoch")]
    assert [line[:13] for line in epoch_lines] == ["epoch  1/3  l", "epoch  2/3  l",
                                                   "epoch  3/3  l"]
    assert all("held-out accuracy" in line for line in epoch_lines)


def test_with_stderr_apart_the_progress_display_writes_nothing_to_it():
    done, _ = run_demo("--epochs", "2", "--batch-size", "512")
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "epoch" not in done.stderr
    assert sum(line.startswith("epoch") for line in done.stdout.splitlines()) == 2


# -- every option, checked up front --------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["--lr", "-1"], ["--lr", "finite number above 0"]),
    (["--lr", "0"], ["--lr", "finite number above 0"]),
    (["--lr", "nan"], ["--lr", "finite number above 0", "nan"]),
    (["--lr", "inf"], ["--lr", "finite number above 0", "inf"]),
    (["--lr", "1e400"], ["--lr", "finite number above 0"]),
    (["--lr", "fast"], ["--lr", "expected a number", "'fast'"]),
    (["--epochs", "0"], ["--epochs", "at least 1", "got 0"]),
    (["--epochs", "-3"], ["--epochs", "at least 1"]),
    (["--epochs", "1.5"], ["--epochs", "expected an integer", "'1.5'"]),
    (["--batch-size", "0"], ["--batch-size", "at least 1"]),
    (["--seed", "-1"], ["--seed", "from 0 to 18446744073709551615", "got -1"]),
    (["--seed", str(2**64)], ["--seed", "from 0 to 18446744073709551615"]),
    (["--save", ""], ["--save", "empty"]),
    (["--plot", ""], ["--plot", "empty"]),
])
def test_bad_values_are_usage_errors_naming_the_option(argv, words, capsys, no_training):
    err = usage_error(argv, capsys)
    for word in words:
        assert word in err


def test_the_extreme_good_values_are_accepted(tmp_path):
    args = demo.parse_args(["--seed", str(2**64 - 1), "--epochs", "1", "--batch-size", "1",
                            "--lr", "1e-300", "--save", str(tmp_path / "w")])
    assert args.seed == 2**64 - 1 and args.lr == 1e-300 and args.batch_size == 1


@pytest.mark.parametrize("option", ["--save", "--plot"])
def test_output_paths_that_cannot_be_written(option, tmp_path, capsys, no_training,
                                             monkeypatch):
    # matplotlib's presence must not decide which error --plot gets here
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object())
    a_file = tmp_path / "a-file"
    a_file.write_bytes(b"kept")
    cases = [
        (tmp_path / "missing" / "out", "does not exist"),
        (a_file / "out", "is not a folder"),
        (tmp_path, "is a folder"),
    ]
    if os.path.isdir("/proc"):
        # root may write almost anywhere; no file can be made in /proc even by root
        cases.append(("/proc/oxmera-demo-out", "no new file can be made in /proc"))
    for path, words in cases:
        err = usage_error([option, str(path)], capsys)
        assert f"argument {option}:" in err and str(path) in err and words in err, err
    assert a_file.read_bytes() == b"kept" and sorted(os.listdir(tmp_path)) == ["a-file"]


class Reached(Exception):
    """Raised by the stand-in for ``demo.train``: the checks let the demo go on."""


def test_an_existing_file_is_accepted_and_left_unchanged_until_training(tmp_path,
                                                                          monkeypatch):
    target = tmp_path / "weights.safetensors"
    target.write_bytes(b"old weights")
    before = target.stat().st_mtime_ns

    def train(args, save_path):
        assert save_path == str(target)
        raise Reached
    monkeypatch.setattr(demo, "train", train)
    with pytest.raises(Reached):
        demo.main(["--save", str(target)])
    assert target.read_bytes() == b"old weights" and target.stat().st_mtime_ns == before
    # the probe file the check made in the folder is gone
    assert os.listdir(tmp_path) == ["weights.safetensors"]


def test_plot_without_matplotlib_names_the_demo_extra(monkeypatch, capsys, no_training,
                                                      tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    err = usage_error(["--plot", str(tmp_path / "loss.png")], capsys)
    assert "--plot needs matplotlib" in err and "oxmera[demo]" in err
    assert "pip install" in err
    assert not (tmp_path / "loss.png").exists()


def test_save_and_plot_may_not_name_one_file(capsys, no_training, tmp_path):
    path = str(tmp_path / "out")
    err = usage_error(["--save", path, "--plot", os.path.join(str(tmp_path), ".", "out")],
                      capsys)
    assert "--save and --plot name the same file" in err


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="matplotlib is not installed")
def test_plot_to_a_format_matplotlib_cannot_draw(capsys, no_training, tmp_path):
    err = usage_error(["--plot", str(tmp_path / "loss.xyz")], capsys)
    assert "--plot" in err and "cannot draw 'xyz'" in err and ".png" in err and ".svg" in err


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="matplotlib is not installed")
def test_plot_without_an_extension_is_a_png_at_exactly_that_path(tmp_path):
    path = tmp_path / "loss"
    demo.plot_losses(str(path), [2.0, 1.0, 0.5, 0.4], [1.5, 0.45], [0.8, 0.9])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert os.listdir(tmp_path) == ["loss"]


def test_help_names_the_demo_extra():
    out = io.StringIO()
    saved = sys.stdout
    sys.stdout = out
    try:
        with pytest.raises(SystemExit):
            demo.parse_args(["--help"])
    finally:
        sys.stdout = saved
    assert "oxmera[demo]" in out.getvalue()
    assert "oxmera[demo]" in demo.__doc__ or ".[demo]" in demo.__doc__


# -- the progress display --------------------------------------------------------------------

class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self):
        return True


class Detached(io.StringIO):
    def isatty(self):
        raise ValueError("I/O operation on closed file")


@pytest.mark.parametrize("stream", [io.StringIO(), Detached(), object()],
                         ids=["file", "closed", "no-isatty"])
def test_no_progress_display_off_a_terminal(stream):
    bar = demo.progress_bar(10, "epoch  1/1", file=stream)
    assert isinstance(bar, demo.NoProgress)     # even where tqdm is installed
    bar.set_postfix_str("loss 1.0", refresh=False)
    bar.update()
    bar.close()
    if isinstance(stream, io.StringIO):
        assert stream.getvalue() == ""


def test_on_a_terminal_without_tqdm_the_line_display(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)      # import tqdm raises ImportError
    stream = Terminal()
    bar = demo.progress_bar(2, "epoch  1/1", file=stream)
    assert isinstance(bar, demo.LineProgress)
    bar.update()
    assert "\repoch  1/1 [" in stream.getvalue() and "1/2" in stream.getvalue()


@pytest.mark.skipif(importlib.util.find_spec("tqdm") is None, reason="tqdm is not installed")
def test_on_a_terminal_with_tqdm_its_bar():
    from tqdm import tqdm
    stream = Terminal()
    bar = demo.progress_bar(2, "epoch  1/1", file=stream)
    try:
        assert isinstance(bar, tqdm)
        bar.update()
        assert "epoch  1/1" in stream.getvalue()
    finally:
        bar.close()
