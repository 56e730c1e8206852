"""A list of up to 100 emails sent in one request: the attempt path's second way (way.py), its
claim (claim.py, with the facts every statement of a batch keeps), its seal and who may still
leave (seal.py), its settles (outcomes.py) and the batch as a delivery holds it (held.py)."""
