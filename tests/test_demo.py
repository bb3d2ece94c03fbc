"""The demo (``python -m oxmera.demo``) and the data set it ships with.

The full demo (20 epochs, >= 97% held-out accuracy for seeds 0-4) is timed
by hand for the README; here one epoch runs in-process, which checks every
step of it: the printed losses and accuracies, the weights saved and loaded
back into a fresh network, and the progress display; the options' checks are
in tests/reliability/test_demo_options.py.
"""
import importlib.util
import io
import subprocess
import sys

import numpy as np
import pytest

import oxmera
from oxmera import demo
from oxmera.datasets import load_digits


# -- the data set ---------------------------------------------------------------------------

def test_load_digits_shapes_dtypes_and_ranges():
    images, labels = load_digits()
    assert isinstance(images, oxmera.Tensor) and isinstance(labels, oxmera.Tensor)
    assert images.shape == (1797, 1, 8, 8) and images.dtype == oxmera.float32
    assert labels.shape == (1797,) and labels.dtype == oxmera.int64
    assert not images.requires_grad
    pixels = images.numpy()
    assert pixels.min() == 0.0 and pixels.max() == 1.0
    # pixel counts 0..16, divided by 16: every value is a multiple of 1/16
    np.testing.assert_array_equal(pixels * 16, np.round(pixels * 16))
    counts = np.bincount(labels.numpy(), minlength=10)
    assert counts.tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


def test_load_digits_as_numpy_returns_fresh_writable_copies():
    images, labels = load_digits(as_numpy=True)
    assert isinstance(images, np.ndarray) and isinstance(labels, np.ndarray)
    assert images.dtype == np.float32 and labels.dtype == np.int64
    images[:] = -1
    labels[:] = -1
    again, again_labels = load_digits(as_numpy=True)
    assert again.min() == 0.0 and again_labels.min() == 0


def test_the_first_digits_are_the_known_ones():
    images, labels = load_digits(as_numpy=True)
    assert labels[:10].tolist() == list(range(10))
    # the first image of the UCI test set, a 0, as scikit-learn's copy has it
    zero = (images[0, 0] * 16).astype(int)
    assert zero[0].tolist() == [0, 0, 5, 13, 9, 1, 0, 0]
    assert zero[7].tolist() == [0, 0, 6, 13, 10, 0, 0, 0]


def test_attribution_ships_beside_the_data():
    from importlib.resources import files
    readme = files("oxmera.datasets").joinpath("README.md").read_text(encoding="utf-8")
    for needed in ["Alpaydin", "Kaynak", "CC BY 4.0", "10.24432/C50P49"]:
        assert needed in readme
    assert "CC BY 4.0" in demo.__doc__ and "Alpaydin" in demo.__doc__


def test_the_split_is_fixed_and_disjoint():
    (train, held_out), (train_again, held_out_again) = demo.split_digits(), demo.split_digits()
    assert list(train.indices) == list(train_again.indices)
    assert list(held_out.indices) == list(held_out_again.indices)
    assert len(train) == 1797 - demo.HELD_OUT and len(held_out) == demo.HELD_OUT
    assert not set(train.indices) & set(held_out.indices)
    images = load_digits(as_numpy=True)[0].reshape(1797, -1)
    # no held-out image is also a training image (the UCI set has no duplicates across them)
    train_rows = {images[i].tobytes() for i in train.indices}
    assert not any(images[i].tobytes() in train_rows for i in held_out.indices)
    image, label = held_out[0]
    assert image.shape == (1, 8, 8) and 0 <= int(label) <= 9


# -- the demo ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def one_epoch(tmp_path_factory):
    """One epoch of the demo, run once for the tests below."""
    path = tmp_path_factory.mktemp("demo") / "weights.safetensors"
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        result = demo.main(["--epochs", "1", "--seed", "3", "--save", str(path)])
    finally:
        sys.stdout, sys.stderr = saved
    return result, out.getvalue(), err.getvalue(), path


def test_one_epoch_prints_loss_and_accuracy_and_learns(one_epoch):
    result, out, err, path = one_epoch
    assert "epoch  1/1  loss " in out and "held-out accuracy" in out
    assert len(result.losses) == len(result.accuracies) == 1
    assert result.losses[0] < np.log(10)          # below chance level's cross-entropy
    assert result.accuracies[0] > 0.5             # one epoch is far better than chance
    steps = -(-(1797 - demo.HELD_OUT) // demo.parse_args([]).batch_size)
    assert len(result.batch_losses) == steps
    assert np.mean(result.batch_losses[-5:]) < np.mean(result.batch_losses[:5])
    assert f"{100 * result.accuracies[0]:6.2f}%" in out


def test_saves_and_reloads_the_same_network(one_epoch):
    result, out, err, path = one_epoch
    assert result.save_path == str(path) and path.stat().st_size > 0
    assert f"saved the weights to {path}" in out
    assert result.reloaded_accuracy == result.accuracies[-1]
    assert "outputs identical" in out


def test_the_file_holds_the_state_dict(one_epoch):
    path = one_epoch[3]
    state = oxmera.load(str(path))
    expected = demo.DigitsNet().state_dict()
    assert set(state) == set(expected)
    for name, value in state.items():
        assert value.shape == expected[name].shape and value.dtype == oxmera.float32


def test_a_reload_that_differs_is_an_error(monkeypatch, capsys, tmp_path):
    real_load = oxmera.load

    def altered(path):
        state = real_load(path)
        state["classifier.3.bias"] = state["classifier.3.bias"] + 1e-3
        return state
    monkeypatch.setattr(oxmera, "load", altered)
    with pytest.raises(RuntimeError, match="different outputs"):
        demo.main(["--epochs", "1", "--batch-size", "256", "--save", str(tmp_path / "w")])


def test_no_progress_display_when_stderr_is_not_a_terminal(one_epoch):
    # The fixture's stderr is a StringIO, as a log file or a pipe would be: no bar
    # (tests/reliability/test_demo_options.py has the terminal cases).
    result, out, err, path = one_epoch
    assert "\r" not in out and "\r" not in err and "epoch" not in err


def test_same_seed_same_run(one_epoch, tmp_path):
    result = one_epoch[0]
    sys_out = io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = sys_out, io.StringIO()
    try:
        again = demo.main(["--epochs", "1", "--seed", "3", "--save", str(tmp_path / "w")])
    finally:
        sys.stdout, sys.stderr = saved
    assert again.batch_losses == result.batch_losses
    assert again.accuracies == result.accuracies


def test_line_progress_redraws_one_line_and_erases_it():
    stream = io.StringIO()
    bar = demo.LineProgress(4, "epoch 1/1", file=stream, width=8)
    for _ in range(4):
        bar.set_postfix_str("loss 0.5", refresh=False)
        bar.update()
    text = stream.getvalue()
    assert text.count("\r") == 4 and "\n" not in text
    assert "[########] 4/4" in text and "[##......] 1/4" in text and "loss 0.5" in text
    bar.close()
    assert stream.getvalue().endswith("\r") and stream.getvalue()[len(text):].strip() == ""


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None,
                    reason="matplotlib is not installed")
def test_plot_writes_a_png(tmp_path):
    path = tmp_path / "loss.png"
    demo.plot_losses(path, [2.0, 1.0, 0.5, 0.4], [1.5, 0.45], [0.8, 0.9])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv", [["--epochs", "0"], ["--batch-size", "0"], ["--bogus"]])
def test_bad_arguments_exit_with_usage(argv, capsys):
    with pytest.raises(SystemExit) as excinfo:
        demo.main(argv)
    assert excinfo.value.code == 2
    assert "usage: python -m oxmera.demo" in capsys.readouterr().err


def test_help_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "oxmera.demo", "--help"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for option in ["--epochs", "--seed", "--save", "--plot"]:
        assert option in done.stdout
