"""The `genesis` command line: trace scripts, check gradients, render saved traces."""
