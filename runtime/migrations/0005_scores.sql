-- Scores of the games played alone (Solace; docs/ratings.md, "Solace"): one row per finished
-- game of an account with a result, written once by the ratings consumer (the game id is the
-- key: a replayed finished-game event changes nothing). `day` marks a deal of the day.

CREATE TABLE scores (
    game_id    text PRIMARY KEY,
    game       text NOT NULL,
    player_id  text NOT NULL,
    score      double precision NOT NULL,
    day        date,                                -- the deal of the day's day; NULL otherwise
    counted_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scores_player ON scores (game, player_id);
CREATE INDEX scores_day ON scores (game, day, score DESC) WHERE day IS NOT NULL;
