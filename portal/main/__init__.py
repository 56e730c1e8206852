"""The landing redirect and the health check."""
