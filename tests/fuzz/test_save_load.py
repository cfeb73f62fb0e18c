"""Fuzzing genesis.save / genesis.load: objects it can't store, cycles, truncated and random
files, foreign archives, bad paths, and saves that fail half way.

Every refusal names the file (or the place in the object) and says what is wrong; a save
that fails never damages the previous checkpoint at that path.
"""
from __future__ import annotations

import io
import os
import stat
import zipfile

import numpy as np
import pytest
from hypothesis import given, strategies as st

import genesis
from genesis import nn
from genesis.serialization import CheckpointError

from .compare import FUZZ, genesis_error, running_as_root, torch

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 63 - 1),
                    st.floats(allow_nan=False), st.text(max_size=5))
STORABLE = st.recursive(
    st.one_of(SCALARS, st.builds(lambda values: genesis.tensor(values), st.lists(
        st.floats(-1e3, 1e3, width=32), max_size=3))),
    lambda children: st.one_of(st.lists(children, max_size=3), st.tuples(children, children),
                               st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 9)),
                                               children, max_size=3)),
    max_leaves=10)
UNSTORABLE = st.sampled_from([object(), {1, 2}, np.array(["a", "b"]), b"bytes", print, nn.Linear(1, 1),
                              1 + 2j, range(3)])


def _same(a, b) -> bool:
    if isinstance(a, genesis.Tensor):
        return isinstance(b, genesis.Tensor) and a.dtype == b.dtype and a.tolist() == b.tolist()
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[key], b[key]) for key in a)
    return a == b and type(a) is type(b)


def _round_trip(obj):
    buffer = io.BytesIO()
    genesis.save(obj, buffer)
    buffer.seek(0)
    return genesis.load(buffer)


@FUZZ
@given(obj=STORABLE)
def test_what_can_be_stored_comes_back_the_same(obj):
    assert _same(obj, _round_trip(obj))


@FUZZ
@given(obj=STORABLE, bad=UNSTORABLE, data=st.data())
def test_what_cannot_be_stored_is_refused_with_its_place(obj, bad, data):
    container = data.draw(st.sampled_from(["list", "dict", "tuple"]))
    wrapped = {"list": [obj, bad], "dict": {"ok": obj, "bad": bad}, "tuple": (obj, bad)}[container]
    where = {"list": "obj[1]", "dict": "obj['bad']", "tuple": "obj[1]"}[container]
    error = genesis_error(lambda: genesis.save(wrapped, io.BytesIO()),
                          culprits=[where, type(bad).__name__])
    assert isinstance(error, TypeError)


def _dict_holding_itself():
    state = {}
    state["self"] = state
    return state


def _list_holding_itself():
    items = [1]
    items.append(items)
    return items


def _cycle_through_a_nested_dict():
    state = {}
    state["x"] = [0, {"y": state}]
    return state


@pytest.mark.parametrize("make", [_dict_holding_itself, _list_holding_itself,
                                  _cycle_through_a_nested_dict])
def test_a_structure_that_contains_itself_is_refused_not_recursed(make, tmp_path):
    """PyTorch pickles cycles; a genesis checkpoint is JSON plus arrays, which can't say
    "this again", so the save is refused, naming where the cycle closes, before the file
    is touched."""
    path = tmp_path / "cyclic.gen"
    error = genesis_error(lambda: genesis.save(make(), path), culprits=["contains itself", "obj["])
    assert isinstance(error, ValueError) and not path.exists()


def _checkpoint(tmp_path, values=(1.0, 2.0)) -> bytes:
    path = tmp_path / "good.gen"
    model = nn.Linear(2, 1)
    genesis.save({"model": model.state_dict(), "values": genesis.tensor(list(values)), "epoch": 3}, path)
    return path.read_bytes()


@FUZZ
@given(cut=st.floats(0, 0.999))
def test_a_truncated_checkpoint_names_the_file(tmp_path_factory, cut):
    folder = tmp_path_factory.mktemp("truncated")
    data = _checkpoint(folder)
    path = folder / "truncated.gen"
    path.write_bytes(data[:int(len(data) * cut)])
    error = genesis_error(lambda: genesis.load(path), culprits=[str(path)])
    assert isinstance(error, CheckpointError) and isinstance(error, RuntimeError | ValueError)


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_are_not_a_checkpoint(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("random") / "random.bin"
    path.write_bytes(data)
    error = genesis_error(lambda: genesis.load(path), culprits=[str(path), "not a genesis checkpoint"])
    assert isinstance(error, CheckpointError)


@FUZZ
@given(position=st.integers(0, 10 ** 6), flip=st.integers(1, 255))
def test_a_corrupted_byte_is_caught_or_harmless(tmp_path_factory, position, flip):
    """One damaged byte: either the load still gives the saved values (the byte was in a
    part nothing reads), or a CheckpointError names the file; never another exception."""
    folder = tmp_path_factory.mktemp("corrupted")
    data = bytearray(_checkpoint(folder))
    data[position % len(data)] ^= flip
    path = folder / "corrupted.gen"
    path.write_bytes(bytes(data))
    try:
        loaded = genesis.load(path)
    except CheckpointError as error:
        assert str(path) in str(error)
    else:
        assert loaded["epoch"] == 3 or isinstance(loaded, dict)


def test_foreign_archives_say_what_they_are(tmp_path):
    zipped = tmp_path / "other.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("notes.txt", "hello")
    plain = tmp_path / "plain.npz"
    np.savez(plain, weights=np.ones(2))
    empty = tmp_path / "empty.gen"
    empty.write_bytes(b"")
    for path, says in [(zipped, "notes.txt"), (plain, "weights.npy"), (empty, "empty")]:
        error = genesis_error(lambda path=path: genesis.load(path), culprits=[str(path), says])
        assert isinstance(error, CheckpointError)
    assert isinstance(error, EOFError)  # an empty file: what torch.load raises for one
    genesis_error(lambda: genesis.load(io.BytesIO()), culprits=["empty"],
                  like=lambda: torch.load(io.BytesIO()))


def test_a_torch_checkpoint_is_recognised(tmp_path):
    if torch is None:
        pytest.skip("PyTorch is not installed")
    path = tmp_path / "model.pt"
    torch.save({"weight": torch.ones(2)}, path)
    genesis_error(lambda: genesis.load(path), culprits=[str(path), "PyTorch checkpoint", "torch.load"])
    legacy = tmp_path / "legacy.pt"
    torch.save({"weight": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    genesis_error(lambda: genesis.load(legacy), culprits=[str(legacy), "pickle"])


def test_paths_that_are_not_files(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    for call in (lambda: genesis.load(folder), lambda: genesis.save({}, folder)):
        error = genesis_error(call, culprits=[str(folder)])
        assert isinstance(error, IsADirectoryError)
    missing = tmp_path / "missing.gen"
    error = genesis_error(lambda: genesis.load(missing), culprits=[str(missing)],
                          like=lambda: torch.load(missing))
    assert isinstance(error, FileNotFoundError)
    error = genesis_error(lambda: genesis.save({}, tmp_path / "no" / "such" / "x.gen"), culprits=["x.gen"])
    assert isinstance(error, FileNotFoundError)


@pytest.mark.parametrize("target", [3, None, 2.5, ["a.gen"]])
def test_save_and_load_need_a_path_or_a_binary_file(target):
    for verb, call in [("save", lambda: genesis.save({}, target)), ("load", lambda: genesis.load(target))]:
        error = genesis_error(call, culprits=[f"genesis.{verb}", repr(target)])
        assert isinstance(error, TypeError)


def test_text_files_are_refused_with_the_mode_to_use():
    genesis_error(lambda: genesis.save({}, io.StringIO()), culprits=["'wb'"])
    genesis_error(lambda: genesis.load(io.StringIO("x")), culprits=["'rb'"])


def test_a_read_only_folder(tmp_path, monkeypatch):
    folder = tmp_path / "read-only"
    folder.mkdir()
    path = folder / "model.gen"
    if running_as_root():  # root writes anywhere: refuse the temporary file as the OS would
        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied")
        monkeypatch.setattr("tempfile.mkstemp", refuse)
    else:
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        error = genesis_error(lambda: genesis.save({"w": genesis.ones(1)}, path), culprits=[str(path)])
    finally:
        folder.chmod(stat.S_IRWXU)
    assert isinstance(error, PermissionError) and not path.exists()


@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError, MemoryError])
def test_an_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch, failure):
    path = tmp_path / "model.gen"
    genesis.save({"w": genesis.ones(3), "step": 1}, path)
    before = path.read_bytes()
    write = np.savez

    def half_written(handle, **arrays):
        write(io.BytesIO(), **arrays)  # the work, then a partial file and the failure
        handle.write(b"PK\x03\x04 half of a zip")
        raise failure("interrupted")

    monkeypatch.setattr(np, "savez", half_written)
    with pytest.raises(failure):
        genesis.save({"w": genesis.zeros(3), "step": 2}, path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert genesis.load(path)["step"] == 1
    assert os.listdir(tmp_path) == ["model.gen"]  # no temporary file left behind


def test_an_unstorable_object_never_touches_the_previous_checkpoint(tmp_path):
    path = tmp_path / "model.gen"
    genesis.save({"step": 1}, path)
    before = path.read_bytes()
    genesis_error(lambda: genesis.save({"step": 2, "model": nn.Linear(1, 1)}, path),
                  culprits=["state_dict()"])
    assert path.read_bytes() == before


def test_a_save_keeps_the_file_permissions(tmp_path):
    path = tmp_path / "model.gen"
    genesis.save({"step": 1}, path)
    path.chmod(0o640)
    genesis.save({"step": 2}, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640 and genesis.load(path)["step"] == 2


MALFORMED = [
    ({"format": "genesis-npz-0", "root": 1}, {}, "unsupported genesis.save format"),
    ([1, 2], {}, "unsupported genesis.save format"),
    ({"format": "genesis-npz-1"}, {}, "no 'root'"),
    ({"format": "genesis-npz-1", "root": {"tensor": {"array": "t0"}}}, {"t0": np.ones(2)}, "tensor entry"),
    ({"format": "genesis-npz-1", "root": {"tensor": {"array": "t9", "dtype": "float32", "device": "cpu",
                                                    "requires_grad": False, "parameter": False}}},
     {}, "'t9' is missing"),
    ({"format": "genesis-npz-1", "root": {"tensor": {"array": "t0", "dtype": "float99", "device": "cpu",
                                                    "requires_grad": False, "parameter": False}}},
     {"t0": np.ones(2)}, "float99"),
    ({"format": "genesis-npz-1", "root": {"tensor": {"array": "t0", "dtype": "float32", "device": "cpu",
                                                    "requires_grad": False, "parameter": False}}},
     {"t0": np.array(["text"])}, "holds str"),
    ({"format": "genesis-npz-1", "root": {"set": [1, 2]}}, {}, "unknown manifest entry"),
    ({"format": "genesis-npz-2", "root": {"numpy_scalar": 1, "dtype": "object"}}, {}, "NumPy scalar"),
    ({"format": "genesis-npz-2", "root": {"numpy_scalar": 1, "dtype": "not a dtype"}}, {}, "NumPy scalar"),
    ({"format": "genesis-npz-2", "root": {"numpy_scalar": [1], "dtype": "int8"}}, {}, "NumPy scalar"),
    ({"format": "genesis-npz-2", "root": {"namedtuple": "os.Pair", "fields": [], "items": []}}, {},
     "namedtuple entry"),
    ({"format": "genesis-npz-2", "root": {"size": [2, -1]}}, {}, "unknown manifest entry"),
    ({"format": "genesis-npz-2", "root": {"ordered_dict": [[[1], 2]]}}, {}, "unknown manifest entry"),
    # windows on a shared storage that reach outside it, or are not windows: never a view made
    *[({"format": "genesis-npz-2", "root": {"tensor": {
        "storage": "s0", "view": "s0.0", "dtype": "float32", "device": "cpu", "requires_grad": False,
        "parameter": False, **window}}}, {"s0": np.ones(4, np.float32)}, says)
      for window, says in [
          ({"offset": 3, "shape": [2], "stride": [1]}, "outside its storage of 4"),
          ({"offset": 0, "shape": [2, 2], "stride": [3, 1]}, "outside its storage of 4"),
          ({"offset": 1, "shape": [2], "stride": [-2]}, "outside its storage of 4"),
          ({"offset": 2 ** 40, "shape": [1], "stride": [1]}, "outside its storage of 4"),
          ({"offset": -1, "shape": [1], "stride": [1]}, "is not a window"),
          ({"offset": 0, "shape": [2], "stride": [1, 1]}, "is not a window"),
          ({"offset": 0, "shape": [True], "stride": [1]}, "is not a window"),
          ({"offset": 0, "shape": [2], "stride": [0.5]}, "is not a window"),
          ({"offset": "0", "shape": [2], "stride": [1]}, "tensor entry")]],
    ({"format": "genesis-npz-1", "root": {"dict": [[[1], 2]]}}, {}, "unknown manifest entry"),
]


@pytest.mark.parametrize("manifest, arrays, says", MALFORMED)
def test_a_malformed_manifest_is_named(tmp_path, manifest, arrays, says):
    import json

    path = tmp_path / "forged.gen"
    with open(path, "wb") as handle:  # a handle: given a path, np.savez would add ".npz"
        np.savez(handle, __manifest__=np.frombuffer(json.dumps(manifest).encode(), np.uint8),
                 **arrays)
    error = genesis_error(lambda: genesis.load(path), culprits=[str(path), says])
    assert isinstance(error, CheckpointError)


def test_an_object_array_is_never_unpickled(tmp_path):
    import json

    path = tmp_path / "pickled.gen"
    manifest = {"format": "genesis-npz-1", "root": {"tensor": {
        "array": "t0", "dtype": "float32", "device": "cpu", "requires_grad": False, "parameter": False}}}
    with open(path, "wb") as handle:
        np.savez(handle, __manifest__=np.frombuffer(json.dumps(manifest).encode(), np.uint8),
                 t0=np.array([{"code": "runs?"}], dtype=object))
    genesis_error(lambda: genesis.load(path), culprits=[str(path), "can't be read safely"])
