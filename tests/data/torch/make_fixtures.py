"""Writes the PyTorch checkpoints in this folder, so tests/test_torch_checkpoints.py
tests oxmera's reader without torch. Run once with torch installed (2.13 wrote the
committed files): ``python tests/data/torch/make_fixtures.py``. Every value is made
from ``arange``, so the tests know them without these files' writer."""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8"]


def every_dtype():
    out = {name: torch.arange(6).reshape(2, 3).to(getattr(torch, name)) for name in DTYPES}
    out["bool"] = torch.arange(6).reshape(2, 3) % 2 == 0
    out["bfloat16"] = torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16)
    return out


def shared():
    base = torch.arange(12.0)
    return {
        "base": base,
        "view": base[2:8].view(2, 3).t(),                 # offset 2, strides (1, 3)
        "row": base.view(3, 4)[1],                        # offset 4
        "expanded": base[:3].unsqueeze(0).expand(2, 3),   # stride 0
        "param": torch.nn.Parameter(torch.arange(3.0)),
        "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False),
        "leaf": torch.tensor([1.0, 2.0], requires_grad=True),
        "scalar": torch.tensor(7),
        "empty": torch.zeros(0, 3),
        "meta": {"epoch": 3, "lr": 0.1, "name": "x", "size": torch.Size([2, 3]),
                 "dtype": torch.float32, "device": torch.device("cpu"), "pair": (1, 2),
                 "set": {1, 2}, "bytes": b"ab", "none": None, 5: [1.5, True]},
    }


def model_state_dict():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    with torch.no_grad():
        for i, tensor in enumerate(model.state_dict().values()):
            tensor.copy_(torch.arange(tensor.numel()).reshape(tensor.shape) * 0.25 + i)
    return model.state_dict()


def main():
    for name, make in [("every_dtype", every_dtype), ("shared", shared),
                       ("model_state_dict", model_state_dict)]:
        torch.save(make(), os.path.join(HERE, f"{name}.pt"))
        torch.save(make(), os.path.join(HERE, f"{name}_legacy.pt"),
                   _use_new_zipfile_serialization=False)


if __name__ == "__main__":
    main()
