"""`save` / `load` for state dicts, in a safe format: a NumPy `.npz` archive.

The archive holds one array per tensor plus a JSON manifest describing the
structure (dicts with their key types, lists, tuples, numbers, strings,
None) and each tensor's dtype, device and requires_grad. Nothing is pickled,
and loading never runs code (`np.load(..., allow_pickle=False)`).

>>> import io, genesis
>>> layer = genesis.nn.Linear(2, 1)
>>> buffer = io.BytesIO()
>>> genesis.save({"model": layer.state_dict(), "epoch": 3}, buffer)
>>> _ = buffer.seek(0)
>>> checkpoint = genesis.load(buffer)
>>> checkpoint["epoch"], bool((checkpoint["model"]["weight"] == layer.weight).all())
(3, True)
"""
from __future__ import annotations

import json
import os

import numpy as np

from .device import DeviceError, cpu, device as as_device, transfer
from .dtypes import get_dtype
from .nn.parameter import Parameter
from .tensor import Tensor, wrap_array

__all__ = ["save", "load"]

_MANIFEST = "__manifest__"
_FORMAT = "genesis-npz-1"
_SCALARS = (str, int, float, bool, type(None))


def save(obj, f) -> None:
    """Write `obj` (nested dicts/lists/tuples of tensors, numbers, strings, bools, None) to
    `f`, a path or a binary file object. The file name is used as given (no ".npz" added)."""
    arrays: dict = {}
    manifest = {"format": _FORMAT, "root": _encode(obj, arrays, {}, "obj")}
    payload = np.frombuffer(json.dumps(manifest).encode("utf-8"), dtype=np.uint8)
    if hasattr(f, "write"):
        np.savez(f, **{_MANIFEST: payload}, **arrays)
        return
    with open(os.fspath(f), "wb") as handle:
        np.savez(handle, **{_MANIFEST: payload}, **arrays)


def _encode(value, arrays: dict, seen: dict, path: str):
    if isinstance(value, Tensor):
        return {"tensor": _store_tensor(value, arrays, seen, path)}
    if isinstance(value, bool | int | float | str) or value is None:
        return value if not isinstance(value, float) or np.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return _encode(value.item(), arrays, seen, path)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if not isinstance(key, _SCALARS):
                raise TypeError(f"genesis.save can't store the dict key {key!r} "
                                f"({type(key).__name__}) at {path}: keys must be strings, numbers, "
                                "bools or None")
            items.append([key, _encode(item, arrays, seen, f"{path}[{key!r}]")])
        return {"dict": items}
    if isinstance(value, list | tuple):
        encoded = [_encode(item, arrays, seen, f"{path}[{index}]") for index, item in enumerate(value)]
        return {"list" if isinstance(value, list) else "tuple": encoded}
    hint = " (save its state_dict() instead)" if hasattr(value, "state_dict") else ""
    raise TypeError(f"genesis.save can't store a {type(value).__name__} at {path}{hint}: only "
                    "tensors, numbers, strings, bools, None and lists/tuples/dicts of them")


def _store_tensor(tensor: Tensor, arrays: dict, seen: dict, path: str) -> dict:
    """Each tensor object is stored once; a second reference points to the same entry."""
    entry = seen.get(id(tensor))
    if entry is not None:
        return entry
    name = f"t{len(arrays)}"
    array = tensor._host_array()
    dtype = tensor.dtype.name
    if dtype == "bfloat16":  # not a NumPy dtype: store the bits
        array = array.view(np.uint16)
    arrays[name] = array
    entry = seen[id(tensor)] = {"array": name, "dtype": dtype, "device": str(tensor._device),
                                "requires_grad": tensor._requires_grad,
                                "parameter": isinstance(tensor, Parameter)}
    return entry


def load(f, map_location=None):
    """Read what `save` wrote. Tensors go back to the device they were saved from, or to
    `map_location` ("cpu", "cuda:0", a genesis.device) when given."""
    target = as_device(map_location) if map_location is not None else None
    source = f if hasattr(f, "read") else os.fspath(f)
    with np.load(source, allow_pickle=False) as archive:
        if _MANIFEST not in archive.files:
            raise ValueError(f"{f!r} is not a file written by genesis.save (it has no manifest)")
        manifest = json.loads(archive[_MANIFEST].tobytes().decode("utf-8"))
        if manifest.get("format") != _FORMAT:
            raise ValueError(f"unsupported genesis.save format {manifest.get('format')!r}")
        return _decode(manifest["root"], archive, target, {})


def _decode(value, archive, target, built: dict):
    if not isinstance(value, dict):
        return value
    if "tensor" in value:
        return _load_tensor(value["tensor"], archive, target, built)
    if "dict" in value:
        return {key: _decode(item, archive, target, built) for key, item in value["dict"]}
    if "list" in value:
        return [_decode(item, archive, target, built) for item in value["list"]]
    if "tuple" in value:
        return tuple(_decode(item, archive, target, built) for item in value["tuple"])
    if "float" in value:
        return float(value["float"])
    raise ValueError(f"malformed genesis.save manifest entry {value!r}")


def _load_tensor(entry: dict, archive, target, built: dict) -> Tensor:
    name = entry["array"]
    if name in built:
        return built[name]
    array = archive[name]
    dtype = get_dtype(entry["dtype"])
    if entry["dtype"] == "bfloat16":
        array = array.view(dtype.numpy_dtype)
    device = target if target is not None else as_device(entry["device"])
    try:
        data = transfer(array, cpu, device)
    except DeviceError as error:
        raise DeviceError(f"{error}; the tensor was saved on {entry['device']}: pass "
                          "map_location='cpu' to genesis.load to load it on the CPU") from None
    tensor = wrap_array(data, device)
    if entry["parameter"]:
        tensor = Parameter(tensor, requires_grad=entry["requires_grad"])
    elif entry["requires_grad"]:
        tensor.requires_grad_()
    built[name] = tensor
    return tensor
