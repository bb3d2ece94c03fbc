#!/usr/bin/env python
"""An LSTM recurrence composed from Linear, sigmoid and tanh, in oxmera and in PyTorch.

Usage::

    python bench/lstm_composed.py [--repeats 9] [--steps 2]

The workload (issue 13): one LSTM layer written as users write it by hand,
hidden 256 (and input 256), 64 steps, batch 32, float32 — per step
``input(x[t]) + hidden(h)`` (two ``nn.Linear``), ``chunk(4, 1)`` into the
gates, ``sigmoid``/``tanh``, ``c = f * c + i * g``, ``h = o * tanh(c)`` —
then ``stack`` of the outputs, ``(out * out).mean()`` and backward to the
input and every parameter. The model is written once against a library
object and built with ``torch`` and with ``oxmera`` (oxmera starts from
PyTorch's weights; the losses and the input gradients are checked to agree
before timing), so this measures the per-op cost of the same composition
in both. ``bench/lstm.py`` compares ``nn.LSTM`` with PyTorch's fused
``torch.nn.LSTM`` instead.

One thread for both libraries, the garbage collector on at default
thresholds; each round times a few steps of each library in alternating
order (``bench/_side_by_side.py``). Not run by the test suite.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _side_by_side import arguments, build_both, report, time_rounds  # noqa: E402
from _threads import pin_threads_in_environment  # noqa: E402

if __name__ == "__main__":
    pin_threads_in_environment()


import numpy as np  # noqa: E402

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, REPO_DIR)            # benchmark the oxmera of this checkout

STEPS, BATCH, HIDDEN = 64, 32, 256


def build(lib):
    """The recurrence, written once: ``lib`` is ``torch`` or ``oxmera``."""
    nn = lib.nn

    class ComposedLSTM(nn.Module):
        def __init__(self):
            super().__init__()
            self.input = nn.Linear(HIDDEN, 4 * HIDDEN)
            self.hidden = nn.Linear(HIDDEN, 4 * HIDDEN)

        def forward(self, x):
            h = c = lib.zeros(x.shape[1], HIDDEN)
            outputs = []
            for t in range(x.shape[0]):
                i, f, g, o = (self.input(x[t]) + self.hidden(h)).chunk(4, 1)
                c = lib.sigmoid(f) * c + lib.sigmoid(i) * lib.tanh(g)
                h = lib.sigmoid(o) * lib.tanh(c)
                outputs.append(h)
            return lib.stack(outputs)

    return ComposedLSTM()


def trainer(lib, model, x_array):
    x = lib.tensor(x_array, requires_grad=True)

    def step():
        x.grad = None
        model.zero_grad(set_to_none=True)
        out = model(x)
        loss = (out * out).mean()
        loss.backward()
        return float(loss.item())
    step.x = x
    return step


def main():
    args = arguments(__doc__, steps=2)
    torch, oxmera, reference, model = build_both(build)
    x_array = np.random.default_rng(0).standard_normal((STEPS, BATCH, HIDDEN), dtype=np.float32)
    steps = {"torch": trainer(torch, reference, x_array),
             "oxmera": trainer(oxmera, model, x_array)}
    losses = {name: step() for name, step in steps.items()}
    print(f"losses: torch {losses['torch']:.7f}, oxmera {losses['oxmera']:.7f}")
    grads = {name: step.x.grad.detach().numpy() for name, step in steps.items()}
    if (abs(losses["torch"] - losses["oxmera"]) > 1e-6
            or not np.allclose(grads["oxmera"], grads["torch"], rtol=1e-3, atol=1e-7)):
        sys.exit("the libraries disagree: not timing")

    times, ratios = time_rounds(steps, args.repeats, args.steps)
    print(f"LSTM composed from Linear + sigmoid/tanh, hidden {HIDDEN}, seq {STEPS}, batch "
          f"{BATCH}, float32, forward+backward; one thread")
    report(times, ratios, args.repeats)


if __name__ == "__main__":
    main()
