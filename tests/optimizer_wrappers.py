"""Optimizer wrappers as their popular implementations write them, shared by the tests of the
optimizers and of genesis trace's optimizer watch."""
import genesis


class Lookahead(genesis.optim.Optimizer):
    """A wrapper stepping another optimizer inside its own step, over the same groups, never
    calling Optimizer.__init__ (PyTorch lets it): every k steps the weights move halfway back
    to slow copies."""

    def __init__(self, inner, k=2):
        self.inner, self.k, self.counter = inner, k, 0
        self.param_groups, self.state = inner.param_groups, inner.state
        self.slow = [p.detach().clone() for g in self.param_groups for p in g["params"]]

    def zero_grad(self, set_to_none=True):
        self.inner.zero_grad(set_to_none)

    @genesis.no_grad()
    def step(self, closure=None):
        loss = self.inner.step(closure)
        self.counter += 1
        if self.counter % self.k == 0:
            for slow, fast in zip(self.slow, (p for g in self.param_groups for p in g["params"])):
                slow.add_(fast - slow, alpha=0.5)
                fast.copy_(slow)
        return loss
