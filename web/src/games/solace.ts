// Solace: the black row B1..B5 over the clear row C1..C5, each space its nest of nested pyramids
// (seen from the side, the inner ones through clear pieces) with its tower above, or open, or a
// promoted tower. A black piece is drawn sealed: nothing inside it is drawn, as the API sends
// nothing of it (L4). Click the space a piece or tower leaves, then the space it goes to.
import { SolaceService, type Event, type View } from "../gen/tabletop/solace/v1/solace_pb";
import type { GameStatus } from "../gen/tabletop/common/v1/common_pb";
import { h, s, svgButton } from "../dom";
import {
  BLACK, OPEN, PROMOTED, moveKind, parseMove, pieceWords, sources, spaceWords, targets, visibleNest,
  type PieceLike, type SpaceLike,
} from "./solace-moves";
import type { BoardContext, GameModule } from "./types";

const W = 360;
const FONT = "DejaVu Sans, Verdana, Arial, sans-serif";
const COL_W = 70;
const COL_GAP = 2.5;
const SPACE_H = 168;
const ROW_LABEL = 18;
/** Base width and height of a pyramid of size 1, 2, 3. */
const DIM: Record<number, [number, number]> = { 1: [24, 22], 2: [39, 35], 3: [56, 50] };

interface SolaceState {
  from?: string;
  confirmStop?: boolean;
  focus?: string;
}

function mine(ctx: BoardContext): SolaceState {
  return ctx.state as SolaceState;
}

/** One pyramid seen from the side, its base centred on (cx, base). Black is opaque; clear shows
 * what is drawn under it through a light tint. */
function pyramid(piece: PieceLike, cx: number, base: number): SVGElement {
  const [w, ht] = DIM[piece.size] ?? DIM[1];
  const g = s("g", { "aria-hidden": "true" });
  const left = cx - w / 2;
  const right = cx + w / 2;
  const apexY = base - ht;
  const body = `M${left},${base} L${cx},${apexY} L${right},${base} Z`;
  if (piece.colour === BLACK) {
    g.append(s("path", { d: body, fill: "#1c1c24", stroke: "#000000", "stroke-width": 1.2, "stroke-linejoin": "round" }));
    // a lit facet, so that nested black pieces read as solid objects
    g.append(s("path", { d: `M${cx},${apexY} L${cx + w * 0.12},${base} L${right},${base} Z`, fill: "#3a3a4a" }));
  } else {
    g.append(s("path", { d: body, fill: "#9fe3f5", "fill-opacity": 0.28, stroke: "#1f8fb3", "stroke-width": 1.6, "stroke-linejoin": "round" }));
    g.append(s("path", { d: `M${cx},${apexY + 2} L${cx + w * 0.12},${base - 1}`, stroke: "#ffffff", "stroke-width": 1.2, "stroke-opacity": 0.8 }));
  }
  return g;
}

/** A small padlock: this black piece is sealed, nothing inside it is known. */
function seal(cx: number, cy: number): SVGElement {
  const g = s("g", { "aria-hidden": "true" });
  g.append(s("path", { d: `M${cx - 3.2},${cy - 1} v-3 a3.2,3.2 0 0 1 6.4,0 v3`, fill: "none", stroke: "#c9c9d6", "stroke-width": 1.4 }));
  g.append(s("rect", { x: cx - 4.8, y: cy - 1.5, width: 9.6, height: 7, rx: 1.2, fill: "#c9c9d6" }));
  return g;
}

/** A nest: its pieces drawn outer first, each inner one inside the last; nothing of a hidden
 * piece is drawn (a black piece is drawn whole and sealed). */
function nestShape(nest: readonly PieceLike[], cx: number, base: number): SVGElement {
  const g = s("g", {});
  const seen = visibleNest(nest);
  for (const piece of seen) g.append(pyramid(piece, cx, base - 1));
  if (seen.length < nest.length && seen.length) {
    const sealer = seen[seen.length - 1];
    const [, ht] = DIM[sealer.size] ?? DIM[1];
    g.append(seal(cx, base - ht * 0.34));
  }
  return g;
}

/** A tower: bottom (the 3) first, each piece standing on the one below. */
function towerShape(tower: readonly PieceLike[], cx: number, base: number): SVGElement {
  const g = s("g", {});
  let y = base;
  for (const piece of tower) {
    g.append(pyramid(piece, cx, y));
    const [, ht] = DIM[piece.size] ?? DIM[1];
    y -= ht * 0.5;
  }
  return g;
}


function render(ctx: BoardContext): void {
  const view = ctx.view as View;
  const st = mine(ctx);
  const legal = ctx.busy ? [] : ctx.legal;
  const from = st.from && sources(legal).includes(st.from) ? st.from : undefined;
  if (!from) st.from = undefined;
  const starts = new Set(sources(legal));
  const ends = new Set(from ? targets(legal, from) : []);
  const spaces = view.spaces as unknown as SpaceLike[];
  const last = ctx.lastMove ? parseMove(ctx.lastMove.move) : undefined;

  const click = (name: string) => {
    if (ctx.busy) return;
    if (from && ends.has(name)) {
      st.from = undefined;
      st.focus = name;
      ctx.play(`${from}-${name}`);
      return;
    }
    st.from = from === name ? undefined : starts.has(name) ? name : undefined;
    st.focus = name;
    ctx.redraw();
  };

  const wrap = h("div", { class: "solace-board" });
  wrap.style.maxWidth = "520px"; // the board's width (.board), words and buttons under it
  wrap.style.margin = "0 auto";
  const rowH = ROW_LABEL + SPACE_H;
  const height = 2 * rowH + 10;
  const svg = s("svg", {
    class: "board solace", viewBox: `0 0 ${W} ${height}`, width: "100%", role: "group", "font-family": FONT,
    "aria-label": "Solace: the black row B1 to B5 and the clear row C1 to C5",
  });
  const rows: Array<[number, string]> = [[BLACK, "Black row: black towers are promoted here"], [2, "Clear row: clear towers are promoted here"]];
  rows.forEach(([row, title], r) => {
    const top = r * (rowH + 10);
    svg.append(s("rect", { x: 0, y: top, width: W, height: rowH, rx: 12, fill: row === BLACK ? "#dcdde3" : "#e3f3f8" }));
    svg.append(s("text", { x: 8, y: top + 13, "font-size": 11, "font-weight": "bold", fill: "#333" }, title));
    const inRow = spaces.filter((sp) => sp.row === row);
    inRow.forEach((space, i) => {
      const x = i * (COL_W + COL_GAP);
      const y = top + ROW_LABEL;
      const cx = x + COL_W / 2;
      const nestBase = y + SPACE_H - 22;
      const towerBase = y + SPACE_H - 76;
      const isFrom = from === space.name;
      const isEnd = ends.has(space.name);
      const isStart = starts.has(space.name) && !isFrom && !isEnd;
      const wasLast = last && (last[0] === space.name || last[1] === space.name);
      const g = s("g", {
        "data-space": space.name,
        "data-role": isFrom ? "picked" : isEnd ? "target" : isStart ? "source" : wasLast ? "last" : undefined,
      });
      g.append(s("rect", {
        x: x + 1, y: y + 1, width: COL_W - 2, height: SPACE_H - 4, rx: 9,
        fill: space.state === PROMOTED ? "#fff6d8" : "#ffffff", "fill-opacity": 0.75,
        stroke: isFrom ? "#2f6fd6" : isEnd ? "#2e9e4f" : isStart ? "#e0a100" : "#b7b9c2",
        "stroke-width": isFrom || isEnd ? 3.5 : isStart ? (from ? 1.5 : 2.5) : 1,
        "stroke-dasharray": isEnd ? "6 3" : "",
      }));
      if (space.state === OPEN) {
        g.append(s("path", {
          d: `M${cx - 28},${nestBase} L${cx},${nestBase - 50} L${cx + 28},${nestBase} Z`, fill: "none",
          stroke: "#9a9caa", "stroke-width": 1.2, "stroke-dasharray": "4 3",
        }));
        g.append(s("text", { x: cx, y: nestBase - 12, "font-size": 10, fill: "#777", "text-anchor": "middle" }, "open"));
      } else if (space.state === PROMOTED) {
        g.append(s("rect", { x: cx - 31, y: nestBase, width: 62, height: 5, rx: 2, fill: "#d4a017" }));
        g.append(towerShape(space.tower, cx, nestBase));
        g.append(s("text", { x: cx, y: y + 20, "font-size": 14, fill: "#c48a00", "text-anchor": "middle" }, "★"));
      } else {
        // the nest below, its tower above on a thin stand
        if (space.tower.length) {
          g.append(s("rect", { x: cx - 30, y: towerBase, width: 60, height: 3, rx: 1.5, fill: "#9a9caa" }));
          g.append(towerShape(space.tower, cx, towerBase));
          if (space.tower.length === 3) {
            g.append(s("text", { x: cx, y: y + 20, "font-size": 9, fill: "#2e9e4f", "text-anchor": "middle", "font-weight": "bold" }, "full"));
          }
        }
        g.append(nestShape(space.nest, cx, nestBase));
      }
      g.append(s("text", { x: cx, y: y + SPACE_H - 8, "font-size": 11, "font-weight": "bold", fill: "#333", "text-anchor": "middle" }, space.name));
      if (wasLast && last) {
        const arrived = last[1] === space.name;
        g.append(s("circle", { cx: x + 10, cy: y + 12, r: 4, fill: arrived ? "#2f6fd6" : "none", stroke: "#2f6fd6", "stroke-width": 1.5 }));
      }
      let label = spaceWords(space);
      if (isFrom) label += ". Picked: choose where it goes, or press again to put it back";
      else if (isEnd && from) label += `. Move ${from}-${space.name} here (${moveKind(spaces, from, space.name)})`;
      else if (isStart) label += from ? ". A move can start here instead" : ". A move can start here";
      if (wasLast && last) label += last[1] === space.name ? ". The last move arrived here" : ". The last move left here";
      if (isFrom || isEnd || isStart) {
        svgButton(g, label, space.name, () => click(space.name),
          s("rect", { x: x + 4, y: y + 4, width: COL_W - 8, height: SPACE_H - 10, rx: 7, fill: "none", stroke: "#111", "stroke-width": 2, "stroke-dasharray": "4 2" }),
          () => { mine(ctx).focus = space.name; });
        if (isFrom) g.setAttribute("aria-pressed", "true");
      } else {
        g.setAttribute("role", "img");
        g.setAttribute("aria-label", label);
      }
      svg.append(g);
    });
  });
  wrap.append(svg);

  const status = h("p", { class: "solace-status", role: "status" });
  if (view.finished) {
    status.append(resultWords(ctx.status, view));
  } else if (ctx.seat === undefined) {
    status.append(`Promoted towers: ${view.score}. Moves played: ${view.movesPlayed}.`);
  } else if (from) {
    status.append(`${from} picked: choose a space marked green (or ${from} again to put it back).`);
  } else if (starts.size) {
    status.append(`Promoted towers: ${view.score}. Pick a space marked yellow to move from.`);
  } else {
    status.append(`Promoted towers: ${view.score}.`);
  }
  wrap.append(status);
  if (ctx.lastMove && last) {
    const kind = describeLast(ctx.events);
    wrap.append(h("p", { class: "last-move" }, `Last move: ${last[0]}-${last[1]}${kind ? ` (${kind})` : ""}`));
  }

  if (!view.finished && ctx.seat !== undefined && legal.includes("stop")) {
    const actions = h("div", { class: "solace-actions row", role: "group", "aria-label": "Solace actions" });
    const towers = `${view.score} promoted tower${view.score === 1 ? "" : "s"}`;
    if (st.confirmStop) {
      actions.append(h("span", {}, `End the game now with ${towers}?`));
      actions.append(h("button", {
        type: "button", class: "primary", "data-target": "stop-yes", disabled: ctx.busy,
        onclick: () => { st.confirmStop = false; ctx.play("stop"); },
      }, "Yes, stop"));
      actions.append(h("button", {
        type: "button", class: "secondary", "data-target": "stop-no", onclick: () => { st.confirmStop = false; st.focus = "stop"; ctx.redraw(); },
      }, "Keep playing"));
      st.focus = "stop-yes";
    } else {
      actions.append(h("button", {
        type: "button", class: "secondary", "data-target": "stop", disabled: ctx.busy,
        onclick: () => { st.confirmStop = true; ctx.redraw(); },
      }, `Stop with ${towers}`));
    }
    wrap.append(actions);
  }
  ctx.root.append(wrap);
  if (st.focus) {
    const again = wrap.querySelector(`[data-target="${CSS.escape(st.focus)}"]`) as HTMLElement | SVGElement | null;
    const active = document.activeElement;
    if (again && (!active || active === document.body)) again.focus();
  }
}

function describeLast(events: unknown[]): string {
  const parts: string[] = [];
  for (const e of events as Event[]) {
    if (e?.kind?.case === "moved") parts.push(kindWord(e.kind.value.kind));
    if (e?.kind?.case === "revealed") parts.push(`shows ${pieceWords(e.kind.value.piece as PieceLike)}`);
  }
  return parts.filter(Boolean).join(", ");
}

function kindWord(kind: number): string {
  return kind === 1 ? "foundation" : kind === 2 ? "build" : kind === 3 ? "promotion" : "";
}

function describeEvent(event: unknown, names: (seat: number) => string): string | undefined {
  const e = event as Event;
  const who = names(0);
  switch (e.kind.case) {
    case "moved": {
      const m = e.kind.value;
      const piece = m.piece ? pieceWords(m.piece as PieceLike) : "the tower";
      if (m.kind === 1) return `${who} lifted ${piece} from ${m.fromSpace} onto ${m.toSpace}: a new tower`;
      if (m.kind === 2) return `${who} built ${piece} from ${m.fromSpace} onto the tower on ${m.toSpace}`;
      return `${who} promoted the tower from ${m.fromSpace} to ${m.toSpace}: ${m.score} promoted tower${m.score === 1 ? "" : "s"}`;
    }
    case "revealed":
      return `${e.kind.value.space} now shows ${pieceWords(e.kind.value.piece as PieceLike)}`;
    case "stopped":
      return `${who} stopped with ${e.kind.value.score} promoted tower${e.kind.value.score === 1 ? "" : "s"}`;
    default:
      return undefined;
  }
}

/** "Game over: no move left. 7 promoted towers (the best this deal allowed: 8)." */
function resultWords(status: GameStatus, view: View | undefined, head = "Game over: "): string {
  const detail = status.result?.detail ?? {};
  const score = typeof detail.score === "number" ? detail.score : view?.score ?? status.result?.scores?.[0] ?? 0;
  const towers = `${score} promoted tower${score === 1 ? "" : "s"}`;
  const stopped = detail.reason === "stopped" || view?.stopped;
  let text = `${head}${stopped ? `you stopped with ${towers}` : `no move left, ${towers}`}`;
  const best = typeof detail.best_score === "number" ? detail.best_score : view?.bestScore;
  if (best !== undefined) text += ` (the best this deal allowed: ${best})`;
  return `${text}.`;
}

export const solace: GameModule = {
  id: "solace",
  title: "Solace",
  blurb: "A patience for one: turn ten nests of pyramids into single-colour towers.",
  service: SolaceService,
  seats: { min: 1, max: 1, default: 1 },
  render,
  describeEvent,
  describeResult: (status, view) => {
    const text = resultWords(status, view as View | undefined, "");
    return text.charAt(0).toUpperCase() + text.slice(1);
  },
};
