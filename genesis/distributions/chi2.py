"""Chi2(df): the sum of `df` squared standard normals, Gamma(df / 2, 1 / 2) as PyTorch's."""
from __future__ import annotations

from . import constraints
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["Chi2"]


class Chi2(Gamma):
    """Chi-squared with `df` degrees of freedom: exactly Gamma(concentration=df/2, rate=1/2).

    >>> import genesis
    >>> Chi2(genesis.tensor([4.0])).mean.tolist()
    [4.0]
    """

    arg_constraints = {"df": constraints.positive}
    batched_params = ("concentration", "rate", "df")

    def __init__(self, df, validate_args=None):
        # df is kept (rather than derived as 2·concentration) so that it is validated by name
        self.df, = broadcast_all(df)
        super().__init__(0.5 * self.df, 0.5, validate_args=validate_args)
