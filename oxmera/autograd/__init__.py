"""Automatic differentiation: the engine's entry points, grad mode and checks.

``backward`` and ``grad`` run the compiled engine; ``no_grad`` and friends
switch recording per thread; ``gradcheck``/``gradgradcheck`` compare
gradients with finite differences; ``graph`` looks inside the graph
(saved-tensor hooks, node attributes, pictures). ``Tensor``, ``GradFn`` and
``AutogradMeta`` are the compiled core's classes.
"""
from oxmera._core.autograd import AutogradMeta, GradFn, Tensor
from oxmera.autograd.engine import backward, grad
from oxmera.autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                                       set_grad_enabled)
from oxmera.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from oxmera.autograd import functional, graph
from oxmera.autograd.anomaly import (detect_anomaly, is_anomaly_check_nan_enabled,
                                     is_anomaly_enabled, set_detect_anomaly)
from oxmera.autograd.explain import explain
from oxmera.autograd.function import Function, FunctionCtx, once_differentiable

__all__ = ["AutogradMeta", "GradFn", "Tensor", "backward", "grad", "enable_grad",
           "inference_mode", "is_grad_enabled", "no_grad", "set_grad_enabled",
           "GradcheckError", "gradcheck", "gradgradcheck", "functional",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "explain", "Function", "FunctionCtx",
           "once_differentiable", "graph"]
