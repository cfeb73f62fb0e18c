"""Functional layers and losses (linear, dropout, convolutions, cross_entropy, ...)."""
from __future__ import annotations

__all__: list = []
