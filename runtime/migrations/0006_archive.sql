-- The archive (docs/archive.md): every finished game with a person at its table, written once
-- by the archiver from the finished games' stream (the game id is the key: a replayed event
-- changes nothing), kept for good. `seed` decides the hidden cards and is never shown; what
-- others see of an archived game is what a spectator could see.

CREATE TABLE archived_games (
    game_id       text PRIMARY KEY,
    game          text NOT NULL,                  -- esoloe, solo, solace, zoxso
    edition       integer NOT NULL,               -- the rules edition it was played under
    options       jsonb NOT NULL,
    time_control  jsonb,                          -- NULL: untimed
    seed          bigint NOT NULL,
    day           date,                           -- a Solace deal of the day's day
    rated         boolean NOT NULL,
    public        boolean NOT NULL DEFAULT true,  -- listed in the players' histories
    seats         jsonb NOT NULL,                 -- per seat: player_id, name, bot, rating
    result        jsonb,                          -- NULL: ended without a result
    end_reason    text NOT NULL,                  -- the result's reason: win, timeout, aborted
    moves         jsonb NOT NULL,                 -- per version from 1: [actor, move, ms, clocks, bot]
    created_at    timestamptz NOT NULL,
    finished_at   timestamptz NOT NULL,
    archived_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX archived_games_month ON archived_games (finished_at, game_id);

-- One row per seat, for a player's history and its filters.
CREATE TABLE archived_seats (
    game_id     text NOT NULL REFERENCES archived_games ON DELETE CASCADE,
    seat        integer NOT NULL,
    player_id   text NOT NULL,
    game        text NOT NULL,
    outcome     text NOT NULL,                    -- win, loss, draw, none (no result)
    finished_at timestamptz NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX archived_seats_history ON archived_seats (player_id, finished_at DESC, game_id);
