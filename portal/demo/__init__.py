"""Demo requests: anyone asks for a demo; the requester and the sales inbox are emailed."""
