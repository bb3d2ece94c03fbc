"""``oxmera.autograd.functional``: vjp, jvp, jacobian, hessian, hvp, vhp."""

__all__ = []
