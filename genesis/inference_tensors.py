"""Inference tensors: the tensors made inside `inference_mode()`, which, as in PyTorch,
refuse to be saved for a backward or changed in place once the mode is over. A tensor is
one when its version counter is an `InferenceVersionCounter` (views share their base's).

>>> import genesis
>>> with genesis.inference_mode():
...     made_inside = genesis.ones(2)
>>> is_inference_tensor(made_inside), is_inference_tensor(genesis.ones(2))
(True, False)
"""
from __future__ import annotations

import threading

__all__ = ["InferenceVersionCounter", "inference_state", "inference_users", "enter_inference_mode",
           "leave_inference_mode", "new_version_counter", "is_inference_tensor",
           "refuse_inference_tensor_update"]


class InferenceVersionCounter(list):
    """The version counter of an inference tensor (one made inside `inference_mode()`): its
    type is the mark `is_inference()` reads, and views share it as they share any counter."""


class _InferenceState(threading.local):
    depth = 0  # this thread's nesting of inference_mode()


inference_state = _InferenceState()
inference_users = [0]  # every thread's nesting together: 0 lets tensor creation skip the check


def enter_inference_mode(levels: int = 1) -> None:
    inference_state.depth += levels
    inference_users[0] += levels


def leave_inference_mode(levels: int = 1) -> None:
    inference_state.depth -= levels
    inference_users[0] -= levels


def new_version_counter() -> list:
    if inference_users[0] and inference_state.depth:
        return InferenceVersionCounter((0,))
    return [0]


def is_inference_tensor(tensor) -> bool:
    return tensor._version_counter.__class__ is InferenceVersionCounter


def refuse_inference_tensor_update(tensor, op: str) -> None:
    """PyTorch's error for changing an inference tensor in place outside inference_mode."""
    if tensor._version_counter.__class__ is InferenceVersionCounter and not inference_state.depth:
        raise RuntimeError(f"{op}: Inplace update to inference tensor outside InferenceMode is not "
                           "allowed: the tensor was made inside inference_mode(). You can make a "
                           "clone to get a normal tensor before doing inplace update.")
