"""How ``digits.npz`` was made (kept for reproducibility; not imported by oxmera).

The 8x8 digits are the test set of the UCI "Optical Recognition of
Handwritten Digits" data (E. Alpaydin and C. Kaynak, 1998, CC BY 4.0), in
the copy scikit-learn ships as ``sklearn/datasets/data/digits.csv.gz``: one
row per image, 64 pixel counts (0..16) then the label. This script reads
that file straight out of a scikit-learn wheel (a zip archive, so neither
scikit-learn nor the network is needed) and writes ``digits.npz`` with two
uint8 arrays, ``images`` (1797, 8, 8) and ``labels`` (1797,)::

    python -m oxmera.datasets._make_digits scikit_learn-1.9.1-*.whl [OUT.npz]

The arrays are checked against the counts the UCI description gives, and
the output is byte-for-byte reproducible (``np.savez_compressed`` writes
fixed zip timestamps).
"""
import gzip
import io
import pathlib
import sys
import zipfile

import numpy as np

MEMBER = "sklearn/datasets/data/digits.csv.gz"


def read_digits_csv(wheel):
    """Return ``(images, labels)`` as uint8 arrays from a scikit-learn wheel."""
    with zipfile.ZipFile(wheel) as archive:
        text = gzip.decompress(archive.read(MEMBER)).decode("ascii")
    table = np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.int64)
    if table.shape != (1797, 65) or table.min() < 0 or table[:, :64].max() > 16:
        raise ValueError(f"{MEMBER}: unexpected contents, shape {table.shape}")
    images = table[:, :64].reshape(-1, 8, 8).astype(np.uint8)
    labels = table[:, 64].astype(np.uint8)
    if sorted(set(labels.tolist())) != list(range(10)):
        raise ValueError(f"{MEMBER}: labels are not the digits 0-9")
    return images, labels


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not 1 <= len(argv) <= 2:
        raise SystemExit(__doc__)
    out = pathlib.Path(argv[1] if len(argv) == 2 else pathlib.Path(__file__).with_name(
        "digits.npz"))
    images, labels = read_digits_csv(argv[0])
    np.savez_compressed(out, images=images, labels=labels)
    print(f"wrote {out} ({out.stat().st_size} bytes): images {images.shape}, "
          f"labels {labels.shape}, per-class counts {np.bincount(labels).tolist()}")


if __name__ == "__main__":
    main()
