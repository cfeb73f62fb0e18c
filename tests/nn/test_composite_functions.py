"""The functional forms built from genesis ops (activations, similarities, channel dropout,
one_hot) and interpolate/Upsample: values and gradients against PyTorch, gradients against
finite differences in float64, and their modules."""
import warnings

import numpy as np
import pytest

import genesis
import genesis.nn.functional as F
from tests.helpers import torch_or_skip


def data(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


CASES = [
    ("logsigmoid", (data((3, 4)) * 20,), {}),
    ("softsign", (data((3, 4)),), {}),
    ("tanhshrink", (data((3, 4)),), {}),
    ("hardshrink", (data((3, 4)),), {"lambd": 0.3}),
    ("softshrink", (data((3, 4)),), {"lambd": 0.3}),
    ("threshold", (data((3, 4)), 0.1, 20.0), {}),
    ("glu", (data((3, 4)),), {"dim": 1}),
    ("prelu", (data((2, 3, 4)), np.array([0.1, 0.2, 0.3])), {}),
    ("normalize", (data((3, 4)),), {"p": 2.0, "dim": 1}),
    ("normalize", (data((3, 4)),), {"p": 1.0, "dim": 0}),
    ("cosine_similarity", (data((3, 4)), data((3, 4), 1)), {"dim": 1}),
    ("pairwise_distance", (data((3, 4)), data((3, 4), 1)), {}),
    ("interpolate", (data((2, 3, 4, 5)),), {"scale_factor": 2}),
    ("interpolate", (data((2, 3, 4, 5)),), {"size": (7, 3), "mode": "bilinear"}),
    ("interpolate", (data((2, 3, 4, 5)),), {"scale_factor": 1.5, "mode": "bilinear", "align_corners": True}),
    ("interpolate", (data((1, 2, 6)),), {"size": 9, "mode": "linear"}),
    ("interpolate", (data((1, 2, 3, 4, 5)),), {"scale_factor": 2, "mode": "trilinear"}),
    ("interpolate", (data((1, 2, 6, 6)),), {"size": (3, 2), "mode": "area"}),
    ("interpolate", (data((1, 2, 5, 5)),), {"size": (8, 7), "mode": "nearest-exact"}),
    ("interpolate", (data((2, 2, 4, 5)),), {"size": (9, 3), "mode": "bicubic"}),
    ("interpolate", (data((1, 2, 5, 4)),), {"scale_factor": 1.7, "mode": "bicubic", "align_corners": True}),
    ("interpolate", (data((1, 1, 6, 6)),), {"scale_factor": (0.5, 2), "mode": "bicubic"}),
]
IDS = [f"{name}-{index}" for index, (name, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("name, args, kwargs", CASES, ids=IDS)
def test_values_and_gradients_match_pytorch(name, args, kwargs):
    torch = torch_or_skip()
    mine_args = [genesis.tensor(a, dtype=genesis.float64, requires_grad=True) if isinstance(a, np.ndarray)
                 else a for a in args]
    their_args = [torch.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a for a in args]
    mine, theirs = getattr(F, name)(*mine_args, **kwargs), getattr(torch.nn.functional, name)(*their_args, **kwargs)
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = data(tuple(theirs.shape), 7)
    (mine * genesis.tensor(weights, dtype=genesis.float64)).sum().backward()
    (theirs * torch.tensor(weights)).sum().backward()
    for a, b in zip(mine_args, their_args):
        if isinstance(a, genesis.Tensor):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_prelu_at_zero_takes_the_slope_as_pytorch():
    """d prelu / dx at x = 0 is the weight (PyTorch's, and leaky_relu's), and the weight's
    gradient there is x = 0."""
    torch = torch_or_skip()
    grads = []
    for library in (genesis, torch):
        x = library.tensor([[0.0, -2.0], [0.0, 3.0]], dtype=library.float64, requires_grad=True)
        weight = library.tensor([0.25, 0.5], dtype=library.float64, requires_grad=True)
        (library.nn.functional.prelu(x, weight) * library.tensor([[1.0, 2.0], [3.0, 4.0]],
                                                                 dtype=library.float64)).sum().backward()
        grads.append((x.grad.tolist(), weight.grad.tolist()))
    assert grads[0] == grads[1] == ([[0.25, 1.0], [0.75, 4.0]], [0.0, -4.0])


@pytest.mark.parametrize("name, args, kwargs", [case for case in CASES if case[0] not in
                                                ("hardshrink", "softshrink", "threshold")],
                         ids=[i for i, c in zip(IDS, CASES) if c[0] not in ("hardshrink", "softshrink", "threshold")])
def test_gradients_against_finite_differences(name, args, kwargs):
    inputs = tuple(genesis.tensor(a, dtype=genesis.float64, requires_grad=True) for a in args
                   if isinstance(a, np.ndarray))
    constants = [a for a in args if not isinstance(a, np.ndarray)]
    assert genesis.autograd.gradcheck(lambda *t: getattr(F, name)(*t, *constants, **kwargs), inputs)


def test_interpolate_refuses_what_it_lacks_or_is_misused():
    x = genesis.zeros(1, 1, 4, 4)
    with pytest.raises(NotImplementedError, match="bilinear mode needs 4D|linear mode needs 3D"):
        F.interpolate(x, scale_factor=2, mode="linear")
    with pytest.raises(NotImplementedError, match="Got 3D input, but bicubic mode needs 4D input"):
        F.interpolate(genesis.zeros(1, 1, 4), scale_factor=2, mode="bicubic")
    with pytest.raises(NotImplementedError, match="mode 'lanczos' is not supported"):
        F.interpolate(x, scale_factor=2, mode="lanczos")
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(ValueError, match="only one of size or scale_factor"):
        F.interpolate(x)
    assert genesis.nn.Upsample(scale_factor=2, mode="bilinear")(x).shape == (1, 1, 8, 8)
    assert genesis.nn.UpsamplingNearest2d(size=(2, 3))(x).shape == (1, 1, 2, 3)


def test_one_hot_matches_pytorch_and_refuses_bad_classes():
    torch = torch_or_skip()
    labels = [[0, 3], [2, 1]]
    assert F.one_hot(genesis.tensor(labels)).tolist() == torch.nn.functional.one_hot(torch.tensor(labels)).tolist()
    assert F.one_hot(genesis.tensor([1]), 4).dtype is genesis.int64
    for bad in (lambda m: m.nn.functional.one_hot(m.tensor([3]), 2),
                lambda m: m.nn.functional.one_hot(m.tensor([-1]), 2),
                lambda m: m.nn.functional.one_hot(m.tensor([0.5]), 2)):
        with pytest.raises(RuntimeError):
            bad(torch)
        with pytest.raises(RuntimeError):
            bad(genesis)


def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest():
    genesis.manual_seed(0)
    out = F.dropout2d(genesis.ones(8, 16, 3, 3), p=0.5)
    per_channel = out.reshape(8, 16, 9)
    values = set(per_channel.numpy().reshape(-1).tolist())
    assert values == {0.0, 2.0}
    assert (per_channel.max(dim=2).values == per_channel.min(dim=2).values).all().item()
    layer = genesis.nn.Dropout2d(0.5).eval()
    assert layer(genesis.ones(2, 3, 4, 4)).sum().item() == 96.0


def test_modules_wrap_their_functions():
    x = genesis.tensor(data((2, 4)), dtype=genesis.float64)
    for module, function in ((genesis.nn.LogSigmoid(), F.logsigmoid), (genesis.nn.Softsign(), F.softsign),
                             (genesis.nn.Tanhshrink(), F.tanhshrink), (genesis.nn.GLU(), F.glu),
                             (genesis.nn.Hardshrink(0.2), lambda t: F.hardshrink(t, 0.2)),
                             (genesis.nn.Softshrink(0.2), lambda t: F.softshrink(t, 0.2)),
                             (genesis.nn.Threshold(0.1, 5.0), lambda t: F.threshold(t, 0.1, 5.0))):
        np.testing.assert_array_equal(module(x).numpy(), function(x).numpy())
    y = genesis.tensor(data((2, 4), 1), dtype=genesis.float64)
    np.testing.assert_array_equal(genesis.nn.CosineSimilarity()(x, y).numpy(), F.cosine_similarity(x, y).numpy())
    np.testing.assert_array_equal(genesis.nn.PairwiseDistance()(x, y).numpy(), F.pairwise_distance(x, y).numpy())


def _dropped_pattern(out, ndim_kept):
    """Whether each zeroed/kept decision is constant over the dimensions after the first
    `ndim_kept` (one draw per feature), and the values seen."""
    flat = out.reshape(tuple(out.shape[:ndim_kept]) + (-1,)).numpy()
    constant = bool((flat == flat[..., :1]).all())
    return constant, set(np.unique(flat).tolist())


# (function, input shape, the leading dimensions each draw covers once the input is seen as
# PyTorch 2.13 sees it, number of warnings)
_RANK_CASES = [("dropout2d", (64, 40), 2, 1), ("dropout2d", (6, 8, 5), 2, 1),
               ("dropout2d", (4, 6, 3, 3), 2, 0), ("dropout2d", (2, 6, 2, 2, 2), 2, 1),
               ("dropout3d", (60, 40), 1, 1), ("dropout3d", (6, 8, 5), 1, 1),
               ("dropout3d", (6, 8, 2, 2), 1, 0), ("dropout3d", (2, 6, 2, 2, 2), 2, 0),
               ("dropout1d", (6, 30), 1, 0), ("dropout1d", (4, 6, 30), 2, 0)]


@pytest.mark.parametrize("name, shape, kept, warning_count", _RANK_CASES)
def test_channel_dropout_reads_each_rank_as_pytorch(name, shape, kept, warning_count):
    torch = torch_or_skip()
    results = {}
    for lib in (genesis, torch):
        lib.manual_seed(0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.functional, name)(lib.ones(shape, dtype=lib.float64), p=0.5)
        assert tuple(out.shape) == shape
        results[lib] = (_dropped_pattern(out, kept), [str(w.message) for w in caught])
    (ours, our_warnings), (theirs, their_warnings) = results[genesis], results[torch]
    assert ours == theirs == (True, {0.0, 2.0})
    assert our_warnings == their_warnings and len(our_warnings) == warning_count


@pytest.mark.parametrize("name, shape", [("dropout2d", (5,)), ("dropout1d", (2, 3, 4, 5)),
                                         ("dropout1d", (5,))])
def test_channel_dropout_refuses_the_ranks_pytorch_refuses(name, shape):
    torch = torch_or_skip()
    messages = []
    for lib in (genesis, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as raised:
                getattr(lib.nn.functional, name)(lib.ones(shape))
        messages.append(str(raised.value))
    assert messages[0] == messages[1]


def test_dropout2d_layer_on_lstm_features_drops_elements_as_pytorch():
    layer = genesis.nn.Dropout2d(0.5)  # mnist_rnn puts it after an LSTM: (N, C) features
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        out = layer(genesis.ones(40, 64))
    assert set(out.numpy().reshape(-1).tolist()) == {0.0, 2.0}
    with pytest.warns(UserWarning, match="Received a 2-D input"):  # in eval mode too, as PyTorch
        assert layer.eval()(genesis.ones(3, 4)).sum().item() == 12.0


@pytest.mark.parametrize("shape, kept", [((30, 40), 2), ((4, 6, 30), 2), ((2, 6, 3, 3, 2, 2), 2)])
def test_torch_feature_dropout_draws_per_leading_pair_for_any_rank(shape, kept):
    torch = torch_or_skip()
    patterns = []
    for lib in (genesis, torch):
        out = lib.feature_dropout(lib.ones(shape, dtype=lib.float64), 0.5, True)
        patterns.append(_dropped_pattern(out, kept))
    assert patterns[0] == patterns[1] == (True, {0.0, 2.0})
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        genesis.feature_dropout(genesis.ones(3), 0.5, True)
