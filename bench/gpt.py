#!/usr/bin/env python
"""A GPT-style training step in oxmera and in PyTorch: the same code, either library.

Usage::

    python bench/gpt.py [--repeats 9] [--steps 3]

The workload (issues 13 and 15): a stack of 4 pre-norm transformer blocks,
d_model 128, 4 heads, context 64, batch 16, a 65-token vocabulary (a
character-level language model). Causal attention is written out as users
write it in nanoGPT-style programs — ``q @ k.T``, ``masked_fill`` with a
``tril`` buffer, ``softmax``, ``@ v`` — and the step is forward,
``cross_entropy``, backward and an ``AdamW`` step. The model class is written
once against a library object, and built with ``torch`` and with ``oxmera``
(``import oxmera as torch`` is the point of the exercise); oxmera starts from
the PyTorch model's weights, and the first losses are checked to agree.

Both libraries get one thread (BLAS variables set before NumPy loads, and
``torch.set_num_threads(1)``); the garbage collector stays on, at default
thresholds, as in users' programs. Each repeat is one round timing a few
steps of each library in alternating order; the report is the median time per
step and the median over rounds of the ratio oxmera / PyTorch. Not run by the
test suite.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _side_by_side import arguments, build_both, report, time_rounds  # noqa: E402
from _threads import pin_threads_in_environment  # noqa: E402

if __name__ == "__main__":
    pin_threads_in_environment()

import math  # noqa: E402

import numpy as np  # noqa: E402

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, REPO_DIR)            # benchmark the oxmera of this checkout

VOCAB, CONTEXT, BATCH, D_MODEL, HEADS, LAYERS = 65, 64, 16, 128, 4, 4


def build(lib):
    """The model, written once: ``lib`` is ``torch`` or ``oxmera``."""
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(D_MODEL, 3 * D_MODEL)
            self.proj = nn.Linear(D_MODEL, D_MODEL)
            self.register_buffer("mask", lib.tril(lib.ones(CONTEXT, CONTEXT))
                                 .view(1, 1, CONTEXT, CONTEXT))

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(D_MODEL, dim=2)
            q = q.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            k = k.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            v = v.view(B, T, HEADS, C // HEADS).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // HEADS))
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, C)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(D_MODEL)
            self.attn = CausalSelfAttention()
            self.ln2 = nn.LayerNorm(D_MODEL)
            self.fc = nn.Linear(D_MODEL, 4 * D_MODEL)
            self.out = nn.Linear(4 * D_MODEL, D_MODEL)

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Embedding(CONTEXT, D_MODEL)
            self.blocks = nn.Sequential(*[Block() for _ in range(LAYERS)])
            self.ln = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB)

        def forward(self, idx, targets):
            B, T = idx.shape
            x = self.tok(idx) + self.pos(lib.arange(T))
            logits = self.head(self.ln(self.blocks(x)))
            return F.cross_entropy(logits.view(B * T, VOCAB), targets.view(B * T))

    return GPT()


def trainer(lib, model, data):
    optimizer = lib.optim.AdamW(model.parameters(), lr=1e-3)
    idx, targets = lib.tensor(data[0]), lib.tensor(data[1])

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = model(idx, targets)
        loss.backward()
        optimizer.step()
        return float(loss.item())
    return step


def main():
    args = arguments(__doc__, steps=3)
    torch, oxmera, reference, model = build_both(build)
    rng = np.random.default_rng(0)
    data = (rng.integers(0, VOCAB, (BATCH, CONTEXT)), rng.integers(0, VOCAB, (BATCH, CONTEXT)))
    steps = {"torch": trainer(torch, reference, data), "oxmera": trainer(oxmera, model, data)}
    first = {name: step() for name, step in steps.items()}
    second = {name: step() for name, step in steps.items()}
    print(f"losses: torch {first['torch']:.6f} {second['torch']:.6f}, "
          f"oxmera {first['oxmera']:.6f} {second['oxmera']:.6f}")
    if (abs(first["torch"] - first["oxmera"]) > 1e-4
            or abs(second["torch"] - second["oxmera"]) > 1e-3):
        sys.exit("the libraries disagree: not timing")

    times, ratios = time_rounds(steps, args.repeats, args.steps)
    report(times, ratios, args.repeats)

if __name__ == "__main__":
    main()
