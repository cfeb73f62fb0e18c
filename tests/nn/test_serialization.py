"""genesis.save / genesis.load: safe .npz round trips of module and optimizer state."""
import collections
import io
import math
import zipfile

import numpy as np
import pytest

import genesis
from genesis import nn, optim


def _round_trip(obj, **load_options):
    buffer = io.BytesIO()
    genesis.save(obj, buffer)
    buffer.seek(0)
    return genesis.load(buffer, **load_options)


def test_tensors_keep_dtype_values_and_flags():
    tensors = {
        "f16": genesis.tensor([1.5, -2.0], dtype=genesis.float16),
        "f32": genesis.randn(2, 3),
        "f64": genesis.randn(4, dtype=genesis.float64),
        "i64": genesis.tensor([[1, 2], [3, 4]]),
        "i8": genesis.tensor([-3, 7], dtype=genesis.int8),
        "u8": genesis.tensor([200], dtype=genesis.uint8),
        "bool": genesis.tensor([True, False]),
        "scalar": genesis.tensor(3.25),
        "grad": genesis.ones(2, requires_grad=True),
        "strided": genesis.arange(12.0).reshape(3, 4)[:, ::2],
        "param": nn.Parameter(genesis.ones(2)),
    }
    loaded = _round_trip(tensors)
    assert list(loaded) == list(tensors)
    for key, tensor in tensors.items():
        assert loaded[key].dtype == tensor.dtype, key
        assert loaded[key].shape == tensor.shape, key
        np.testing.assert_array_equal(loaded[key].detach().numpy(), tensor.detach().numpy())
    assert loaded["grad"].requires_grad and not loaded["f32"].requires_grad
    assert type(loaded["param"]) is nn.Parameter and type(loaded["f32"]) is genesis.Tensor


def test_bfloat16_round_trip_when_available():
    if genesis.bfloat16.numpy_dtype is None:
        pytest.skip("ml_dtypes is not installed, so there is no bfloat16")
    tensor = genesis.tensor([1.0, -0.5], dtype=genesis.bfloat16)
    loaded = _round_trip(tensor)
    assert loaded.dtype == genesis.bfloat16 and loaded.tolist() == tensor.tolist()


def test_nested_structure_and_plain_values_survive():
    obj = {"epoch": 3, "lr": 0.5, "name": "run", "flag": True, "none": None, "nan": math.nan,
           "inf": -math.inf, "pairs": [(1, "a"), (2.5, None)], 7: "int key", 1.5: "float key",
           "nested": {"deep": [genesis.ones(1), {"x": ()}]}, "np": np.float32(2.5)}
    loaded = _round_trip(obj)
    assert loaded["epoch"] == 3 and loaded["lr"] == 0.5 and loaded["flag"] is True
    assert loaded["none"] is None and math.isnan(loaded["nan"]) and loaded["inf"] == -math.inf
    assert loaded["pairs"] == [(1, "a"), (2.5, None)] and isinstance(loaded["pairs"][0], tuple)
    assert loaded[7] == "int key" and loaded[1.5] == "float key"
    assert loaded["nested"]["deep"][0].tolist() == [1.0] and loaded["nested"]["deep"][1] == {"x": ()}
    assert loaded["np"] == 2.5


def test_a_tensor_referenced_twice_is_stored_once_and_loaded_once():
    shared = genesis.ones(3)
    loaded = _round_trip({"a": shared, "b": [shared]})
    assert loaded["a"] is loaded["b"][0]


def _shared_views(library):
    """Tensors that share memory, as PyTorch users save them: a tensor and its slices, a
    weight and its transpose, overlapping slices of a tensor not saved itself."""
    x = library.arange(12.0).reshape(3, 4)
    weight = library.nn.Parameter(library.ones(3, 2))
    hidden = library.zeros(6)
    return {"x": x, "row": x[1], "column": x[:, 2], "weight": weight, "tied": weight.t(),
            "left": hidden[0:4], "right": hidden[2:6]}


def _layout(tensors: dict) -> dict:
    return {key: (tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset(),
                  tensor.requires_grad) for key, tensor in tensors.items()}


def test_tensors_that_share_memory_load_sharing_it_as_in_pytorch():
    """Each tensor came back as its own copy: a write to one no longer reached its views."""
    loaded = _round_trip(_shared_views(genesis))
    with genesis.no_grad():
        loaded["x"][1, 2] = 100.0
        loaded["weight"].fill_(7.0)
        loaded["left"][3] = 5.0
    assert loaded["row"].tolist()[2] == 100.0 and loaded["column"].tolist()[1] == 100.0
    assert loaded["tied"].tolist() == [[7.0] * 3] * 2 and loaded["right"].tolist()[1] == 5.0
    assert type(loaded["weight"]) is nn.Parameter and loaded["tied"].is_leaf
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.save(_shared_views(torch), buffer)
    buffer.seek(0)
    assert _layout(loaded) == _layout(torch.load(buffer))


def test_a_lone_slice_saves_only_its_elements():
    """Where genesis differs from PyTorch on purpose: a slice saved without its base does not
    drag the whole storage into the file."""
    loaded = _round_trip({"a": genesis.ones(2), "b": genesis.ones(1000)[1:3]})
    assert loaded["b"].storage_offset() == 0 and loaded["b"].untyped_storage().nbytes() == 8


Pair = collections.namedtuple("Pair", "first second")


def _typed_containers(library):
    state = library.nn.Sequential(library.nn.Linear(2, 1), library.nn.BatchNorm1d(1)).state_dict()
    return {"pair": Pair(library.ones(1), 2), "size": library.Size([2, 3]), "state": state,
            "plain": collections.OrderedDict(b=1, a=2), "f32": np.float32(1.5), "i64": np.int64(-3),
            "u8": np.uint8(200), "flag": np.bool_(True), "nan": np.float16("nan")}


def _types(value):
    """The types in a structure, as names (to compare genesis's with PyTorch's)."""
    if isinstance(value, dict):
        return [type(value).__name__, {key: _types(item) for key, item in value.items()}]
    if isinstance(value, tuple | list):
        return [type(value).__name__, [_types(item) for item in value]]
    return type(value).__name__.replace("Parameter", "Tensor")


def test_containers_and_numpy_scalars_come_back_as_their_types():
    """namedtuples, Size and OrderedDict (a state dict) came back as tuple, tuple and dict;
    NumPy scalars as Python numbers."""
    original = _typed_containers(genesis)
    loaded = _round_trip(original)
    assert type(loaded["pair"]) is Pair and loaded["pair"].second == 2
    assert type(loaded["size"]) is genesis.Size and loaded["size"] == (2, 3)
    assert type(loaded["state"]) is collections.OrderedDict and list(loaded["state"]) == list(original["state"])
    assert loaded["state"]._metadata == original["state"]._metadata
    assert loaded["state"]._metadata["1"] == {"version": 2}
    assert [(type(loaded[key]), loaded[key]) for key in ("f32", "i64", "u8", "flag")] == \
        [(type(original[key]), original[key]) for key in ("f32", "i64", "u8", "flag")]
    assert type(loaded["nan"]) is np.float16 and np.isnan(loaded["nan"])
    local = collections.namedtuple("Local", "x")(1)
    assert type(_round_trip(local)) is tuple  # a class defined in a function is not found again
    torch = pytest.importorskip("torch")
    buffer = io.BytesIO()
    torch.save(_typed_containers(torch), buffer)
    buffer.seek(0)
    theirs = _types(torch.load(buffer, weights_only=False))
    assert _types(loaded) == theirs
    assert loaded["state"]._metadata == torch.load(io.BytesIO(buffer.getvalue()), weights_only=False)["state"]._metadata


def test_a_namedtuple_is_restored_only_from_a_module_already_imported():
    import json
    import sys

    buffer = io.BytesIO()
    genesis.save(Pair(1, 2), buffer)
    manifest = json.loads(np.load(io.BytesIO(buffer.getvalue()))["__manifest__"].tobytes())
    assert manifest["root"]["namedtuple"] == [__name__, "Pair"]
    for module, fields in (("genesis_never_imported_module", ["first", "second"]), (__name__, ["x", "y"])):
        manifest["root"].update(namedtuple=[module, "Pair"], fields=fields)
        forged = io.BytesIO()
        np.savez(forged, __manifest__=np.frombuffer(json.dumps(manifest).encode(), np.uint8))
        forged.seek(0)
        assert type(genesis.load(forged)) is tuple
    assert "genesis_never_imported_module" not in sys.modules




def test_a_first_format_checkpoint_still_loads(tmp_path):
    import json

    manifest = {"format": "genesis-npz-1", "root": {"dict": [["w", {"tensor": {
        "array": "t0", "dtype": "float32", "device": "cpu", "requires_grad": True, "parameter": True}}]]}}
    path = tmp_path / "old.pt"
    with open(path, "wb") as handle:
        np.savez(handle, __manifest__=np.frombuffer(json.dumps(manifest).encode(), np.uint8),
                 t0=np.arange(3, dtype=np.float32))
    loaded = genesis.load(path)["w"]
    assert type(loaded) is nn.Parameter and loaded.tolist() == [0.0, 1.0, 2.0]


def test_shared_memory_follows_map_location(monkeypatch):
    calls = []

    def to_cpu(storage, location):
        calls.append(tuple(storage.shape))
        return storage

    x = genesis.arange(4.0)
    loaded = _round_trip({"x": x, "part": x[1:3]}, map_location=to_cpu)
    loaded["x"][1] = 9.0
    assert calls == [(4,)] and loaded["part"].tolist() == [9.0, 2.0]
    monkeypatch.setenv("GENESIS_FAKE_CUDA", "1")
    monkeypatch.setattr(genesis.Device("cuda", 0), "_xp", None)
    loaded = _round_trip({"x": x, "part": x[1:3]}, map_location="cuda")
    assert loaded["part"].device == genesis.device("cuda") and loaded["part"].tolist() == [1.0, 2.0]


def test_module_state_dict_round_trip_through_a_file_keeps_the_name(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    path = tmp_path / "model.pt"
    genesis.save(model.state_dict(), path)
    assert path.exists() and not (tmp_path / "model.pt.npz").exists()
    fresh = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    fresh.load_state_dict(genesis.load(path))
    x = genesis.randn(5, 3)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())
    genesis.save(model.state_dict(), str(tmp_path / "again"))
    assert set(genesis.load(str(tmp_path / "again"))) == set(model.state_dict())


@pytest.mark.parametrize("optimizer_class, options", [
    (optim.SGD, dict(lr=0.1, momentum=0.9)), (optim.Adam, dict(lr=0.05, amsgrad=True)),
    (optim.AdamW, dict(lr=0.05)), (optim.RMSprop, dict(lr=0.01, centered=True, momentum=0.5)),
    (optim.Adagrad, dict(lr=0.1))])
def test_training_resumed_from_a_checkpoint_matches_uninterrupted_training(optimizer_class, options):
    def make():
        genesis.manual_seed(1)
        model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
        return model, optimizer_class(model.parameters(), **options)

    x, y = genesis.randn(16, 3), genesis.randn(16, 1)

    def train(model, optimizer, steps):
        for _ in range(steps):
            optimizer.zero_grad()
            ((model(x) - y) ** 2).mean().backward()
            optimizer.step()

    model, optimizer = make()
    train(model, optimizer, 6)
    first, first_optimizer = make()
    train(first, first_optimizer, 3)
    checkpoint = _round_trip({"model": first.state_dict(), "optimizer": first_optimizer.state_dict()})
    resumed, resumed_optimizer = make()
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    train(resumed, resumed_optimizer, 3)
    for mine, reference in zip(resumed.parameters(), model.parameters()):
        np.testing.assert_array_equal(mine.detach().numpy(), reference.detach().numpy())


def test_scheduler_state_round_trip():
    w = genesis.zeros(1, requires_grad=True)
    optimizer = optim.SGD([w], lr=1.0, momentum=0.9)
    scheduler = optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1.0, total_steps=10)
    scheduler.step()
    state = _round_trip(scheduler.state_dict())
    assert state["last_epoch"] == 1 and state["_schedule_phases"] == scheduler.state_dict()["_schedule_phases"]


def test_unsupported_objects_are_refused_with_the_path():
    with pytest.raises(TypeError, match=r"can't store a Linear at obj\['model'\] \(save its "
                                        r"state_dict\(\) instead\)"):
        genesis.save({"model": nn.Linear(1, 1)}, io.BytesIO())
    with pytest.raises(TypeError, match=r"can't store a function at obj\[0\]"):
        genesis.save([lambda: 0], io.BytesIO())
    with pytest.raises(TypeError, match="dict key"):
        genesis.save({(1, 2): 3}, io.BytesIO())


def test_loading_never_unpickles_and_rejects_foreign_files(tmp_path):
    path = tmp_path / "foreign.npz"
    np.savez(path, data=np.array([object()], dtype=object))
    with pytest.raises(ValueError, match="not a file written by genesis.save"):
        genesis.load(path)
    buffer = io.BytesIO()
    genesis.save({"x": genesis.ones(1)}, buffer)
    assert all(name.endswith(".npy") for name in zipfile.ZipFile(io.BytesIO(buffer.getvalue())).namelist())


def test_map_location_moves_tensors(monkeypatch):
    monkeypatch.setenv("GENESIS_FAKE_CUDA", "1")
    monkeypatch.setattr(genesis.Device("cuda", 0), "_xp", None)
    loaded = _round_trip({"w": genesis.ones(2)}, map_location="cuda")
    assert loaded["w"].device == genesis.device("cuda") and loaded["w"].tolist() == [1.0, 1.0]


def test_checkpoints_hold_numpy_arrays_and_take_pytorchs_load_options(tmp_path):
    path = tmp_path / "checkpoint.pt"
    checkpoint = {"model": {"w": genesis.ones(2)}, "epoch": 3, "losses": [0.5, 0.25],
                  "indices": np.arange(4), "mask": np.array([True, False]),
                  "stats": np.eye(2, dtype=np.float32), "note": "run 1"}
    genesis.save(checkpoint, path, pickle_protocol=4)
    for options in ({}, {"weights_only": True}, {"weights_only": False, "mmap": False},
                    {"map_location": "cpu"}, {"map_location": {"cpu": "cpu"}},
                    {"map_location": lambda storage, location: storage}):
        back = genesis.load(path, **options)
        assert back["epoch"] == 3 and back["note"] == "run 1" and back["losses"] == [0.5, 0.25]
        assert back["model"]["w"].tolist() == [1.0, 1.0]
        for key in ("indices", "mask", "stats"):
            assert isinstance(back[key], np.ndarray) and back[key].dtype == checkpoint[key].dtype
            np.testing.assert_array_equal(back[key], checkpoint[key])
    with pytest.raises(TypeError, match="only numeric and bool arrays"):
        genesis.save({"names": np.array(["a", "b"])}, tmp_path / "strings.pt")
    with pytest.raises(TypeError, match="map_location returned"):
        genesis.load(path, map_location=lambda storage, location: "cpu")
