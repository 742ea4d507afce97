// ZoxSo: placeholder until its board is drawn (below, in this file).
import { ZoxsoService } from "../gen/tabletop/zoxso/v1/zoxso_pb";
import { movesAsButtons } from "./placeholder";
import type { GameModule } from "./types";

export const zoxso: GameModule = {
  id: "zoxso",
  title: "ZoxSo",
  blurb: "Place ten pieces on the Pearls, then race a Xing to the Throne across Pearls and Stones.",
  service: ZoxsoService,
  seats: { min: 2, max: 2, default: 2 },
  seatName: (seat) => (seat === 0 ? "Dark" : seat === 1 ? "Light" : undefined),
  render: movesAsButtons,
};
