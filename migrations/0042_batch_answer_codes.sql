-- A batch request the provider took is logged with the code 'accepted'; its number of message IDs
-- is the request's size (one per member). Earlier releases logged it as the sentence
-- 'accepted: N message IDs', which the console had to read back.
UPDATE email_batch_requests SET answer = 'accepted' WHERE answer LIKE 'accepted: % message IDs';
