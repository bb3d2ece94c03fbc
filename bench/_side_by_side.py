"""Timing two libraries that run the same code, side by side (bench/gpt.py, bench/lstm_composed.py).

Each round times a few steps of each library, in alternating order, so the
shared machine's drift hits both alike; the report is each library's median
time per step and the median over rounds of the ratio oxmera / torch.
"""
import statistics
import time

__all__ = ["time_rounds", "report"]


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
