"""KL(p || q) between two distributions of the same kind, as PyTorch computes it."""
from __future__ import annotations

from ..tensor import Tensor
from .continuous import Normal
from .discrete import Bernoulli, Categorical
from .independent import Independent, sum_rightmost

__all__ = ["kl_divergence"]


def kl_divergence(p, q) -> Tensor:
    """The KL divergence of q from p: Normal, Bernoulli or Categorical pairs, and
    Independent pairs of those over the same event dimensions.

    >>> import genesis
    >>> kl_divergence(Normal(0.0, 1.0), Normal(0.0, 1.0)).item()
    0.0
    """
    if isinstance(p, Independent) and isinstance(q, Independent) and \
            p.reinterpreted_batch_ndims == q.reinterpreted_batch_ndims:
        return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
    if isinstance(p, Normal) and isinstance(q, Normal):
        ratio = (p.scale / q.scale) ** 2
        return 0.5 * (ratio + ((p.loc - q.loc) / q.scale) ** 2 - 1 - ratio.log())
    if isinstance(p, Categorical) and isinstance(q, Categorical):
        return (p.probs * (p.logits - q.logits)).sum(-1)
    if isinstance(p, Bernoulli) and isinstance(q, Bernoulli):
        return p.probs * (p.logits.sigmoid().log() - q.logits.sigmoid().log()) + \
            (1 - p.probs) * ((-p.logits).sigmoid().log() - (-q.logits).sigmoid().log())
    raise NotImplementedError(f"kl_divergence of {type(q).__name__} from {type(p).__name__} is not "
                              "supported by genesis yet (it has Normal, Bernoulli and Categorical "
                              "pairs, and Independent pairs of them)")
