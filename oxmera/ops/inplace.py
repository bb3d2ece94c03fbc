"""In-place ops: add_, sub_, mul_, div_, pow_, clamp_, zero_, fill_, copy_, setitem."""

__all__ = []
