-- An erased address, by its keyed hash (HMAC-SHA256 under SECRET_KEY, portal/core/pseudonyms.py),
-- with the pseudonym its rows now carry. What reaches the portal about the address after its erasure
-- is written under the pseudonym, never under the address: a programme platform's late attendance
-- record (and its correction) joins the pseudonymised session, a late bounce or complaint on an
-- erased email suppresses the hash. The demo seed does not create an erased demo account again.
-- A second erasure of the same address reuses the pseudonym, so its rows still join.
CREATE TABLE erased_addresses (
    address_hash TEXT PRIMARY KEY,
    pseudonym TEXT NOT NULL UNIQUE,
    erased_at TEXT NOT NULL
);
