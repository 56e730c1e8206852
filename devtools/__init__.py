"""Development tools outside the product: the provider model, process and test helpers, `make run`."""
