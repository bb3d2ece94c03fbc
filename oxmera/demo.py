"""A first taste of oxmera: fit a small neural network to a sine curve.

Run it with ``python -m oxmera.demo``. It builds a one-hidden-layer network
from plain oxmera ops, trains it by gradient descent with ``backward()``,
and prints the loss falling. (The full demo, a convolutional network on
handwritten digits, replaces this once ``oxmera.nn`` lands.)
"""
import argparse
import time

import numpy as np

import oxmera


def make_data(n, rng):
    x = np.sort(rng.uniform(-3, 3, size=(n, 1)))
    y = np.sin(x) + 0.05 * rng.standard_normal((n, 1))
    return oxmera.tensor(x), oxmera.tensor(y)


def init_params(hidden, rng):
    def param(*shape, scale):
        return oxmera.tensor(rng.standard_normal(shape) * scale, requires_grad=True)
    return [param(1, hidden, scale=1.0), param(hidden, scale=0.1),
            param(hidden, 1, scale=1.0 / np.sqrt(hidden)), param(1, scale=0.1)]


def forward(params, x):
    w1, b1, w2, b2 = params
    return (x @ w1 + b1).tanh() @ w2 + b2


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    x, y = make_data(256, rng)
    params = init_params(args.hidden, rng)
    print(f"fitting sin(x) with a 1-{args.hidden}-1 tanh network, {args.steps} steps of "
          f"gradient descent (lr={args.lr})")
    start = time.perf_counter()
    first = None
    for step in range(args.steps + 1):
        loss = ((forward(params, x) - y) ** 2).mean()
        for p in params:
            p.grad = None
        loss.backward()
        with oxmera.no_grad():
            for p in params:
                p.data = p.data - args.lr * p.grad
        first = loss.item() if first is None else first
        if step % (args.steps // 10 or 1) == 0:
            print(f"step {step:5d}   loss {loss.item():.5f}")
    elapsed = time.perf_counter() - start
    print(f"loss fell from {first:.4f} to {loss.item():.4f} in {elapsed:.1f} s")
    return loss.item()


if __name__ == "__main__":
    main()
