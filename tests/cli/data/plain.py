"""Plain callables for `genesis gradcheck file.py:name`."""
import genesis


def softplus(x):
    return (1 + x.exp()).log()


def wrong_square(x):
    """x * x, but the gradient flows through a detached copy on one side."""
    return x * x.detach()


def not_a_tensor(x):
    return 3.0


LIMIT = 7
