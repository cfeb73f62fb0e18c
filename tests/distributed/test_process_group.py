"""init_process_group and the process group's queries, for a run of one process: the values,
and the errors PyTorch gives (compared with PyTorch's gloo group where it runs)."""
import datetime

import pytest

import genesis
import genesis.distributed as dist

ENVIRONMENT = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
               "TORCHELASTIC_RUN_ID")


@pytest.fixture
def clean_environment(monkeypatch):
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def torchrun_environment(clean_environment):
    """What `torchrun --nproc_per_node=1` sets."""
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"),
                        ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500"),
                        ("TORCHELASTIC_RUN_ID", "none")):
        clean_environment.setenv(name, value)
    return clean_environment


def outcome(call):
    """(value, None) or (None, (error type name, message)) of `call()`."""
    try:
        return call(), None
    except Exception as error:  # noqa: BLE001 - compared as they are
        return None, (type(error).__name__, str(error))


def test_available_and_not_initialized_before_init():
    assert dist.is_available() and not dist.is_initialized()
    assert dist.group.WORLD is None and dist.GroupMember.WORLD is None


@pytest.mark.parametrize("name, arguments", [
    ("get_rank", ()), ("get_world_size", ()), ("get_backend", ()), ("barrier", ()),
    ("all_reduce", ("tensor",)), ("broadcast", ("tensor", 0)), ("new_group", ()),
    ("destroy_process_group", ()), ("all_gather_object", ([None], 1)),
])
def test_calls_before_init_raise_what_pytorch_raises(real_dist, name, arguments):
    torch = pytest.importorskip("torch")
    genesis_arguments = [genesis.ones(2) if argument == "tensor" else argument
                         for argument in arguments]
    torch_arguments = [torch.ones(2) if argument == "tensor" else argument
                       for argument in arguments]
    got = outcome(lambda: getattr(dist, name)(*genesis_arguments))
    expected = outcome(lambda: getattr(real_dist, name)(*torch_arguments))
    assert got == expected and got[1] is not None


def test_torchrun_environment_starts_a_world_of_one(torchrun_environment):
    dist.init_process_group(backend="gloo")
    assert dist.is_initialized() and dist.is_torchelastic_launched()
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
    assert dist.group.WORLD is dist.GroupMember.WORLD is not None
    assert dist.get_node_local_rank() == 0
    dist.destroy_process_group()
    assert not dist.is_initialized() and dist.group.WORLD is None


def test_the_same_calls_give_the_same_answers_as_pytorch(torch_gloo, one_process):
    for name in ("get_rank", "get_world_size", "get_backend", "is_initialized", "is_available",
                 "is_torchelastic_launched"):
        assert getattr(dist, name)() == getattr(torch_gloo, name)(), name
    assert dist.get_process_group_ranks(dist.group.WORLD) == \
        torch_gloo.get_process_group_ranks(torch_gloo.group.WORLD) == [0]
    for name in ("get_global_rank", "get_group_rank"):
        assert getattr(dist, name)(dist.group.WORLD, 0) == \
            getattr(torch_gloo, name)(torch_gloo.group.WORLD, 0) == 0
    mine, theirs = dist.new_group([0]), torch_gloo.new_group([0])
    assert (mine.rank(), mine.size(), dist.get_world_size(mine), dist.get_rank(mine)) == \
        (theirs.rank(), theirs.size(), torch_gloo.get_world_size(theirs),
         torch_gloo.get_rank(theirs))
    assert dist.get_backend(mine) == torch_gloo.get_backend(theirs) == "gloo"


def test_a_second_init_raises_as_pytorch(torch_gloo, one_process):
    got = outcome(lambda: dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1",
                                                  world_size=1, rank=0))
    expected = outcome(lambda: torch_gloo.init_process_group("gloo", store=torch_gloo.HashStore(),
                                                             world_size=1, rank=0))
    assert got == expected == (None, ("ValueError",
                                      "trying to initialize the default process group twice!"))


def test_destroy_twice_raises_as_pytorch(torch_gloo, one_process):
    dist.destroy_process_group()
    torch_gloo.destroy_process_group()
    assert outcome(dist.destroy_process_group) == outcome(torch_gloo.destroy_process_group) == \
        (None, ("AssertionError", "Process group cannot be None"))


@pytest.mark.parametrize("setting, expected", [
    ({}, "environment variable RANK expected, but not set"),
    ({"RANK": "0"}, "environment variable WORLD_SIZE expected, but not set"),
    ({"RANK": "0", "WORLD_SIZE": "1"}, "environment variable MASTER_ADDR expected, but not set"),
    ({"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1"},
     "environment variable MASTER_PORT expected, but not set"),
])
def test_env_rendezvous_wants_what_pytorch_wants(clean_environment, real_dist, setting, expected):
    for name, value in setting.items():
        clean_environment.setenv(name, value)
    got = outcome(lambda: dist.init_process_group("gloo"))
    assert got == outcome(lambda: real_dist.init_process_group("gloo"))
    assert got[1] == ("ValueError", "Error initializing torch.distributed using env:// rendezvous: "
                      + expected)
    assert not dist.is_initialized()


@pytest.mark.parametrize("init_method, arguments, expected", [
    ("tcp://127.0.0.1:29500", {"world_size": 1}, "tcp:// rendezvous: rank parameter missing"),
    ("tcp://127.0.0.1:29500", {"rank": 0}, "tcp:// rendezvous: world size parameter missing"),
    ("file:///tmp/genesis-no-file", {"world_size": 1},
     "file:// rendezvous: rank parameter missing"),
])
def test_url_rendezvous_errors_are_pytorchs(clean_environment, real_dist, init_method, arguments,
                                            expected):
    got = outcome(lambda: dist.init_process_group("gloo", init_method=init_method, **arguments))
    assert got == outcome(lambda: real_dist.init_process_group("gloo", init_method=init_method,
                                                               **arguments))
    assert got[1] == ("ValueError", f"Error initializing torch.distributed using {expected}")


def test_an_unknown_rendezvous_is_pytorchs_error(clean_environment):
    with pytest.raises(RuntimeError, match="^No rendezvous handler for foo://$"):
        dist.init_process_group("gloo", init_method="foo://x", world_size=1, rank=0)


@pytest.mark.parametrize("init_method, arguments", [
    ("tcp://127.0.0.1:29500", {"world_size": 1, "rank": 0}),
    ("tcp://127.0.0.1:29500?rank=0&world_size=1", {}),
    ("file:///tmp/genesis-shared-file", {"world_size": 1, "rank": 0}),
    (None, {"store": object(), "world_size": 1, "rank": 0}),
])
def test_one_process_starts_from_any_init_method(clean_environment, init_method, arguments):
    dist.init_process_group("gloo", init_method=init_method,
                            timeout=datetime.timedelta(seconds=30), **arguments)
    assert dist.get_world_size() == 1


def test_backends_as_pytorch_names_them(torchrun_environment):
    dist.init_process_group(backend=None)
    assert dist.get_backend() == "undefined"  # PyTorch 2.13's answer for backend=None
    dist.destroy_process_group()
    dist.init_process_group(backend="NCCL")  # one process needs no NCCL: accepted on any machine
    assert dist.get_backend() == dist.Backend.NCCL == "nccl"
    dist.destroy_process_group()
    with pytest.raises(AssertionError, match="^Unknown backend type bogus$"):
        dist.init_process_group(backend="bogus")
    with pytest.raises(ValueError, match="must be an accelerator with an index"):
        dist.init_process_group(backend="gloo", device_id=genesis.device("cpu"))
    assert dist.Backend("GLOO") == "gloo"


def test_store_arguments_are_checked_as_pytorch(clean_environment):
    with pytest.raises(AssertionError, match="^Cannot specify both init_method and store.$"):
        dist.init_process_group("gloo", init_method="env://", store=object(), world_size=1, rank=0)
    with pytest.raises(AssertionError, match="^world_size must be positive if using store$"):
        dist.init_process_group("gloo", store=object())


@pytest.mark.parametrize("setting, arguments, said", [
    ({"WORLD_SIZE": "2", "RANK": "0"}, {},
     "world_size=2, rank=0 (from the environment (RANK, WORLD_SIZE))"),
    ({"WORLD_SIZE": "4", "RANK": "3"}, {},
     "world_size=4, rank=3 (from the environment (RANK, WORLD_SIZE))"),
    ({}, {"init_method": "tcp://127.0.0.1:29500", "world_size": 2, "rank": 1},
     "world_size=2, rank=1 (from the argument rank and the argument world_size)"),
    ({}, {"init_method": "tcp://127.0.0.1:29500?world_size=1&rank=1"},
     "world_size=1, rank=1 (from init_method's rank and init_method's world_size)"),
])
def test_more_than_one_process_is_a_clear_error(torchrun_environment, setting, arguments, said):
    for name, value in setting.items():
        torchrun_environment.setenv(name, value)
    with pytest.raises(dist.OneProcessOnly) as info:
        dist.init_process_group("gloo", **arguments)
    message = str(info.value)
    assert said in message
    assert "genesis runs one process" in message
    assert ("without torchrun, or with `torchrun --nproc_per_node=1` (WORLD_SIZE=1, RANK=0)"
            in message)
    assert isinstance(info.value, RuntimeError) and not dist.is_initialized()


def test_a_world_of_two_is_named_before_a_missing_master_address(clean_environment):
    clean_environment.setenv("RANK", "0")
    clean_environment.setenv("WORLD_SIZE", "2")
    with pytest.raises(dist.OneProcessOnly, match="world_size=2, rank=0"):
        dist.init_process_group("gloo")


def test_new_group_of_more_ranks_than_there_are_raises_as_pytorch(torch_gloo, one_process):
    assert outcome(lambda: dist.new_group([0, 1])) == outcome(lambda: torch_gloo.new_group([0, 1]))
    assert dist.new_group().size() == torch_gloo.new_group().size() == 1


def test_node_local_rank_without_local_rank(clean_environment, real_dist):
    assert outcome(dist.get_node_local_rank) == outcome(real_dist.get_node_local_rank)
    assert dist.get_node_local_rank(fallback_rank=0) == 0
