-- Accounts reached through an identity provider (OIDC): one row per (issuer, subject). Such an
-- account may have no password (password_hash empty: a password login never matches it).

CREATE TABLE external_identities (
    issuer     text NOT NULL,
    subject    text NOT NULL,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX external_identities_account ON external_identities (account_id);
