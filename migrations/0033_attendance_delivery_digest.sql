-- A delivery's body digest, so that a webhook-id that returns with another body is refused (409)
-- instead of being answered as a replay while its sessions are dropped. Deliveries stored before
-- this migration have none and keep being answered as replays.
ALTER TABLE attendance_deliveries ADD COLUMN body_sha256 TEXT;
