"""Convolution and pooling ops: conv1d, conv2d, max_pool2d, avg_pool2d (im2col + matmul)."""

__all__ = []
