// The four games, in the lobby's order.
import { esoloe } from "./esoloe";
import { solace } from "./solace";
import { solo } from "./solo";
import { zoxso } from "./zoxso";
import type { GameModule } from "./types";

export const GAMES: GameModule[] = [esoloe, zoxso, solo, solace];

export function gameModule(id: string): GameModule | undefined {
  return GAMES.find((g) => g.id === id);
}

/** The game a game id names: ids start with it ("zoxso-4f1c..."). */
export function gameOfId(gameId: string): string {
  return gameId.split("-", 1)[0];
}

export const LEVELS = ["random", "greedy", "strong", "expert"] as const;
