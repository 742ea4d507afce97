// Solace: a placeholder board (the legal moves as buttons) until its own board is drawn.
import { SolaceService } from "../gen/tabletop/solace/v1/solace_pb";
import { movesAsButtons } from "./placeholder";
import type { GameModule } from "./types";

export const solace: GameModule = {
  id: "solace",
  title: "Solace",
  blurb: "A patience for one: turn ten nests of pyramids into single-colour towers.",
  service: SolaceService,
  seats: { min: 1, max: 1, default: 1 },
  render: movesAsButtons,
};
