"""RLCard's UNO with random agents: games per CPU second. Run by bench/solo.py with the separate
benchmark virtualenv's Python (/work/main/.bench-venv/bin/python); rlcard is not a dependency of
the product. Prints one JSON object: {"games_per_second", "steps_per_game", "games"}.

    .bench-venv/bin/python bench/rlcard_uno.py [SECONDS]

RLCard 1.2.0's UNO has 2 players (its `game_num_players` setting is ignored).
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    import rlcard  # type: ignore[import-not-found, unused-ignore]
    from rlcard.agents import RandomAgent  # type: ignore[import-not-found, unused-ignore]

    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    env = rlcard.make("uno", config={"seed": 0})
    env.set_agents([RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)])
    games = steps = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        trajectories, _ = env.run(is_training=False)
        # Each player's trajectory alternates state, action, ..., state.
        steps += sum((len(t) - 1) // 2 for t in trajectories)
        games += 1
    elapsed = time.process_time() - start
    print(
        json.dumps(
            {"games_per_second": games / elapsed, "steps_per_game": steps / games, "games": games}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
