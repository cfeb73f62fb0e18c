"""A node's edges (`next_functions`), kept as a tuple of nodes and a shared tuple of output
numbers: what users read is PyTorch's pairs, of the right types, and the edges of an op
leave the cyclic collector one object (its tuple of nodes), whatever its inputs."""
import gc

import genesis
from genesis.autograd.function import AccumulateGrad
from tests.helpers import torch_or_skip


def test_next_functions_are_pairs_of_node_and_output_number():
    x = genesis.randn(2, 3, requires_grad=True)
    first, second = x.unbind(0)
    y = first * second + genesis.randn(3)
    (node, nr), (constant, zero) = y.grad_fn.next_functions
    assert (constant, zero) == (None, 0)
    assert [(type(child).__name__, number) for child, number in node.next_functions] == \
        [("UnbindBackward", 0), ("UnbindBackward", 1)]
    assert isinstance(node.next_functions[0][0].next_functions[0][0], AccumulateGrad)


def test_output_numbers_are_ints_and_input_flags_bools_whatever_was_made_before():
    # (False, True) and (0, 1) are equal tuples: each kind is shared with its own kind only
    x = genesis.randn(2, 3, requires_grad=True)
    constant = genesis.randn(3)
    flags = (constant * x[0]).grad_fn.needs_input_grad
    first, second = x.unbind(0)
    z = second * first
    assert flags == (False, True) and all(type(flag) is bool for flag in flags)
    numbers = [number for _, number in z.grad_fn.next_functions]
    assert numbers == [1, 0] and all(type(number) is int for number in numbers)


def test_next_functions_match_pytorchs():
    torch = torch_or_skip()
    shapes = []
    for lib in (genesis, torch):
        x = lib.ones(2, 3, requires_grad=True)
        a, b = x.unbind(0)
        y = (b * a) * 2
        edges = y.grad_fn.next_functions[0][0].next_functions
        shapes.append([(child is None, number) for child, number in edges])
    assert shapes[0] == shapes[1]


def test_next_functions_can_be_set_as_pairs():
    node = (genesis.randn(2, requires_grad=True) * 2).grad_fn
    node.next_functions = ((None, 0),)
    assert node.next_functions == ((None, 0),)


def test_the_edges_of_an_op_leave_one_object_to_the_cyclic_collector():
    x = genesis.randn(4, requires_grad=True)
    other = genesis.randn(4, requires_grad=True)
    y = x * 1.0 + other  # warm: the shared metadata of these ops is made
    gc.collect()
    gc.disable()
    try:
        before = len(gc.get_objects())
        for _ in range(200):
            y = y * 1.0001 + other  # a node with one edge, then one with two
        gc.collect(0)  # (tuples of numbers and None are untracked by a collection)
        left = len(gc.get_objects()) - before
    finally:
        gc.enable()
    # per step: the two nodes, their tuples of next nodes, and the tuple of what the
    # multiplication saved (its number): 5 (were 8, with a tuple per edge)
    assert left <= 5 * 200 + 10, left
