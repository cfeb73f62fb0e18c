"""Op observers (genesis.autograd.function.observers): what they are shown."""
import genesis
from genesis.autograd import function


class Seen:
    """An observer that notes the ops it is shown; `sees_data_views` as given."""

    def __init__(self, **attributes):
        self.names = []
        self.__dict__.update(attributes)

    def __call__(self, node, args, outputs):
        self.names.append(type(node).__name__)


def observed(observer, run) -> list:
    function.observers.add(observer)
    try:
        run()
    finally:
        function.observers.discard(observer)
    return observer.names


def ops_on_data_and_parameters():
    data = genesis.randn(8, 3)
    weight = genesis.randn(3, requires_grad=True)
    sample = data[2]              # a view of data: outside the graph
    first = weight[0]             # a view of a parameter: in the graph
    (sample * weight).sum() + first
    with genesis.no_grad():
        weight[1]                 # outside the graph too, under no_grad
    data[1:3].exp()               # a view, then an op computing with it


def _indexing(names: list) -> int:
    """How many of the nodes `names` are indexing's (t[2], t[1:3]: as PyTorch names them)."""
    return sum(name in ("SelectBackward", "SliceBackward") for name in names)


def test_an_observer_sees_every_op_by_default():
    names = observed(Seen(), ops_on_data_and_parameters)
    assert _indexing(names) == 4  # the four views, of data and of the parameter
    assert {"MulBackward", "SumBackward", "AddBackward", "ExpBackward"} <= set(names)


def test_views_of_data_are_not_shown_while_sees_data_views_is_false():
    waiting = {}  # a container: empty now, filled later
    observer = Seen(sees_data_views=waiting)
    names = observed(observer, ops_on_data_and_parameters)
    assert _indexing(names) == 1  # the parameter's view, in the graph
    assert {"MulBackward", "SumBackward", "AddBackward", "ExpBackward"} <= set(names)
    waiting["something"] = True  # read at each call: now every view is shown again
    observer.names.clear()
    assert _indexing(observed(observer, ops_on_data_and_parameters)) == 4
