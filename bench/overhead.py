#!/usr/bin/env python
"""Where the time of one small op goes: a cost ladder, rung by rung.

Usage::

    python bench/overhead.py                  # oxmera and PyTorch, 16-element float64
    python bench/overhead.py --ops mul,sin --size 1000 --markdown ladder.md

For each op (``mul``, ``add``, ``sin``, ``tanh``, ``exp`` by default) on
16-element float64 arrays it measures, per call:

1. ``numpy``: the NumPy call itself (``np.multiply(a, b)``): the floor;
2. ``forward fn``: oxmera's forward function called directly (the NumPy
   code in ``oxmera/ops``, without the core);
3. ``no grad``: the public op on tensors that do not require grad
   (dispatch, argument unwrapping, the output Tensor);
4. ``no_grad()``: on a tensor that requires grad, inside ``no_grad()``
   (adds the grad-mode test; one ``with`` block per 20 calls);
5. ``record``: recording (a GradFn, the saved inputs, the output's
   AutogradMeta), and freeing the node when the output is dropped;
6. ``backward/node``: the backward cost of one node, from a chain of
   ``--chain`` such ops (one ``backward()`` over the chain, minus its
   forward, divided by the chain length);
7. ``numpy vjp``: what the hand-written VJP of that node costs in NumPy.

``record + backward/node`` is what one op costs oxmera in a training step;
``numpy + numpy vjp`` is what it costs written by hand. The same rungs are
measured for PyTorch where it has them. Each number is the median of
``--repeats`` samples; the machine's noise applies (see bench/RESULTS.md).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _threads import pin_threads_in_environment  # noqa: E402

if __name__ == "__main__":
    pin_threads_in_environment()

import argparse  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO_DIR not in sys.path:
    sys.path.insert(1, REPO_DIR)

BLOCK = 20     # ops per ``with no_grad()`` block, so the context manager is amortized

RUNGS = ("numpy", "forward fn", "no grad", "no_grad()", "record", "backward/node",
         "numpy vjp")

# op name: (arity, NumPy forward, hand-written NumPy VJP given (grad, a, b, output)).
OPS = {
    "mul": (2, np.multiply, lambda g, a, b, out: g * b),
    "add": (2, np.add, lambda g, a, b, out: g),
    "sin": (1, np.sin, lambda g, a, b, out: g * np.cos(a)),
    "tanh": (1, np.tanh, lambda g, a, b, out: g * (1.0 - out * out)),
    "exp": (1, np.exp, lambda g, a, b, out: g * out),
}


def per_call(function, min_time):
    """CPU seconds per call of ``function`` (no arguments), over at least ``min_time``.

    Process CPU time, not wall-clock: on a shared machine it leaves out the
    time other processes held the CPU (everything here runs on one thread).
    """
    clock = time.process_time
    number = 1
    while True:
        start = clock()
        for _ in range(number):
            function()
        elapsed = clock() - start
        if elapsed >= min_time:
            return elapsed / number
        number = max(number + 1, int(number * min_time / max(elapsed, 1e-9) * 1.2))


def median_per_call(function, repeats, min_time):
    per_call(function, min_time / 4)                    # warm-up
    return statistics.median(per_call(function, min_time) for _ in range(repeats))


def oxmera_rungs(oxmera, name, a, b, chain):
    """Callables for each rung, oxmera."""
    arity, np_forward, np_vjp = OPS[name]
    public = getattr(oxmera, name)
    forward = public.op.forward
    ta, tb = oxmera.from_numpy(a), oxmera.from_numpy(b)
    ga = oxmera.tensor(a, requires_grad=True)
    no_grad = oxmera.no_grad
    out = np_forward(a, b) if arity == 2 else np_forward(a)
    grad = np.ones_like(out)
    if arity == 2:
        rungs = {"forward fn": lambda: forward(a, b), "no grad": lambda: public(ta, tb),
                 "record": lambda: public(ga, tb)}

        def under_no_grad():
            with no_grad():
                for _ in range(BLOCK):
                    public(ga, tb)

        def chain_forward():
            y = ga
            for _ in range(chain):
                y = public(y, tb)
            return y.sum()
    else:
        rungs = {"forward fn": lambda: forward(a), "no grad": lambda: public(ta),
                 "record": lambda: public(ga)}

        def under_no_grad():
            with no_grad():
                for _ in range(BLOCK):
                    public(ga)

        def chain_forward():
            y = ga
            for _ in range(chain):
                y = public(y)
            return y.sum()
    rungs["no_grad()"] = under_no_grad

    def chain_backward():
        ga.grad = None
        chain_forward().backward()
    rungs["numpy"] = (lambda: np_forward(a, b)) if arity == 2 else (lambda: np_forward(a))
    rungs["numpy vjp"] = lambda: np_vjp(grad, a, b, out)
    return rungs, chain_forward, chain_backward


def torch_rungs(torch, name, a, b, chain):
    """Callables for each rung, PyTorch (``forward fn`` has no counterpart)."""
    arity = OPS[name][0]
    public = getattr(torch, name)
    ta, tb = torch.from_numpy(a.copy()), torch.from_numpy(b.copy())
    ga = torch.tensor(a, requires_grad=True)
    no_grad = torch.no_grad
    call = (lambda x: public(x, tb)) if arity == 2 else public
    rungs = {"no grad": (lambda: public(ta, tb)) if arity == 2 else (lambda: public(ta)),
             "record": lambda: call(ga)}

    def under_no_grad():
        with no_grad():
            for _ in range(BLOCK):
                call(ga)
    rungs["no_grad()"] = under_no_grad

    def chain_forward():
        y = ga
        for _ in range(chain):
            y = call(y)
        return y.sum()

    def chain_backward():
        ga.grad = None
        chain_forward().backward()
    return rungs, chain_forward, chain_backward


def measure(library, rungs, chain_forward, chain_backward, chain, args):
    result = {}
    for rung, function in rungs.items():
        calls = BLOCK if rung == "no_grad()" else 1
        result[rung] = median_per_call(function, args.repeats, args.min_time) / calls
    # backward per node: (forward + backward - forward) / nodes, in interleaved pairs
    per_call(chain_backward, args.min_time / 4)
    differences = []
    for _ in range(args.repeats):
        both = per_call(chain_backward, args.min_time)
        forward_only = per_call(chain_forward, args.min_time)
        differences.append((both - forward_only) / chain)
    result["backward/node"] = statistics.median(differences)
    return result


def format_us(seconds):
    return "—" if seconds is None else f"{seconds * 1e6:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated, from: "
                        + ", ".join(OPS))
    parser.add_argument("--size", type=int, default=16, help="elements per array (16)")
    parser.add_argument("--chain", type=int, default=500,
                        help="ops in the chain that measures backward per node (500)")
    parser.add_argument("--repeats", type=int, default=7, help="samples per number (7)")
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="seconds per sample (0.02)")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch")
    parser.add_argument("--json", help="write the numbers here")
    parser.add_argument("--markdown", help="write a Markdown table here")
    args = parser.parse_args(argv)

    import oxmera
    libraries = {"oxmera": oxmera}
    if not args.no_torch:
        try:
            import torch
            torch.set_num_threads(1)
            libraries["torch"] = torch
        except ImportError:
            pass
    gc.collect()
    gc.freeze()
    rng = np.random.default_rng(0)
    a = rng.uniform(-1.0, 1.0, args.size)
    b = rng.uniform(-1.0, 1.0, args.size)
    results = {}
    for name in [n.strip() for n in args.ops.split(",") if n.strip()]:
        if name not in OPS:
            parser.error(f"unknown op {name!r}; choose from {', '.join(OPS)}")
        for library, module in libraries.items():
            build = oxmera_rungs if library == "oxmera" else torch_rungs
            rungs, chain_forward, chain_backward = build(module, name, a, b, args.chain)
            results[(name, library)] = measure(library, rungs, chain_forward, chain_backward,
                                               args.chain, args)
            print(f"{name:5} {library:7} " + "  ".join(
                f"{rung} {format_us(results[(name, library)].get(rung))}"
                for rung in RUNGS if rung in results[(name, library)]), file=sys.stderr)

    header = ["op", "library", *[f"{rung} (µs)" for rung in RUNGS], "op total (µs)",
              "÷ numpy"]
    rows = []
    for (name, library), result in results.items():
        numpy_total = results[(name, "oxmera")]["numpy"] + results[(name, "oxmera")]["numpy vjp"]
        total = result["record"] + result["backward/node"]
        rows.append([name, library, *[format_us(result.get(rung)) for rung in RUNGS],
                     format_us(total), f"{total / numpy_total:.1f}×"])
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))
    print(f"(float64, {args.size} elements; 'op total' = record + backward/node, "
          "'÷ numpy' divides it by numpy + numpy vjp)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({f"{n}/{lib}": r for (n, lib), r in results.items()}, handle, indent=1)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n")
            for row in rows:
                handle.write("| " + " | ".join(str(c) for c in row) + " |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
