-- API tokens (an account's named, scoped, expiring credentials for programs: a bot, a client)
-- and bot accounts (shown as bots; they play only with a token of the `bot` scope).

ALTER TABLE accounts ADD COLUMN bot boolean NOT NULL DEFAULT false;

CREATE TABLE api_tokens (
    id           text PRIMARY KEY,                  -- t-<hex>: the access tokens' `sid`
    account_id   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name         text NOT NULL,
    scopes       text[] NOT NULL,
    hash         bytea NOT NULL UNIQUE,             -- SHA-256 of the token (never the token)
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_account ON api_tokens (account_id);
CREATE INDEX api_tokens_revoked ON api_tokens (revoked_at) WHERE revoked_at IS NOT NULL;
