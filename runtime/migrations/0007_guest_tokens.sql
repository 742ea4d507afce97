-- Guest tokens that ended: replaced by the guest's next (Refresh), or their guest became an
-- account (Register). A guest has one token that works at a time; gateways read this table as
-- they read ended sessions (gateway/accounts.py Revocations). Endings older than any guest
-- (GUEST_MAX_SECONDS and a day) are deleted as new ones are written.
CREATE TABLE ended_guest_tokens (
    id        text PRIMARY KEY,                           -- g-<hex>: the token's `gtk`
    player_id text NOT NULL,
    ended_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    why       text NOT NULL
);
CREATE INDEX ended_guest_tokens_at ON ended_guest_tokens (ended_at);

-- Accounts made per client address and day (UTC): Register is bounded per address.
CREATE TABLE account_creations (
    address text NOT NULL,
    day     date NOT NULL,
    made    integer NOT NULL,
    PRIMARY KEY (address, day)
);
