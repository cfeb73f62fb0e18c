"""Elementwise math of one input (exp-family, trigonometric, rounding, ...)."""
from __future__ import annotations

__all__: list = []
METHODS: dict = {}
OPS: list = []
