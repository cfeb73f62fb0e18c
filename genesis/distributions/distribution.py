"""The base of genesis's distributions: shapes, argument and value validation, expand, and
sample() as rsample() without a graph, as in PyTorch's `Distribution`."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..creation import full
from ..sizes import Size
from ..tensor import Tensor
from . import constraints

__all__ = ["Distribution"]


class Distribution:
    """A batch of distributions of shape `batch_shape`, each over events of `event_shape`.

    A subclass declares `arg_constraints` (parameter name -> constraint), `support`, and
    `batched_params`: the tensor attributes that `expand` broadcasts to a new batch shape.
    With `validate_args` (on by default, as PyTorch's), the parameters are checked against
    their constraints here, and values given to `log_prob` (and `cdf`) against the support.
    """

    has_rsample = False
    has_enumerate_support = False
    arg_constraints: dict = {}
    support = None
    batched_params: tuple = ()
    _validate_args = True   # the default for validate_args=None (set_default_validate_args)

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Whether distributions made with validate_args=None check their arguments and values
        (True by default, as PyTorch's under `python` without -O).

        >>> Distribution.set_default_validate_args(False)
        >>> Distribution.set_default_validate_args(True)
        """
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: tuple = (), event_shape: tuple = (), validate_args=None):
        self.batch_shape, self.event_shape = Size(batch_shape), Size(event_shape)
        if validate_args is not None:
            self._validate_args = bool(validate_args)
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint) or name not in vars(self):
                    continue
                value = getattr(self, name)
                with no_grad():
                    valid = bool(constraint.check(value).all().item())
                if not valid:
                    raise ValueError(
                        f"Expected parameter {name} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the constraint "
                        f"{constraint!r}, but found invalid values:\n{value}")

    def _validate_sample(self, value) -> None:
        """PyTorch's checks of a value given to log_prob: a tensor, of a shape that broadcasts
        with batch_shape + event_shape, inside the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_start = value.dim() - len(self.event_shape)
        if tuple(value.shape[event_start:]) != tuple(self.event_shape):
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self.event_shape}.")
        actual, expected = tuple(value.shape), tuple(self.batch_shape) + tuple(self.event_shape)
        for have, want in zip(reversed(actual), reversed(expected)):
            if have != 1 and want != 1 and have != want:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{value.shape} vs {Size(expected)}.")
        with no_grad():
            valid = bool(self.support.check(value).all().item())
        if not valid:
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({self.support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None) -> "Distribution":
        """The same distribution broadcast to `batch_shape` (views of the parameters).

        >>> import genesis
        >>> from genesis.distributions import Normal
        >>> Normal(genesis.zeros(2), 1.0).expand((3, 2)).batch_shape
        genesis.Size([3, 2])
        """
        batch_shape = Size(batch_shape)
        new = type(self).__new__(type(self)) if _instance is None else _instance
        new.__dict__.update(self.__dict__)
        for name in self.batched_params:
            param = getattr(self, name)
            tail = tuple(param.shape[len(self.batch_shape):])
            setattr(new, name, param.expand(tuple(batch_shape) + tail))
        new.batch_shape = batch_shape
        return new

    def sample(self, sample_shape=()) -> Tensor:
        """Samples of shape sample_shape + batch_shape + event_shape, with no gradient."""
        with no_grad():
            return self.rsample(sample_shape) if self.has_rsample else self._sample(sample_shape)

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def rsample(self, sample_shape=()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sample (rsample); "
                                  "use sample()")

    def _sample(self, sample_shape) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} must define its sampling")

    def _extended(self, sample_shape) -> tuple:
        shape = (sample_shape,) if isinstance(sample_shape, int) else tuple(sample_shape)
        return shape + tuple(self.batch_shape) + tuple(self.event_shape)

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{type(self)} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _filled(self, like: Tensor, value: float) -> Tensor:
        """A tensor of batch_shape + event_shape filled with `value` (nan means, inf variances)."""
        return full(self._extended(()), value, dtype=like.dtype, device=like._device)

    def __repr__(self) -> str:
        names = [name for name in self.arg_constraints if name in vars(self)]
        shown = ", ".join(f"{name}: {vars(self)[name] if vars(self)[name].numel() == 1 else vars(self)[name].shape}"
                          for name in names)
        return f"{type(self).__name__}({shown})"

