"""`save` / `load` for state dicts, in a safe format: a NumPy `.npz` archive.

The archive holds one array per tensor plus a JSON manifest describing the
structure (dicts with their key types, lists, tuples, numbers, strings,
None) and each tensor's dtype, device and requires_grad. Nothing is pickled,
and loading never runs code (`np.load(..., allow_pickle=False)`).

Containers come back as the types PyTorch's pickles give back, as far as that is safe:
an OrderedDict as an OrderedDict (with a state dict's `_metadata`), a `genesis.Size` as a
Size, a NumPy scalar as a NumPy scalar of its dtype, and a namedtuple as its class when
that class is found, without importing anything, in a module already imported (looked up
by module and qualified name in `sys.modules`, never by running the module's code), with
the same fields; otherwise as a plain tuple. Other dict, list and tuple subclasses come
back as dict, list and tuple.

Tensors that share memory (a tensor and its slices, a weight and its `.t()`) are saved as
one array and a window on it for each, and load sharing it again, offsets and strides kept,
as in PyTorch (see `genesis.saved_storages`).

genesis.save writes format "genesis-npz-2"; genesis.load also reads "genesis-npz-1", the
format of earlier genesis versions (no windows, no container types beyond dict, list and
tuple).

Saving to a path is atomic: the archive is written to a temporary file beside it and
renamed over it at the end, so an interrupted save (an exception, Ctrl-C, a full
disk) leaves the previous checkpoint as it was. A read-only file (`chmod 444`) is never
replaced: saving over it raises PermissionError naming it. Loading a file that is not a
genesis checkpoint (truncated, random bytes, another zip, a torch.save file) raises
`CheckpointError` naming the file and what is wrong with it.

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

import errno
import io
import json
import os
import struct
import sys
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from .device import DeviceError, cpu, device as as_device, transfer
from .dtypes import get_dtype
from .nn.parameter import Parameter
from .saved_storages import shared_windows, sharing_key, window_on, window_reach
from .sizes import Size, describe_value, with_article
from .tensor import Tensor, wrap_array
from .utils.atomic_file import atomic_writer, is_read_only

__all__ = ["save", "load", "CheckpointError", "EmptyCheckpointError"]

_MANIFEST = "__manifest__"
_FORMAT = "genesis-npz-2"  # windows on shared storage, and the container types
_FORMATS_READ = ("genesis-npz-1", _FORMAT)
_SCALARS = (str, int, float, bool, type(None))
_ZIP_START = b"PK\x03\x04"


class CheckpointError(ValueError, RuntimeError):
    """A file that is not a readable genesis checkpoint. A ValueError (the data is wrong) and
    the RuntimeError that torch.load raises for a corrupt archive."""


class EmptyCheckpointError(CheckpointError, EOFError):
    """An empty file or stream given to load: also the EOFError torch.load raises for one."""


def save(obj, f, pickle_module=None, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write `obj` (nested dicts/lists/tuples of tensors, NumPy arrays, numbers, strings,
    bools, None) to `f`, a path or a binary file object. The file name is used as given (no
    ".npz" added); a path is replaced atomically (the old file stays whole if the save
    fails). A path that is a read-only file raises PermissionError and the file is left as
    it was. PyTorch's pickle options are accepted and change nothing: nothing is pickled."""
    target = _target(f, "save", "wb")
    arrays: dict = {}
    saved: dict = {}
    root = _encode(obj, arrays, saved, "obj", set())
    _store_tensor_data(list(saved.values()), arrays)
    manifest = {"format": _FORMAT, "root": root}
    payload = np.frombuffer(json.dumps(manifest).encode("utf-8"), dtype=np.uint8)
    if not isinstance(target, str):
        np.savez(f, **{_MANIFEST: payload}, **arrays)
        return
    if os.path.isdir(target):
        raise IsADirectoryError(errno.EISDIR, "genesis.save was given a folder; name a file in it",
                                target)
    if is_read_only(target):
        raise PermissionError(errno.EACCES, "genesis.save cannot write a read-only file; chmod "
                              "u+w it, or save elsewhere", target)
    with atomic_writer(target) as handle:
        np.savez(handle, **{_MANIFEST: payload}, **arrays)


def _target(f, verb: str, mode: str):
    """A path as a str, or `f` itself when it is a binary file object; a TypeError otherwise."""
    if isinstance(f, str | bytes | os.PathLike):
        return os.fsdecode(f)
    method = "write" if verb == "save" else "read"
    if not hasattr(f, method):
        raise TypeError(f"genesis.{verb} expects a path or a binary file object with a {method}() "
                        f"method, got {describe_value(f)}")
    if isinstance(f, io.TextIOBase):
        raise TypeError(f"genesis.{verb} needs a binary file object, got a text one "
                        f"({type(f).__name__}); open the file with mode '{mode}'")
    return f


def _encode(value, arrays: dict, seen: dict, path: str, open_containers: set):
    if isinstance(value, Tensor):
        return {"tensor": _store_tensor(value, arrays, seen, path)}
    if isinstance(value, bool | int | float | str) or value is None:
        return value if not isinstance(value, float) or np.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return {"numpy_scalar": _encode(value.item(), arrays, seen, path, open_containers),
                "dtype": value.dtype.name}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise TypeError(f"genesis.save can't store a NumPy array (ndarray) of dtype "
                            f"{value.dtype} at {path}: only numeric and bool arrays (nothing is "
                            "pickled)")
        name = f"a{len(arrays)}"
        arrays[name] = np.ascontiguousarray(value)
        return {"ndarray": name, "dtype": value.dtype.name}
    if not isinstance(value, dict | list | tuple):
        hint = " (save its state_dict() instead)" if hasattr(value, "state_dict") else ""
        raise TypeError(f"genesis.save can't store {with_article(type(value).__name__)} at "
                        f"{path}{hint}: only tensors, numbers, strings, bools, None and "
                        "lists/tuples/dicts of them")
    if id(value) in open_containers:  # JSON, like the manifest, has no way to say "this again"
        raise ValueError(f"genesis.save can't store {path}: it is a {type(value).__name__} that "
                         "contains itself (a cycle); store the data without the back-reference")
    open_containers.add(id(value))
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            if not isinstance(key, _SCALARS):
                raise TypeError(f"genesis.save can't store the dict key {key!r} "
                                f"({type(key).__name__}) at {path}: keys must be strings, numbers, "
                                "bools or None")
            items.append([key, _encode(item, arrays, seen, f"{path}[{key!r}]", open_containers)])
        encoded = {"ordered_dict" if isinstance(value, OrderedDict) else "dict": items}
        metadata = getattr(value, "_metadata", None) if isinstance(value, OrderedDict) else None
        if metadata is not None:  # what Module.state_dict() records about each module
            encoded["metadata"] = _encode(metadata, arrays, seen, f"{path}._metadata", open_containers)
    elif isinstance(value, Size):
        encoded = {"size": [int(extent) for extent in value]}
    else:
        items = [_encode(item, arrays, seen, f"{path}[{index}]", open_containers)
                 for index, item in enumerate(value)]
        fields = getattr(type(value), "_fields", None)
        if isinstance(value, tuple) and isinstance(fields, tuple):  # a namedtuple
            encoded = {"namedtuple": [type(value).__module__, type(value).__qualname__],
                       "fields": list(fields), "items": items}
        else:
            encoded = {"list" if isinstance(value, list) else "tuple": items}
    open_containers.discard(id(value))
    return encoded


def _store_tensor(tensor: Tensor, arrays: dict, seen: dict, path: str) -> dict:
    """Each tensor object is entered once; a second reference points to the same entry. Its
    data is stored once all tensors are known (`_store_tensor_data`)."""
    known = seen.get(id(tensor))
    if known is not None:
        return known[1]
    entry = {"dtype": tensor.dtype.name, "device": str(tensor._device),
             "requires_grad": tensor._requires_grad, "parameter": isinstance(tensor, Parameter)}
    seen[id(tensor)] = (tensor, entry)
    return entry


def _store_tensor_data(saved: list, arrays: dict) -> None:
    """Put each saved tensor's data in `arrays` and name it in its entry: its own array, or,
    for tensors that share memory, one array of the storage they cover and each one's window
    on it."""
    groups: dict = {}
    for tensor, entry in saved:
        key = sharing_key(tensor)
        groups.setdefault(("own", id(tensor)) if key is None else key, []).append((tensor, entry))
    for members in groups.values():
        if len(members) == 1:
            tensor, entry = members[0]
            entry["array"] = _add_array(arrays, "t", tensor._host_array(), tensor.dtype.name)
            continue
        tensors = [tensor for tensor, _ in members]
        windows, span = shared_windows(tensors)
        storage = _add_array(arrays, "s", transfer(span, tensors[0]._device, cpu), tensors[0].dtype.name)
        for index, ((_, entry), (offset, shape, stride)) in enumerate(zip(members, windows)):
            entry.update(storage=storage, view=f"{storage}.{index}", offset=offset,
                         shape=list(shape), stride=list(stride))


def _add_array(arrays: dict, prefix: str, array: np.ndarray, dtype: str) -> str:
    """Add `array` to what the archive will hold; its name there."""
    name = f"{prefix}{len(arrays)}"
    arrays[name] = array.view(np.uint16) if dtype == "bfloat16" else array  # bfloat16: the bits
    return name


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read what `save` wrote. Tensors go back to the device they were saved from, or to
    `map_location`: a device ("cpu", "cuda:0", a genesis.device), a dict from the saved
    device's name to a device (`{"cuda:0": "cpu"}`), or a function of (tensor on the CPU,
    saved device's name) that returns the tensor to use, as PyTorch's
    `lambda storage, location: storage`. Loading never runs code, so `weights_only` (either
    value) and PyTorch's other pickle options are accepted and change nothing.

    A file that is not a genesis checkpoint raises CheckpointError naming it:

    >>> import io, genesis
    >>> genesis.load(io.BytesIO(b"not a checkpoint"))
    Traceback (most recent call last):
    ...
    genesis.serialization.CheckpointError: the file object is not a genesis checkpoint: it is not a zip archive (genesis.save writes a NumPy .npz archive), so it is not a file genesis.save wrote
    """
    target = _placement(map_location)
    source = _target(f, "load", "rb")
    name = repr(source) if isinstance(source, str) else _file_object_name(source)
    _require_zip(source, name)
    try:
        with np.load(source, allow_pickle=False) as archive:
            manifest = _manifest(archive, name)
            return _decode(manifest["root"], _Archive(archive, name), target, {})
    except (CheckpointError, DeviceError):
        raise
    # what zipfile, zlib and NumPy's .npy reader raise for damaged bytes (zipfile even raises
    # RuntimeError "encrypted" or NotImplementedError "compression method" for a flipped bit)
    except (zipfile.BadZipFile, zlib.error, struct.error, EOFError, OSError, ValueError,
            RuntimeError) as error:
        raise CheckpointError(f"{name} is a damaged genesis checkpoint (truncated or corrupted?): "
                              f"{type(error).__name__}: {error}") from None


def _file_object_name(handle) -> str:
    name = getattr(handle, "name", None)
    return repr(name) if isinstance(name, str) else "the file object"


def _require_zip(source, name: str) -> None:
    """CheckpointError unless `source` is a zip archive (what np.savez writes), with a guess
    at what it is instead."""
    if isinstance(source, str):
        with open(source, "rb") as handle:
            start = handle.read(4)
        has_directory = zipfile.is_zipfile(source)
    else:
        position = source.tell()
        start = source.read(4)
        source.seek(position)
        has_directory = zipfile.is_zipfile(source)
        source.seek(position)
    if start == _ZIP_START and has_directory:  # np.load reads the start, zipfile the end
        return
    if not start:
        raise EmptyCheckpointError(f"{name} is not a genesis checkpoint: the file is empty, so it "
                                   "is not a file genesis.save wrote")
    if start.startswith(b"PK") or has_directory:
        what = "it is a damaged zip archive (truncated or corrupted)"
    elif start.startswith(b"\x80"):
        what = "it is a Python pickle (an old-style torch.save file?), which genesis never unpickles"
    else:
        what = "it is not a zip archive (genesis.save writes a NumPy .npz archive)"
    raise CheckpointError(f"{name} is not a genesis checkpoint: {what}, so it is not a file "
                          "genesis.save wrote")


def _manifest(archive, name: str) -> dict:
    if _MANIFEST not in archive.files:
        if any(entry.endswith("data.pkl") for entry in archive.zip.namelist()):
            raise CheckpointError(
                f"{name} is a PyTorch checkpoint (torch.save), not a genesis one: load it with "
                "torch.load and make genesis tensors of its values (genesis.tensor(t.numpy()))")
        entries = ", ".join(archive.zip.namelist()[:5]) or "none"
        raise CheckpointError(f"{name} is not a file written by genesis.save: it has no manifest "
                              f"(a zip/npz written by something else; its entries: {entries})")
    try:
        manifest = json.loads(archive[_MANIFEST].tobytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise CheckpointError(f"{name}: the genesis.save manifest is damaged ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") not in _FORMATS_READ:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise CheckpointError(f"{name}: unsupported genesis.save format {found!r} (this genesis "
                              f"reads {' and '.join(map(repr, _FORMATS_READ))})")
    if "root" not in manifest:
        raise CheckpointError(f"{name}: the genesis.save manifest has no 'root' entry")
    return manifest


class _Archive:
    """An open archive and its name, for messages about entries that are missing or wrong."""

    def __init__(self, archive, name: str):
        self.archive, self.name = archive, name

    def malformed(self, detail: str) -> CheckpointError:
        return CheckpointError(f"{self.name}: malformed genesis checkpoint: {detail}")

    def array(self, name, dtype: str) -> np.ndarray:
        if not isinstance(name, str) or name not in self.archive.files:
            raise self.malformed(f"the tensor array {name!r} is missing")
        try:
            array = self.archive[name]
        except ValueError as error:  # an object array, or a damaged .npy header
            raise self.malformed(f"the array {name!r} can't be read safely ({error})") from None
        stored = "uint16" if dtype == "bfloat16" else dtype
        if array.dtype.name != stored:
            raise self.malformed(f"the array {name!r} holds {array.dtype.name}, but the manifest "
                                 f"says {dtype}")
        return array


def _decode(value, archive: _Archive, target, built: dict):
    if not isinstance(value, dict):
        return value
    if "tensor" in value:
        return _load_tensor(value["tensor"], archive, target, built)
    keys = set(value)
    if keys == {"ndarray", "dtype"} and isinstance(value["dtype"], str):
        return archive.array(value["ndarray"], value["dtype"])
    if keys == {"numpy_scalar", "dtype"}:
        return _numpy_scalar(_decode(value["numpy_scalar"], archive, target, built), value["dtype"],
                             archive)
    if keys == {"namedtuple", "fields", "items"} and isinstance(value["items"], list):
        items = [_decode(item, archive, target, built) for item in value["items"]]
        return _namedtuple(value["namedtuple"], value["fields"], items, archive)
    if keys in ({"ordered_dict"}, {"ordered_dict", "metadata"}) and _are_pairs(value["ordered_dict"]):
        loaded = OrderedDict((key, _decode(item, archive, target, built))
                             for key, item in value["ordered_dict"])
        if "metadata" in value:
            loaded._metadata = _decode(value["metadata"], archive, target, built)
        return loaded
    kind = next(iter(value), None) if len(value) == 1 else None
    items = value[kind] if kind is not None else None
    if kind == "dict" and _are_pairs(items):
        return {key: _decode(item, archive, target, built) for key, item in items}
    if kind in ("list", "tuple") and isinstance(items, list):
        decoded = [_decode(item, archive, target, built) for item in items]
        return decoded if kind == "list" else tuple(decoded)
    if kind == "size" and isinstance(items, list) and all(
            type(extent) is int and extent >= 0 for extent in items):
        return Size(items)
    if kind == "float" and items in ("nan", "inf", "-inf"):
        return float(items)
    raise archive.malformed(f"unknown manifest entry {value!r:.80}")


def _are_pairs(items) -> bool:
    """Whether a dict's manifest items are [key, value] pairs with keys genesis.save writes."""
    return isinstance(items, list) and all(
        isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], _SCALARS) for pair in items)


def _numpy_scalar(value, dtype, archive: _Archive):
    """A NumPy scalar of a numeric or bool `dtype` (a name) holding `value`."""
    try:
        numpy_dtype = np.dtype(dtype) if isinstance(dtype, str) else None
    except TypeError:
        numpy_dtype = None
    if numpy_dtype is None or numpy_dtype.kind not in "biuf" or \
            not isinstance(value, bool | int | float):
        raise archive.malformed(f"the NumPy scalar {value!r:.40} of dtype {dtype!r:.40} is not one")
    return numpy_dtype.type(value)


def _namedtuple(where, fields, items: list, archive: _Archive) -> tuple:
    """`items` as the namedtuple class saved as [module, qualified name], if it is found in a
    module already imported (looked up in the module's and classes' namespaces, so no code
    runs) and has the saved `fields`; else as a plain tuple."""
    if not (isinstance(where, list) and len(where) == 2 and all(isinstance(part, str) for part in where)
            and isinstance(fields, list) and all(isinstance(field, str) for field in fields)):
        raise archive.malformed(f"the namedtuple entry {where!r:.60} is not one")
    module, qualified_name = where
    found = sys.modules.get(module)
    for part in qualified_name.split("."):
        found = vars(found).get(part) if hasattr(found, "__dict__") else None
    if isinstance(found, type) and issubclass(found, tuple) and \
            getattr(found, "_fields", None) == tuple(fields) and len(items) == len(fields):
        return found._make(items)
    return tuple(items)


_TENSOR_KEYS = {"dtype": str, "device": str, "requires_grad": bool, "parameter": bool}
_OWN_ARRAY_KEYS = {"array": str}
_WINDOW_KEYS = {"storage": str, "view": str, "offset": int, "shape": list, "stride": list}


def _load_tensor(entry: dict, archive: _Archive, target, built: dict) -> Tensor:
    """The tensor of a manifest entry; an entry met again (the same saved tensor) gives the
    tensor already built, and the windows on one storage share its memory."""
    window = isinstance(entry, dict) and "storage" in entry
    expected = _TENSOR_KEYS | (_WINDOW_KEYS if window else _OWN_ARRAY_KEYS)
    if not isinstance(entry, dict) or any(type(entry.get(key)) is not kind  # JSON's exact types
                                          for key, kind in expected.items()):
        raise archive.malformed(f"a tensor entry must have {sorted(expected)}, got "
                                f"{entry!r:.80}")
    name = entry["view"] if window else entry["array"]
    if name in built:
        return built[name]
    if not window:
        tensor = _placed(archive.array(name, entry["dtype"]), entry, archive, target)
    else:
        storage_key = ("storage", entry["storage"])
        if storage_key not in built:
            built[storage_key] = _placed(archive.array(entry["storage"], entry["dtype"]), entry,
                                         archive, target)
        tensor = _window_tensor(built[storage_key], entry, archive)
    built[name] = _with_grad_state(tensor, entry)
    return built[name]


def _placed(array: np.ndarray, entry: dict, archive: _Archive, target) -> Tensor:
    """`array` (as read, bfloat16 as its bits) as a tensor of the entry's dtype on the device
    `map_location` (`target`) chooses."""
    try:
        dtype = get_dtype(entry["dtype"])
    except TypeError as error:
        raise archive.malformed(str(error)) from None
    if entry["dtype"] == "bfloat16":
        array = array.view(dtype.numpy_dtype)
    if callable(target):  # map_location=function(tensor on the CPU, saved device's name)
        tensor = target(wrap_array(array, cpu), entry["device"])
        if not isinstance(tensor, Tensor):
            raise TypeError(f"map_location returned {with_article(type(tensor).__name__)}; it must "
                            "return the tensor it was given (or a copy of it on a device)")
        return tensor
    if isinstance(target, dict):
        device = as_device(target.get(entry["device"], entry["device"]))
    else:
        device = target if target is not None else as_device(entry["device"])
    try:
        data = transfer(array, cpu, device)
    except DeviceError as error:
        raise DeviceError(f"{error}; the tensor was saved on {entry['device']}: pass "
                          "map_location='cpu' to genesis.load to load it on the CPU") from None
    return wrap_array(data, device)


def _window_tensor(storage: Tensor, entry: dict, archive: _Archive) -> Tensor:
    """The entry's window (offset, shape, stride) on the loaded storage, sharing its memory;
    a window reaching outside the storage is a malformed checkpoint, never a view made."""
    offset, shape, stride = entry["offset"], entry["shape"], entry["stride"]
    if len(shape) != len(stride) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in shape + stride) or \
            any(n <= 0 for n in shape) or offset < 0:
        raise archive.malformed(f"the window {entry['view']!r} (offset {offset}, shape {shape}, "
                                f"stride {stride}) is not a window")
    low, high = window_reach(offset, shape, stride)
    data = storage._data
    if low < 0 or high > data.size or data.ndim != 1:
        raise archive.malformed(f"the window {entry['view']!r} reaches elements {low} to "
                                f"{high - 1}, outside its storage of {data.size}")
    return wrap_array(window_on(data, storage._device.xp, offset, tuple(shape), tuple(stride)),
                      storage._device)


def _with_grad_state(tensor: Tensor, entry: dict) -> Tensor:
    """The loaded tensor as it was saved: a Parameter, or requiring grad, or neither."""
    if entry["parameter"]:
        return Parameter(tensor, requires_grad=entry["requires_grad"])
    if entry["requires_grad"]:
        tensor.requires_grad_()
    return tensor


def _placement(map_location):
    """`map_location` for _load_tensor: None, a device, a dict of saved name -> device name
    (names as devices normalise them), or a function."""
    if map_location is None or callable(map_location) and not isinstance(map_location, str):
        return map_location
    if isinstance(map_location, dict):
        return {str(as_device(key)): str(as_device(value)) for key, value in map_location.items()}
    return as_device(map_location)
