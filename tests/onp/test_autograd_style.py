"""Checks in the style of HIPS autograd's ``tests/test_numpy.py`` (written anew for oxmera):
NumPy code written against ``oxmera.numpy`` gets first and second derivatives that agree
with finite differences, on random float64 inputs of several shapes."""
import numpy as np
import pytest

import oxmera
import oxmera.numpy as onp
from oxmera.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(1234)


def rand(*shape):
    return oxmera.tensor(RNG.standard_normal(shape), requires_grad=True)


def spd(n):
    a = RNG.standard_normal((n, n))
    return oxmera.tensor(a @ a.T + n * np.eye(n), requires_grad=True)


def check_grads(fun, *args):
    assert gradcheck(fun, args, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fun, args, eps=1e-6, atol=1e-5, rtol=1e-3)


CASES = {
    # products
    "dot-vv": (lambda a, b: onp.dot(a, b), (rand(4), rand(4))),
    "dot-mv": (lambda a, b: onp.dot(a, b), (rand(3, 4), rand(4))),
    "dot-vm": (lambda a, b: onp.dot(a, b), (rand(3), rand(3, 4))),
    "dot-mm": (lambda a, b: onp.dot(a, b), (rand(2, 3), rand(3, 4))),
    "dot-3d": (lambda a, b: onp.dot(a, b), (rand(2, 3, 4), rand(4, 2))),
    "dot-scalar": (lambda a, b: onp.dot(a, b), (rand(), rand(3))),
    "matmul-batched": (lambda a, b: onp.matmul(a, b), (rand(2, 2, 3), rand(3, 2))),
    "inner": (lambda a, b: onp.inner(a, b), (rand(2, 3), rand(4, 3))),
    "outer": (lambda a, b: onp.outer(a, b), (rand(3), rand(2, 2))),
    "kron": (lambda a, b: onp.kron(a, b), (rand(2, 2), rand(2, 3))),
    "tensordot-int": (lambda a, b: onp.tensordot(a, b, 2), (rand(2, 3, 4), rand(3, 4, 2))),
    "tensordot-pairs": (lambda a, b: onp.tensordot(a, b, ([0, 2], [2, 0])),
                        (rand(2, 3, 4), rand(4, 3, 2))),
    "einsum-trace": (lambda a: onp.einsum("ii", a), (rand(3, 3),)),
    "einsum-batch": (lambda a, b: onp.einsum("bij,bjk->bik", a, b), (rand(2, 2, 3),
                                                                      rand(2, 3, 2))),
    "einsum-ellipsis": (lambda a, b: onp.einsum("...i,...i->...", a, b), (rand(2, 3),
                                                                           rand(2, 3))),
    "einsum-sublist": (lambda a, b: onp.einsum(a, [0, 1], b, [1, 2]), (rand(2, 3), rand(3, 2))),
    # reductions
    "sum-axis-keepdims": (lambda a: onp.sum(a, axis=(0, 2), keepdims=True), (rand(2, 3, 4),)),
    "mean-neg-axis": (lambda a: onp.mean(a, axis=-1), (rand(2, 3),)),
    "prod": (lambda a: onp.prod(a, axis=1), (rand(2, 3),)),
    "var-ddof": (lambda a: onp.var(a, axis=0, ddof=1), (rand(4, 3),)),
    "std-keepdims": (lambda a: onp.std(a, axis=1, keepdims=True), (rand(3, 4),)),
    "max-axis": (lambda a: onp.max(a, axis=1), (rand(3, 4),)),
    "min-all": (lambda a: onp.min(a), (rand(3, 4),)),
    "amax-keepdims": (lambda a: onp.amax(a, axis=0, keepdims=True), (rand(3, 4),)),
    "cumsum-flat": (lambda a: onp.cumsum(a), (rand(2, 3),)),
    "cumprod-axis": (lambda a: onp.cumprod(a, axis=0), (rand(3, 2),)),
    "average-weights": (lambda a, w: onp.average(a, axis=1, weights=w), (rand(2, 3),
                                                                          rand(3))),
    "ptp": (lambda a: onp.ptp(a, axis=1), (rand(2, 4),)),
    "trace-offset": (lambda a: onp.trace(a, offset=1), (rand(3, 4),)),
    # shapes
    "transpose-axes": (lambda a: onp.transpose(a, (1, 2, 0)), (rand(2, 3, 4),)),
    "reshape-F": (lambda a: onp.reshape(a, (3, 4), order="F"), (rand(2, 6),)),
    "ravel": (lambda a: onp.ravel(a), (rand(2, 3),)),
    "squeeze": (lambda a: onp.squeeze(a, axis=1), (rand(3, 1, 2),)),
    "expand-dims": (lambda a: onp.expand_dims(a, (0, 2)), (rand(2, 3),)),
    "moveaxis": (lambda a: onp.moveaxis(a, [0, 1], [2, 0]), (rand(2, 3, 4),)),
    "swapaxes": (lambda a: onp.swapaxes(a, 0, 2), (rand(2, 3, 4),)),
    "concatenate-axis1": (lambda a, b: onp.concatenate([a, b], axis=1), (rand(2, 3),
                                                                          rand(2, 2))),
    "concatenate-none": (lambda a, b: onp.concatenate((a, b), axis=None), (rand(2, 2), rand(3))),
    "stack-axis": (lambda a, b: onp.stack([a, b], axis=-1), (rand(2, 3), rand(2, 3))),
    "hstack-vstack": (lambda a, b: onp.vstack([onp.hstack([a, b]), onp.hstack([b, a])]),
                      (rand(2, 2), rand(2, 2))),
    "split-sum": (lambda a: onp.split(a, [1, 3], axis=1)[1], (rand(2, 4),)),
    "array-split": (lambda a: onp.array_split(a, 3)[2], (rand(5),)),
    "tile": (lambda a: onp.tile(a, (2, 1, 2)), (rand(2, 3),)),
    "repeat": (lambda a: onp.repeat(a, [1, 2], axis=0), (rand(2, 3),)),
    "roll": (lambda a: onp.roll(a, -2, axis=1), (rand(2, 5),)),
    "flip-rot90": (lambda a: onp.rot90(onp.flip(a, 0), 1), (rand(3, 4),)),
    "triu-tril": (lambda a: onp.triu(a, 1) + onp.tril(a, -1), (rand(4, 4),)),
    "diag-diagonal": (lambda a: onp.diag(onp.diagonal(a)) + onp.diag(a[0, :2], 1), (rand(3, 3),)),
    "broadcast-to": (lambda a: onp.broadcast_to(a, (2, 3, 4)), (rand(3, 1),)),
    "atleast-3d": (lambda a: onp.atleast_3d(a), (rand(4),)),
    # elementwise and selection
    "where": (lambda a, b: onp.where(a > 0, a, b), (rand(3, 4), rand(3, 4))),
    "clip": (lambda a: onp.clip(a, -0.5, 0.5), (rand(3, 4),)),
    "maximum-broadcast": (lambda a, b: onp.maximum(a, b), (rand(3, 1), rand(4))),
    "power-fractional": (lambda a: onp.power(onp.abs(a) + 1.0, 1.5), (rand(3),)),
    "logaddexp": (lambda a, b: onp.logaddexp(a, b), (rand(3), rand(3))),
    "arctan2": (lambda a, b: onp.arctan2(a, b), (rand(3), rand(3))),
    "hypot": (lambda a, b: onp.hypot(a, b), (rand(3), rand(3))),
    "tanh-exp-log1p": (lambda a: onp.tanh(a) * onp.exp(a) + onp.log1p(a * a), (rand(4),)),
    "take": (lambda a: onp.take(a, [0, 2, 2], axis=1), (rand(2, 3),)),
    "take-along-axis": (lambda a: onp.take_along_axis(a, np.array([[2, 0], [1, 1]]), axis=1),
                        (rand(2, 3),)),
    "fancy-index": (lambda a: a[[0, 1, 1], ::2], (rand(2, 5),)),
    "bool-index": (lambda a: a[np.array([True, False, True])], (rand(3, 2),)),
    "diff": (lambda a: onp.diff(a, n=2, axis=0, prepend=0.0), (rand(4, 2),)),
    "nan-to-num": (lambda a: onp.nan_to_num(a), (rand(3),)),
    # linear algebra
    "inv": (lambda a: onp.linalg.inv(a), (spd(3),)),
    "det": (lambda a: onp.linalg.det(a), (rand(3, 3),)),
    "slogdet": (lambda a: onp.linalg.slogdet(a)[1], (rand(3, 3),)),
    "solve-vector": (lambda a, b: onp.linalg.solve(a, b), (spd(3), rand(3))),
    "solve-matrix": (lambda a, b: onp.linalg.solve(a, b), (spd(3), rand(3, 2))),
    "norm-fro": (lambda a: onp.linalg.norm(a), (rand(3, 3),)),
    "norm-axis": (lambda a: onp.linalg.norm(a, axis=1), (rand(3, 2),)),
    "norm-ord1": (lambda a: onp.linalg.norm(a, ord=1, axis=0), (rand(3, 2),)),
    "cholesky": (lambda a: onp.linalg.cholesky((a + a.T) / 2), (spd(3),)),
    "eigh-values": (lambda a: onp.linalg.eigh((a + a.T) / 2)[0], (spd(3),)),
    "pinv": (lambda a: onp.linalg.pinv(a), (rand(3, 2),)),
    "matrix-power": (lambda a: onp.linalg.matrix_power(a, 3), (rand(2, 2),)),
    "multi-dot": (lambda a, b, c: onp.linalg.multi_dot([a, b, c]), (rand(2, 3), rand(3, 3),
                                                                    rand(3, 1))),
    # what only oxmera.numpy reaches
    "array-of-tensors": (lambda a, b: onp.array([[a[0], b], [b * b, a[1]]]), (rand(2), rand())),
    "r-and-c": (lambda a: onp.r_[a, onp.c_[a, a].sum(1), 1.0], (rand(3),)),
    "append": (lambda a, b: onp.append(a, b, axis=0), (rand(2, 3), rand(1, 3))),
    "vstack-one-array": (lambda a: onp.vstack(a), (rand(3, 2),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grads(name):
    fun, args = CASES[name]
    check_grads(fun, *args)


def test_numpy_program_as_a_whole():
    # A small logistic regression written in plain NumPy style.
    inputs = oxmera.tensor(RNG.standard_normal((6, 3)))
    targets = oxmera.tensor((RNG.standard_normal(6) > 0).astype(np.float64))

    def loss(weights):
        logits = onp.dot(inputs, weights[:3]) + weights[3]
        probabilities = 0.5 * (onp.tanh(logits / 2.0) + 1.0)
        likelihood = probabilities * targets + (1 - probabilities) * (1 - targets)
        return -onp.sum(onp.log(likelihood)) + 0.1 * onp.dot(weights, weights)
    check_grads(loss, rand(4))
