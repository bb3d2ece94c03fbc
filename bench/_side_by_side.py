"""Timing two libraries that run the same code, side by side (bench/gpt.py, bench/lstm_composed.py).

Each round times a few steps of each library, in alternating order, so the
shared machine's drift hits both alike; the report is each library's median
time per step and the median over rounds of the ratio oxmera / torch.
"""
import argparse
import statistics
import time

__all__ = ["arguments", "build_both", "time_rounds", "report"]


def arguments(doc, steps):
    """The command line both benchmarks take: ``--repeats`` and ``--steps``."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--steps", type=int, default=steps, help="steps per library per round")
    return parser.parse_args()


def build_both(build):
    """``(torch, oxmera, reference, model)``: ``build(lib)`` made with each library,
    torch on one thread and seeded, oxmera's model loaded with torch's weights."""
    import torch

    import oxmera
    torch.set_num_threads(1)
    torch.manual_seed(0)
    reference = build(torch)
    model = build(oxmera)
    model.load_state_dict({k: oxmera.tensor(v.detach().numpy())
                           for k, v in reference.state_dict().items()})
    return torch, oxmera, reference, model


def time_rounds(steps, repeats, per_round):
    """``steps`` maps a library name to its step function; returns (times, ratios)."""
    times = {name: [] for name in steps}
    ratios = []
    for r in range(repeats):
        order = list(steps) if r % 2 == 0 else list(reversed(list(steps)))
        sample = {}
        for name in order:
            start = time.perf_counter()
            for _ in range(per_round):
                steps[name]()
            sample[name] = (time.perf_counter() - start) / per_round
            times[name].append(sample[name])
        ratios.append(sample["oxmera"] / sample["torch"])
    return times, ratios


def report(times, ratios, repeats):
    for name, samples in times.items():
        print(f"{name:7s} {statistics.median(samples) * 1e3:8.1f} ms/step")
    print(f"oxmera / torch: {statistics.median(ratios):.2f}x (median of {repeats} rounds)")
