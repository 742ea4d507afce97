// ZoxSo: the Pearls (8x8 points) and the Stones (7x7 cells between them) as one SVG, the Wall
// and the Throne drawn, Light's side at the top (Dark's when you play Light). A move is clicked
// in its parts: a piece in hand then a Pearl; or a piece, then where it steps, flips or moves
// (after a flip, optionally where it moves on), e.g. b2, B2, B5 for "b2^B2-B5".
import { ZoxsoService, PieceType, WinReason, DrawReason, type Event, type Piece, type View } from "../gen/tabletop/zoxso/v1/zoxso_pb";
import { h, s } from "../dom";
import { narrow, pick } from "../moves";
import type { BoardContext, GameModule } from "./types";

const G = 46; // the distance between two Pearls
const M = 30; // the margin around the Pearls
const FILES = "abcdefgh";
const TYPES: Record<number, string> = { [PieceType.MA]: "Ma", [PieceType.DAO]: "Dao", [PieceType.XING]: "Xing" };
const LETTER: Record<string, string> = { Ma: "M", Dao: "D", Xing: "X" };
const SIDE = ["Dark", "Light"];

/** The targets a move is clicked in, in order. */
export function zoxsoSteps(move: string): string[] {
  if (move === "pass") return ["pass"];
  const at = move.indexOf("@");
  if (at >= 0) return [`${move.slice(0, at)}@`, move.slice(at + 1)];
  return move.split(/[-^]/);
}

const isStone = (name: string) => /^[A-G][1-7]$/.test(name);
const isPearl = (name: string) => /^[a-h][1-8]$/.test(name);

function pieceWords(piece: Piece | undefined): string {
  if (!piece) return "";
  return `${SIDE[piece.seat] ?? `seat ${piece.seat + 1}`} ${TYPES[piece.type] ?? "piece"}`;
}

function render(ctx: BoardContext): void {
  const view = ctx.view as View;
  const flipped = ctx.seat === 1;
  const picked = (ctx.state.picked as string[] | undefined) ?? [];
  const { next, complete } = narrow(ctx.legal, zoxsoSteps, picked);
  const click = (target: string) => {
    if (ctx.busy) return;
    const now = (ctx.state.picked as string[] | undefined) ?? [];
    const here = narrow(ctx.legal, zoxsoSteps, now);
    // the last picked target again: the move so far (a flip without a move after it)
    if (here.complete && now.length && now[now.length - 1] === target && !here.next.has(target)) {
      ctx.state.picked = [];
      ctx.play(here.complete);
      return;
    }
    const result = pick(ctx.legal, zoxsoSteps, now, target);
    ctx.state.picked = result.picked;
    if (result.move) ctx.play(result.move);
    else ctx.redraw();
  };
  // screen position of a Pearl's point (file 0-7, row 1-8); a Stone's centre is half a step on
  const px = (file: number) => M + (flipped ? 7 - file : file) * G;
  const py = (row: number) => M + (flipped ? row - 1 : 8 - row) * G;
  const pearlXY = (name: string): [number, number] => [px(FILES.indexOf(name[0])), py(Number(name[1]))];
  const stoneXY = (name: string): [number, number] => {
    const file = name.charCodeAt(0) - 65;
    const row = Number(name[1]);
    return [(px(file) + px(file + 1)) / 2, (py(row) + py(row + 1)) / 2];
  };
  const pieces = new Map<string, Piece>();
  for (const sq of [...view.pearls, ...view.stones]) if (sq.piece) pieces.set(sq.name, sq.piece);
  const lastSquares = new Set(ctx.lastMove ? zoxsoSteps(ctx.lastMove.move).filter((t) => isPearl(t) || isStone(t)) : []);
  const size = 2 * M + 7 * G;
  const svg = s("svg", {
    class: "board zoxso", viewBox: `0 0 ${size} ${size + 6}`, role: "group",
    "aria-label": `ZoxSo board, ${flipped ? "Dark" : "Light"}'s side at the top`,
  });
  // the grid of Pearls' lines, the Wall and the Throne
  for (let i = 0; i < 8; i++) {
    svg.append(s("line", { class: "grid", x1: px(i), y1: py(1), x2: px(i), y2: py(8) }));
    svg.append(s("line", { class: "grid", x1: px(0), y1: py(i + 1), x2: px(7), y2: py(i + 1) }));
    svg.append(s("text", { class: "coord", x: px(i), y: size - 4, "text-anchor": "middle" }, FILES[i]));
    svg.append(s("text", { class: "coord", x: 9, y: py(i + 1) + 4, "text-anchor": "middle" }, String(i + 1)));
  }
  for (let f = 0; f < 7; f++) {
    for (let r = 1; r <= 7; r++) {
      const name = `${String.fromCharCode(65 + f)}${r}`;
      const [x, y] = stoneXY(name);
      const inside = f >= 1 && f <= 5 && r >= 2 && r <= 6;
      svg.append(s("rect", {
        class: `stone${inside ? " inside" : ""}${name === view.throne || name === "D4" ? " throne" : ""}${lastSquares.has(name) ? " last" : ""}`,
        x: x - G * 0.36, y: y - G * 0.36, width: G * 0.72, height: G * 0.72, rx: 5,
      }));
    }
  }
  const [wx1, wy1] = pearlXY("b2");
  const [wx2, wy2] = pearlXY("g7");
  svg.append(s("rect", { class: "wall", x: Math.min(wx1, wx2), y: Math.min(wy1, wy2), width: Math.abs(wx2 - wx1), height: Math.abs(wy2 - wy1) }));
  for (let f = 0; f < 8; f++) {
    for (let r = 1; r <= 8; r++) {
      const name = `${FILES[f]}${r}`;
      const inside = f >= 2 && f <= 5 && r >= 3 && r <= 6;
      svg.append(s("circle", { class: `pearl${inside ? " inside" : ""}${lastSquares.has(name) ? " last" : ""}`, cx: px(f), cy: py(r), r: 5 }));
    }
  }
  // pieces
  for (const [name, piece] of pieces) {
    const stone = isStone(name);
    const [x, y] = stone ? stoneXY(name) : pearlXY(name);
    const letter = LETTER[TYPES[piece.type] ?? ""] ?? "?";
    const cls = `piece side${piece.seat}${piece.type === PieceType.XING ? " xing" : ""}${lastSquares.has(name) ? " last" : ""}`;
    const g = s("g", { class: cls });
    if (stone) g.append(s("rect", { x: x - 15, y: y - 15, width: 30, height: 30, rx: 6 }));
    else g.append(s("circle", { cx: x, cy: y, r: 16 }));
    g.append(s("text", { x, y: y + 5, "text-anchor": "middle" }, letter));
    svg.append(g);
  }
  // targets: the next parts of legal moves, then the part picked (to confirm a flip alone)
  const targetAt = (name: string, chosen: boolean) => {
    const stone = isStone(name);
    const [x, y] = stone ? stoneXY(name) : pearlXY(name);
    const piece = pieces.get(name);
    const what = piece ? `${pieceWords(piece)} on ${stone ? "Stone" : "Pearl"} ${name}` : `${stone ? "Stone" : "Pearl"} ${name}`;
    const label = chosen ? `${what}: picked${complete ? ", press again to end the move here" : ""}` : what;
    const attrs = {
      class: `target${chosen ? " chosen" : ""}`, tabindex: 0, role: "button", "data-target": name, "aria-label": label,
      "aria-pressed": chosen ? "true" : "false",
    };
    const el = stone
      ? s("rect", { ...attrs, x: x - G / 2 + 3, y: y - G / 2 + 3, width: G - 6, height: G - 6, rx: 8 })
      : s("circle", { ...attrs, cx: x, cy: y, r: 19 });
    el.addEventListener("click", () => click(name));
    el.addEventListener("keydown", (e) => {
      const key = (e as KeyboardEvent).key;
      if (key === "Enter" || key === " ") { e.preventDefault(); click(name); }
    });
    return el;
  };
  const chosenSquares = picked.filter((t) => isPearl(t) || isStone(t));
  for (const name of chosenSquares) if (!next.has(name)) svg.append(targetAt(name, true));
  for (const name of [...next].filter((t) => isPearl(t) || isStone(t)).sort()) svg.append(targetAt(name, false));
  ctx.root.append(svg);
  // pieces in hand (phase 1: pick one to place), pass, and ending a move after its flip
  const hand = h("div", { class: "hand" });
  for (const force of view.forces) {
    const c = force.inHand;
    if (!c || c.ma + c.dao + c.xing === 0) continue;
    hand.append(h("span", { class: `chip zside${force.seat}` }, `${ctx.names(force.seat)} in hand: ${c.ma} Ma, ${c.dao} Dao, ${c.xing} Xing`));
  }
  ctx.root.append(hand);
  const controls = h("div", { class: "move-controls", role: "group", "aria-label": "Move" });
  for (const token of [...next].filter((t) => t.endsWith("@"))) {
    const type = { M: "Ma", D: "Dao", X: "Xing" }[token[0]] ?? token;
    const chosen = picked[0] === token;
    controls.append(h("button", {
      type: "button", class: `hand-piece${chosen ? " chosen" : ""}`, "data-target": token, "aria-pressed": chosen ? "true" : "false",
      "aria-label": `Place a ${type} from your hand`, onclick: () => click(token),
    }, `Place a ${type}`));
  }
  if (picked[0]?.endsWith("@")) {
    const type = { M: "Ma", D: "Dao", X: "Xing" }[picked[0][0]];
    controls.append(h("span", { class: "hint" }, `Now click an empty Pearl outside the Wall for your ${type}.`));
  }
  if (next.has("pass")) controls.append(h("button", { type: "button", "data-target": "pass", "aria-label": "Pass: you have no other move", onclick: () => click("pass") }, "Pass"));
  if (complete && next.size) {
    const end = picked[picked.length - 1];
    controls.append(h("button", {
      type: "button", class: "secondary", "data-target": `=${complete}`, "aria-label": `End the move on ${end} (${complete})`,
      onclick: () => { ctx.state.picked = []; ctx.play(complete); },
    }, `Stop on ${end}`));
  }
  if (picked.length) controls.append(h("button", { type: "button", class: "secondary", "aria-label": "Cancel the move", onclick: () => { ctx.state.picked = []; ctx.redraw(); } }, "Cancel"));
  ctx.root.append(controls);
  ctx.root.append(h("p", { class: "muted phase" }, `Phase ${view.phase}${view.phase === 1 ? ": placing the pieces" : ": the race to the Throne"} · ply ${view.ply}/${view.maxPlies}`));
}

function describeEvent(event: unknown, names: (seat: number) => string): string | undefined {
  const e = event as Event;
  switch (e.kind.case) {
    case "placed": return `${names(e.kind.value.seat)} placed a ${TYPES[e.kind.value.piece?.type ?? 0] ?? "piece"} on ${e.kind.value.toSquare}`;
    case "phaseStarted": return `phase ${e.kind.value.phase} begins`;
    case "flipped": return `${names(e.kind.value.seat)} flipped a ${TYPES[e.kind.value.piece?.type ?? 0] ?? "piece"} from ${e.kind.value.fromSquare} to ${e.kind.value.toSquare}`;
    case "moved": {
      const m = e.kind.value;
      const took = m.captured ? `, capturing a ${pieceWords(m.captured)}` : "";
      return `${names(m.seat)} moved a ${TYPES[m.piece?.type ?? 0] ?? "piece"} from ${m.fromSquare} to ${m.toSquare}${took}`;
    }
    case "passed": return `${names(e.kind.value.seat)} passed`;
    case "won": {
      const why = e.kind.value.reason === WinReason.THRONE ? "with the Xing on the Throne" : e.kind.value.reason === WinReason.XING_CAPTURED ? "by capturing the enemy Xing" : "by resignation";
      return `${names(e.kind.value.seat)} won ${why}`;
    }
    case "draw": return e.kind.value.reason === DrawReason.TWO_PASSES ? "a draw: two passes in a row" : "a draw: the longest game allowed was played";
    case "resigned": return `${names(e.kind.value.seat)} resigned`;
    default: return undefined;
  }
}

function describeResult(status: import("../gen/tabletop/common/v1/common_pb").GameStatus): string {
  const detail = status.result?.detail as Record<string, unknown> | undefined;
  const reason = typeof detail?.reason === "string" ? detail.reason : "";
  if (reason === "throne") return "The Xing reached the Throne.";
  if (reason === "xing_captured") return "The Xing was captured.";
  if (reason === "resignation") return "By resignation.";
  if (reason) return `(${reason.replace(/_/g, " ")})`;
  return "";
}

export const zoxso: GameModule = {
  id: "zoxso",
  title: "ZoxSo",
  blurb: "Place ten pieces on the Pearls, then race a Xing to the Throne across Pearls and Stones.",
  service: ZoxsoService,
  seats: { min: 2, max: 2, default: 2 },
  seatName: (seat) => SIDE[seat],
  render,
  describeEvent,
  describeResult,
};
