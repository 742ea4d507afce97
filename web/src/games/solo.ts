// Solo: a placeholder board (the legal moves as buttons) until its own board is drawn.
import { SoloService } from "../gen/tabletop/solo/v1/solo_pb";
import { create } from "@bufbuild/protobuf";
import { GameOptionsSchema } from "../gen/tabletop/lobby/v1/lobby_pb";
import { OptionsSchema } from "../gen/tabletop/solo/v1/solo_pb";
import { movesAsButtons } from "./placeholder";
import type { GameModule } from "./types";

export const solo: GameModule = {
  id: "solo",
  title: "Solo",
  blurb: "Race to empty your hand by matching the discard pile; jump in out of turn with an exact copy.",
  service: SoloService,
  seats: { min: 2, max: 10, default: 4 },
  options: (seats) => create(GameOptionsSchema, { game: { case: "solo", value: create(OptionsSchema, { players: seats }) } }),
  render: movesAsButtons,
};
