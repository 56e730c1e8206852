"""Running the portal where people operate it: logs, request IDs, metrics, readiness, the web
server's hooks. Everything here but `web.py` is Flask-free, so the worker and the engine use it too."""
