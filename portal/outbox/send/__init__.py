"""From a queue message to a settled attempt: the consumer, the one attempt path (attempt.py) and
its two ways (single.py, batch/), the claim, the frozen payload and the shared rate limit."""
