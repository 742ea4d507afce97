-- Following: an account follows accounts (LobbyService.FollowPlayer); the lobby reads it to
-- list whom a player follows and who follows them, and to tell followers that a game of a
-- player they follow started. Deleting an account ends its follows both ways.
CREATE TABLE follows (
    follower   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    followed   text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (follower, followed),
    CHECK (follower <> followed)
);
CREATE INDEX follows_followed ON follows (followed);

-- Who may follow an account (LobbyService.SetFollowSetting): a row says nobody; none, everyone.
CREATE TABLE follow_settings (
    account_id text PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    accept_from text NOT NULL CHECK (accept_from = 'nobody')
);
