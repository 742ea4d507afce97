// A board for games without their own yet: the view as text and the legal moves as buttons.
import { h } from "../dom";
import type { BoardContext } from "./types";

export function movesAsButtons(ctx: BoardContext): void {
  ctx.root.append(h("pre", { class: "raw-view", "aria-label": "The game's view" }, JSON.stringify(ctx.view, (_k, v) => (typeof v === "bigint" ? String(v) : v), 1)));
  if (ctx.lastMove) ctx.root.append(h("p", { class: "last-move" }, `Last move: ${ctx.lastMove.move}`));
  const list = h("div", { class: "move-list", role: "group", "aria-label": "Legal moves" });
  for (const move of ctx.legal) {
    list.append(h("button", { type: "button", "data-target": move, "aria-label": `Play ${move}`, disabled: ctx.busy, onclick: () => ctx.play(move) }, move));
  }
  ctx.root.append(list);
}
