"""The public home page (people signed in go to their own landing page) and the health check."""
