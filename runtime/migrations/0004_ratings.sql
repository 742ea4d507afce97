-- Ratings (docs/ratings.md): one row per game kind and rated player (an account, or a bot level
-- as `bot-<level>`), and one row per rated game already counted. The ratings consumer inserts a
-- game's row and updates its players' ratings in one transaction: a game id already here is a
-- game already counted, so a replayed finished-game event changes nothing.

CREATE TABLE ratings (
    game       text NOT NULL,                       -- the game kind: esoloe, solo, ...
    player_id  text NOT NULL,                       -- a-/b-/p- (an account), bot-<level>
    mu         double precision NOT NULL,
    sigma      double precision NOT NULL,
    games      integer NOT NULL DEFAULT 0,          -- rated games counted
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (game, player_id)
);
-- The leaderboard order (the conservative rating), for rebuilding Redis's sorted sets.
CREATE INDEX ratings_board ON ratings (game, (mu - 3 * sigma) DESC);

CREATE TABLE rated_games (
    game_id     text PRIMARY KEY,                   -- a game counted (once)
    game        text NOT NULL,
    counted_at  timestamptz NOT NULL DEFAULT now(),
    changes     jsonb NOT NULL                      -- per rated seat: player, rank, before, after
);
