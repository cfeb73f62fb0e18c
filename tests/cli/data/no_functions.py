"""A module that defines no Function subclass."""
import genesis


def helper(x):
    return x * 2


Imported = genesis.Function  # imported names are not this file's Functions
