"""Activations and normalisers: relu, gelu, softmax, log_softmax, logsumexp, ..."""
from __future__ import annotations

__all__: list = []
METHODS: dict = {}
OPS: list = []
