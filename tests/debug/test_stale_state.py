"""A backward that reads state changed after its forward is found (a global, a ctx
attribute, an object's attribute, a tensor kept on ctx and changed in place); clean
Functions that look like it get nothing, and the watch leaves the run as it was."""
import genesis
import genesis.nn.functional as F
from genesis.debug.session import TraceSession

SCHEDULE = {"scale": 1.0}


class ReadsGlobal(genesis.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * SCHEDULE["scale"]

    @staticmethod
    def backward(ctx, grad):
        return grad * SCHEDULE["scale"]


class KeepsScale(genesis.autograd.Function):
    """Correct: the scale the forward used is kept on ctx."""

    @staticmethod
    def forward(ctx, x):
        ctx.scale = SCHEDULE["scale"]
        return x * ctx.scale

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale


class CountsCalls(genesis.autograd.Function):
    """Correct, with a side effect on ctx: counts its backward calls."""

    @staticmethod
    def forward(ctx, x):
        ctx.calls = 0
        return x * 3

    @staticmethod
    def backward(ctx, grad):
        ctx.calls += 1
        return grad * 3


class NoisyBackward(genesis.autograd.Function):
    """A stochastic backward (noise on purpose): two calls differ, so it is not judged."""

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, grad):
        return grad + 0.01 * genesis.randn(*grad.shape)


class KeepsTensorAttribute(genesis.autograd.Function):
    """A tensor kept on ctx as a plain attribute (not saved), so in-place changes go unnoticed."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.weight = weight
        return x * weight

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.weight, None


def session_of(run):
    with TraceSession(steps=1) as session:
        run()
    return session.result(script="test.py").findings


def stale(findings):
    return [finding for finding in findings if finding.kind == "stale_backward"]


def test_a_global_changed_between_forward_and_backward_is_found():
    SCHEDULE["scale"] = 1.0

    def run():
        x = genesis.randn(4, requires_grad=True)
        out = ReadsGlobal.apply(x)
        SCHEDULE["scale"] = 0.5
        out.sum().backward()

    (finding,) = stale(session_of(run))
    assert finding.title == "ReadsGlobal.backward depends on state that changed after forward"
    assert "x (input 0)" in finding.message and "No ctx attribute changed" in finding.message
    assert finding.source and "test_stale_state.py" in finding.source


def test_a_ctx_attribute_changed_after_forward_is_named():
    SCHEDULE["scale"] = 2.0

    def run():
        x = genesis.randn(4, requires_grad=True)
        out = KeepsScale.apply(x)
        out.grad_fn.scale = 5.0
        out.sum().backward()

    (finding,) = stale(session_of(run))
    assert "ctx.scale was 2.0 at the end of forward and 5.0 when backward started" in finding.message
    assert finding.details["changed"] == {"scale": ["2.0", "5.0"]}


def test_a_tensor_kept_on_ctx_and_changed_in_place_is_named():
    def run():
        x, weight = genesis.randn(4, requires_grad=True), genesis.randn(4)
        out = KeepsTensorAttribute.apply(x, weight)
        with genesis.no_grad():
            weight.mul_(2)
        out.sum().backward()

    (finding,) = stale(session_of(run))
    assert "ctx.weight was a tensor at version 0 at the end of forward and a tensor at version 1" \
        in finding.message


def test_clean_functions_that_look_like_it_get_no_finding_and_keep_their_behaviour():
    SCHEDULE["scale"] = 2.0
    nodes = []

    def run():
        x = genesis.randn(4, requires_grad=True)
        kept = KeepsScale.apply(x)
        SCHEDULE["scale"] = 0.1  # the schedule moves on, but the backward reads ctx.scale
        counted = CountsCalls.apply(x)
        nodes.append(counted.grad_fn)
        noisy = NoisyBackward.apply(x)
        loss = (kept + counted + noisy).sum()
        loss.backward()
        for _ in range(2):  # gradient accumulation: forward, backward, forward, backward
            F.mse_loss(KeepsScale.apply(x), genesis.zeros(4)).backward()

    findings = session_of(run)
    assert stale(findings) == []
    assert nodes[0].calls == 1  # the watch's own backward runs left no count behind


def test_the_random_stream_of_the_script_is_unchanged_by_the_watch():
    def draws(traced):
        genesis.manual_seed(3)
        x = genesis.randn(4, requires_grad=True)

        def run():
            NoisyBackward.apply(x).sum().backward()
            return genesis.randn(3)

        if not traced:
            return run()
        result = []
        session_of(lambda: result.append(run()))
        return result[0]

    assert draws(True).tolist() == draws(False).tolist()
