"""The `genesis` subcommands, one module each; `genesis_cli.app` registers them."""
