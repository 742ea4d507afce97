-- Accounts, their sessions (one per login: a family of refresh tokens) and the refresh tokens.

CREATE TABLE accounts (
    id            text PRIMARY KEY,                 -- the player id: a-<hex>
    username      text NOT NULL,                    -- as registered
    username_key  text NOT NULL UNIQUE,             -- lower-cased: names are unique whatever the case
    password_hash text NOT NULL,                    -- argon2id, with its parameters
    created_at    timestamptz NOT NULL DEFAULT now(),
    password_changed_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
    id           text PRIMARY KEY,                  -- s-<hex>: the access tokens' `sid`
    account_id   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,              -- the refresh tokens' end
    client       text NOT NULL DEFAULT '',          -- the address it logged in from
    revoked_at   timestamptz,
    revoked_why  text
);
CREATE INDEX sessions_account ON sessions (account_id);
CREATE INDEX sessions_revoked ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;

CREATE TABLE refresh_tokens (
    hash       bytea PRIMARY KEY,                   -- SHA-256 of the token (never the token)
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    issued_at  timestamptz NOT NULL DEFAULT now(),
    used_at    timestamptz                          -- rotated: shown again, it is a reuse
);
CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id);
