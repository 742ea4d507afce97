// e-SOLO-e: the five views of the five squares: the front (stacks of up to four cubes, each
// showing its front face) with the upper view above it, the left and right views beside it and
// the back view under it. Click a square, then pick how the cube is turned (a symbol on
// top, one of four faces in front): the legal placements only.
import { EsoloeService, type Event, type View } from "../gen/tabletop/esoloe/v1/esoloe_pb";
import { h, s } from "../dom";
import { narrow, pick } from "../moves";
import type { BoardContext, GameModule } from "./types";

const SQUARES = ["a", "b", "c", "d", "e"];
const CELL = 56;
/** A cell of the side and back views. */
const SMALL = 30;

export function esoloeSteps(move: string): string[] {
  return [move.slice(0, 1), move.slice(1)];
}

function faceWords(face: number): string {
  return face >= 1 && face <= 3 ? `${face}` : "blank";
}

/** A front face in words: a blank front says which symbol faces the back (7 - front). */
function frontWords(front: number): string {
  return front >= 4 ? `blank (${7 - front} behind)` : `${front}`;
}

/** A face: the owner's colour, with 1-3 dots for a symbol. */
function face(x: number, y: number, size: number, value: number, seat: number | undefined, extra = ""): SVGElement {
  const g = s("g", { class: `face ${seat === undefined ? "gap" : `seat${seat}`} ${extra}` });
  g.append(s("rect", { x: x + 2, y: y + 2, width: size - 4, height: size - 4, rx: 6 }));
  const dots: Array<[number, number]> =
    value === 1 ? [[0.5, 0.5]] : value === 2 ? [[0.3, 0.3], [0.7, 0.7]] : value === 3 ? [[0.27, 0.27], [0.5, 0.5], [0.73, 0.73]] : [];
  for (const [dx, dy] of dots) g.append(s("circle", { class: "dot", cx: x + dx * size, cy: y + dy * size, r: size * 0.09 }));
  return g;
}

function render(ctx: BoardContext): void {
  const view = ctx.view as View;
  const picked = (ctx.state.picked as string[] | undefined) ?? [];
  const { next } = narrow(ctx.legal, esoloeSteps, picked);
  const click = (target: string) => {
    if (ctx.busy) return;
    const result = pick(ctx.legal, esoloeSteps, (ctx.state.picked as string[]) ?? [], target);
    ctx.state.picked = result.picked;
    if (result.move) ctx.play(result.move);
    else ctx.redraw();
  };
  const last = ctx.lastMove && /^[a-e][1-6]{2}$/.test(ctx.lastMove.move) ? ctx.lastMove.move[0] : undefined;
  const levels = 4;
  const side = SMALL + 14; // a side view's column and the gap beside it
  const left = 8 + side; // the front view's left edge
  const upperY = 20;
  const frontY = upperY + CELL + 28;
  const backY = frontY + levels * CELL + 44;
  const width = left + SQUARES.length * CELL + side;
  const height = backY + levels * SMALL + 24;
  const svg = s("svg", {
    class: "board esoloe", viewBox: `0 0 ${width} ${height}`, role: "group",
    "aria-label": "e-SOLO-e board: the five views of squares a to e (upper, front, left, right and back)",
  });
  const cellWords = (cell: { face: number; seat?: number } | undefined) =>
    cell?.face ? `${faceWords(cell.face)} (${ctx.names(cell.seat ?? 0)})` : "gap";
  /** A view as an image for screen readers: its cells in words. */
  const viewGroup = (name: string, cells: string) =>
    s("g", { role: "img", "aria-label": `${name}: ${cells}` });

  svg.append(s("text", { x: left, y: upperY - 6, class: "label" }, "Upper view"));
  svg.append(s("text", { x: left, y: frontY - 6, class: "label" }, "Front view"));
  const upper = viewGroup("Upper view, a to e", SQUARES.map((sq, col) => `${sq} ${cellWords(view.upper[col])}`).join(", "));
  svg.append(upper);
  SQUARES.forEach((sq, col) => {
    const x = left + col * CELL;
    const stack = view.stacks[col]?.cubes ?? [];
    const up = view.upper[col];
    upper.append(face(x, upperY, CELL, up?.face ?? 0, up?.face ? up.seat : undefined, last === sq ? "last" : ""));
    for (let level = 0; level < levels; level++) {
      const cube = stack[level];
      const y = frontY + (levels - 1 - level) * CELL;
      if (cube) {
        const isLast = last === sq && level === stack.length - 1;
        svg.append(face(x, y, CELL, cube.front, cube.seat, isLast ? "last" : ""));
      } else {
        svg.append(s("rect", { class: "slot", x: x + 2, y: y + 2, width: CELL - 4, height: CELL - 4, rx: 6 }));
      }
    }
    svg.append(s("text", { x: x + CELL / 2, y: frontY + levels * CELL + 16, class: "coord", "text-anchor": "middle" }, sq));
    if (next.has(sq) || picked[0] === sq) {
      const chosen = picked[0] === sq;
      const target = s("rect", {
        class: `target${chosen ? " chosen" : ""}`, x: x + 1, y: frontY + 1, width: CELL - 2, height: levels * CELL - 2, rx: 8,
        tabindex: 0, role: "button", "data-target": sq,
        "aria-label": `Square ${sq}: place a cube on the stack of ${stack.length}`, "aria-pressed": chosen ? "true" : "false",
      });
      target.addEventListener("click", () => click(sq));
      target.addEventListener("keydown", (e) => {
        const key = (e as KeyboardEvent).key;
        if (key === "Enter" || key === " ") { e.preventDefault(); click(sq); }
      });
      svg.append(target);
    }
  });
  // the left and right views beside the front view, a cell per level (the nearest cube's face)
  for (const [name, cells, x] of [["Left", view.left, 8], ["Right", view.right, left + SQUARES.length * CELL + 14]] as const) {
    svg.append(s("text", { x: x + SMALL / 2, y: frontY - 6, class: "label", "text-anchor": "middle" }, name));
    const g = viewGroup(`${name} view, bottom to top`, Array.from({ length: levels }, (_, level) => cellWords(cells[level])).join(", "));
    for (let level = 0; level < levels; level++) {
      const cell = cells[level];
      g.append(face(x, frontY + (levels - 1 - level) * CELL + (CELL - SMALL) / 2, SMALL, cell?.face ?? 0, cell?.face ? cell.seat : undefined));
    }
    svg.append(g);
  }
  // the back view under it, from behind: e on the left
  const backX = left + (SQUARES.length * CELL - SQUARES.length * SMALL) / 2;
  svg.append(s("text", { x: backX, y: backY - 6, class: "label" }, "Back view"));
  const back = viewGroup("Back view, bottom to top, e to a",
    Array.from({ length: levels }, (_, level) => (view.back[level]?.cells ?? []).map(cellWords).join(" ")).filter(Boolean).join("; ") || "empty");
  [...SQUARES].reverse().forEach((sq, col) => {
    for (let level = 0; level < levels; level++) {
      const cell = view.back[level]?.cells[col];
      back.append(face(backX + col * SMALL, backY + (levels - 1 - level) * SMALL, SMALL, cell?.face ?? 0, cell?.face ? cell.seat : undefined));
    }
    back.append(s("text", { x: backX + col * SMALL + SMALL / 2, y: backY + levels * SMALL + 14, class: "coord small", "text-anchor": "middle" }, sq));
  });
  svg.append(back);
  ctx.root.append(svg);
  const hand = h("p", { class: "hand" },
    ...view.cubesLeft.map((n, seat) => h("span", { class: `chip seat${seat}` }, `${ctx.names(seat)}: ${n} cubes left`)));
  ctx.root.append(hand);
  if (picked.length === 1) {
    const turns = [...narrow(ctx.legal, esoloeSteps, picked).next].sort();
    const box = h("div", { class: "turns", role: "group", "aria-label": `How to turn the cube on square ${picked[0]}` },
      h("p", {}, `Square ${picked[0]}: choose the face on top and the face in front`));
    for (const turn of turns) {
      const topFace = Number(turn[0]);
      const frontFace = Number(turn[1]);
      const mini = s("svg", { viewBox: "0 0 84 40", class: "mini", "aria-hidden": "true" },
        face(0, 0, 40, topFace, ctx.seat), face(44, 0, 40, frontFace, ctx.seat));
      const button = h("button", {
        type: "button", class: "turn", "data-target": turn,
        "aria-label": `Place on ${picked[0]} with ${faceWords(topFace)} on top and ${frontWords(frontFace)} in front`,
        onclick: () => click(turn),
      }, mini, h("span", {}, `top ${faceWords(topFace)}, front ${frontWords(frontFace)}`));
      box.append(button);
    }
    box.append(h("button", { type: "button", class: "secondary", onclick: () => { ctx.state.picked = []; ctx.redraw(); } }, "Cancel"));
    ctx.root.append(box);
  }
}

function describeEvent(event: unknown, names: (seat: number) => string): string | undefined {
  const e = event as Event;
  switch (e.kind.case) {
    case "placed": {
      const p = e.kind.value;
      return `${names(p.seat)} placed a cube on ${p.square} (level ${p.level + 1}): ${faceWords(p.top)} on top, ${faceWords(p.front)} in front`;
    }
    case "won": {
      const methods = e.kind.value.methods.map((m) => (m === "two_sets" ? "two sets" : m === "colour" ? "four of a colour" : "four symbols")).join(" and ");
      return `${names(e.kind.value.seat)} won with ${methods}`;
    }
    case "draw":
      return `a draw: ${e.kind.value.reason || "no cube can be placed"}`;
    case "resigned":
      return `${names(e.kind.value.seat)} resigned`;
    default:
      return undefined;
  }
}

export const esoloe: GameModule = {
  id: "esoloe",
  title: "e-SOLO-e",
  blurb: "Two players stack symbol cubes on five squares: line up four from any side.",
  service: EsoloeService,
  seats: { min: 2, max: 2, default: 2 },
  render,
  describeEvent,
};
