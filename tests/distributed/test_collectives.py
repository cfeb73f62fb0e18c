"""The collectives on one process: each leaves or copies its tensors exactly as PyTorch's
gloo group of one process does, returns a finished Work with async_op=True, and checks its
arguments as PyTorch does."""
import numpy as np
import pytest

import genesis
import genesis.distributed as dist

# PyTorch's word that all_gather_into_tensor and reduce_scatter_tensor have new names
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

VALUES = [1.5, -2.0, 3.25]


def pair(torch):
    return genesis.tensor(VALUES), torch.tensor(VALUES)


def outcome(call):
    try:
        return call(), None
    except Exception as error:  # noqa: BLE001 - compared as they are
        return None, type(error).__name__


@pytest.mark.parametrize("op", ["SUM", "AVG", "MAX", "MIN", "PRODUCT"])
def test_all_reduce_of_one_process_is_the_tensor_in_place(torch_gloo, one_process, op):
    torch = pytest.importorskip("torch")
    mine, theirs = pair(torch)
    assert dist.all_reduce(mine, op=getattr(dist.ReduceOp, op)) is None
    assert torch_gloo.all_reduce(theirs, op=getattr(torch_gloo.ReduceOp, op)) is None
    assert mine.tolist() == theirs.tolist() == VALUES
    assert mine._version == theirs._version == (1 if op == "AVG" else 0)  # AVG: a div_ by 1


def test_avg_is_an_in_place_division_autograd_sees_as_pytorchs(torch_gloo, one_process):
    """PyTorch's gloo averages with an autograd-recorded div_: on a leaf that requires grad it
    raises, and a tensor saved for backward is then too new."""
    torch = pytest.importorskip("torch")
    for library, ones in ((dist, genesis.ones), (torch_gloo, torch.ones)):
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            library.all_reduce(ones(2, requires_grad=True), op=library.ReduceOp.AVG)
        doubled = ones(2, requires_grad=True) * 2
        loss = (doubled * doubled).sum()
        library.all_reduce(doubled, op=library.ReduceOp.AVG)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()
        integers = ones(2, dtype=getattr(library is dist and genesis or torch, "int64"))
        with pytest.raises(RuntimeError):
            library.all_reduce(integers, op=library.ReduceOp.AVG)


def test_reduce_op_names_and_values_are_pytorchs(torch_gloo):
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"):
        mine, theirs = getattr(dist.ReduceOp, name), getattr(torch_gloo.ReduceOp, name)
        assert (str(mine), repr(mine)) == (str(theirs), repr(theirs))


def test_async_op_returns_a_finished_work(torch_gloo, one_process):
    torch = pytest.importorskip("torch")
    mine, theirs = pair(torch)
    work = dist.all_reduce(mine, async_op=True)
    their_work = torch_gloo.all_reduce(theirs, async_op=True)
    assert (work.wait(), work.is_completed()) == (True, True)
    assert (their_work.wait(), their_work.is_completed()) == (True, True)
    assert work.result()[0] is mine and dist.barrier(async_op=True).wait()
    assert dist.broadcast(mine, 0, async_op=True).is_completed()


def test_the_gathers_and_scatters_copy_the_one_part(torch_gloo, one_process):
    torch = pytest.importorskip("torch")
    results = {}
    for library, tensor in ((dist, genesis.tensor), (torch_gloo, torch.tensor)):
        zeros = (lambda *shape, _t=tensor: _t(np.zeros(shape, dtype=np.float32)))
        source = tensor(VALUES)
        gathered, into, at_root = [zeros(3)], zeros(3), [zeros(3)]
        scattered, reduced, reduced_tensor = zeros(3), zeros(3), zeros(3)
        library.broadcast(source, 0)
        library.reduce(source, 0)
        library.all_gather(gathered, source)
        library.all_gather_into_tensor(into, source)
        library.gather(source, at_root, dst=0)
        library.scatter(scattered, [source * 2], src=0)
        library.reduce_scatter(reduced, [source * 3])
        library.reduce_scatter_tensor(reduced_tensor, source * 4)
        results[library] = [part.tolist() for part in (source, gathered[0], into, at_root[0],
                                                       scattered, reduced, reduced_tensor)]
    assert results[dist] == results[torch_gloo]
    assert results[dist][-1] == [4 * value for value in VALUES]


def test_all_gather_into_a_stacked_tensor_and_all_to_all(one_process):
    source = genesis.tensor(VALUES)
    stacked = genesis.zeros(1, 3)
    dist.all_gather_into_tensor(stacked, source)
    out, parts = genesis.zeros(3), [genesis.zeros(3)]
    dist.all_to_all_single(out, source)
    dist.all_to_all(parts, [source])
    assert stacked.tolist() == [VALUES] and out.tolist() == parts[0].tolist() == VALUES


def test_copies_into_outputs_are_not_recorded_by_autograd(one_process):
    weights = genesis.ones(3, requires_grad=True)
    gathered = [genesis.zeros(3)]
    dist.all_gather(gathered, weights * 2)
    assert gathered[0].grad_fn is None and gathered[0].tolist() == [2.0, 2.0, 2.0]


@pytest.mark.parametrize("call", [
    "broadcast(t, 1)", "reduce(t, 1)", "gather(t, [z], dst=1)", "gather(t, None, dst=0)",
    "scatter(t, [z], src=1)", "scatter(t, None, src=0)", "all_gather([z, z], t)",
    "all_gather([short], t)", "all_reduce([t])", "all_reduce(i, op=d.ReduceOp.BAND)",
    "all_reduce(t, op=d.ReduceOp.BAND)", "broadcast_object_list([1], src=1)",
])
def test_wrong_arguments_raise_what_pytorch_raises(torch_gloo, one_process, call):
    torch = pytest.importorskip("torch")
    for_genesis = {"d": dist, "t": genesis.tensor(VALUES), "z": genesis.zeros(3),
                   "short": genesis.zeros(2), "i": genesis.tensor([1, 2])}
    for_torch = {"d": torch_gloo, "t": torch.tensor(VALUES), "z": torch.zeros(3),
                 "short": torch.zeros(2), "i": torch.tensor([1, 2])}
    got = outcome(lambda: eval(f"d.{call}", for_genesis))
    assert got == outcome(lambda: eval(f"d.{call}", for_torch))
    if call in ("broadcast(t, 1)", "reduce(t, 1)"):
        with pytest.raises(RuntimeError, match="invalid root rank: 1 "):
            eval(f"d.{call}", for_genesis)


def test_object_collectives_are_pytorchs(torch_gloo, one_process):
    sent = {"loss": [0.5]}
    mine, theirs = [None], [None]
    dist.all_gather_object(mine, sent)
    torch_gloo.all_gather_object(theirs, sent)
    assert mine == theirs == [sent] and mine[0] is not sent and theirs[0] is not sent
    mine, theirs = [sent, "x"], [sent, "x"]
    dist.broadcast_object_list(mine, src=0)
    torch_gloo.broadcast_object_list(theirs, src=0)
    assert mine == theirs and mine[0] is sent and theirs[0] is sent  # the source keeps its own
    gathered, scattered = [None], [None]
    dist.gather_object(1, gathered, dst=0)
    dist.scatter_object_list(scattered, [sent], src=0)
    assert gathered == [1] and scattered == [sent]
