// Solo: the table drawn in SVG. Other seats show only their card counts (S14: the view holds no
// other hand); the discard pile's top card with the colour in force, the draw pile, whose turn it
// is and which way play goes, the pending draw stack; your own hand as cards. Legal cards are
// raised and clickable; the choices a play's notation needs (a Wild's colour, a Swap's seat, the
// Solo call) come as buttons after the card; draw, keep and the jump-in are buttons.
import { create } from "@bufbuild/protobuf";
import { GameOptionsSchema } from "../gen/tabletop/lobby/v1/lobby_pb";
import { DrawReason, Mode, OptionsSchema, SoloService, type Event, type View } from "../gen/tabletop/solo/v1/solo_pb";
import type { GameStatus } from "../gen/tabletop/common/v1/common_pb";
import { createClient } from "@connectrpc/connect";
import { describeError, headers, transport } from "../api";
import { h, s, svgButton } from "../dom";
import { narrow } from "../moves";
import {
  COLOUR_EDGE, COLOUR_FILL, COLOUR_NAMES, cardCorner, cardName, cardSymbol, colourOf, isJoker, sortedHand,
} from "./solo-cards";
import { advance, choiceKind, choiceValue, jumpIns, parsePlay, playableCards, steps } from "./solo-moves";
import type { BoardContext, GameModule } from "./types";

const W = 360;
const FONT = "DejaVu Sans, Verdana, Arial, sans-serif";
const CARD_W = 40;
const CARD_H = 60;
const HAND_STEP = 44;
const PER_ROW = 8;

const soloClient = createClient(SoloService, transport);

interface SoloState {
  /** The version this seat passed on (PassJumpIn), and what the answer said. */
  passed?: bigint;
  passNote?: string;
  /** The card picked and the choices made so far (solo-moves steps). */
  picked?: string[];
  /** A control to focus once drawn (the first choice after a card is picked). */
  focus?: string;
  /** The last round's end in words, kept until the next one ends. */
  lastRound?: string;
}

function mine(ctx: BoardContext): SoloState {
  return ctx.state as SoloState;
}

// ---------------------------------------------------------------------------------------------
// Drawing cards

/** A card face: white border, the colour, a tilted white oval with the symbol, corner indices. */
export function cardFace(card: string, x: number, y: number, w: number, hgt: number): SVGElement {
  const colour = colourOf(card);
  const g = s("g", { "aria-hidden": "true" });
  g.append(s("rect", { x, y, width: w, height: hgt, rx: w * 0.14, fill: "#ffffff", stroke: "#3b3b46", "stroke-width": 1 }));
  const inset = Math.max(2, w * 0.07);
  g.append(s("rect", {
    x: x + inset, y: y + inset, width: w - 2 * inset, height: hgt - 2 * inset, rx: w * 0.1,
    fill: COLOUR_FILL[colour] ?? "#777", stroke: COLOUR_EDGE[colour] ?? "#333", "stroke-width": 0.6,
  }));
  const cx = x + w / 2;
  const cy = y + hgt / 2;
  if (isJoker(card)) {
    const r = w * 0.34;
    const quarters: Array<[string, number]> = [["r", 0], ["b", 90], ["y", 180], ["g", 270]];
    for (const [c, start] of quarters) {
      const a0 = ((start - 90) * Math.PI) / 180;
      const a1 = ((start) * Math.PI) / 180;
      g.append(s("path", {
        d: `M${cx},${cy} L${cx + r * Math.cos(a0)},${cy + r * Math.sin(a0)} A${r},${r} 0 0 1 ${cx + r * Math.cos(a1)},${cy + r * Math.sin(a1)} Z`,
        fill: COLOUR_FILL[c], transform: `rotate(-20 ${cx} ${cy})`,
      }));
    }
    g.append(s("text", {
      x: cx, y: cy + w * 0.13, "text-anchor": "middle", "font-family": FONT, "font-weight": "bold",
      "font-size": w * 0.36, fill: "#ffffff", stroke: "#111", "stroke-width": w * 0.02, "paint-order": "stroke",
    }, cardSymbol(card)));
  } else {
    g.append(s("ellipse", {
      cx, cy, rx: w * 0.33, ry: hgt * 0.36, fill: "#ffffff", transform: `rotate(24 ${cx} ${cy})`,
    }));
    const symbol = cardSymbol(card);
    g.append(s("text", {
      x: cx, y: cy + w * (symbol.length > 1 ? 0.13 : 0.17), "text-anchor": "middle", "font-family": FONT, "font-weight": "bold",
      "font-size": w * (symbol.length > 1 ? 0.38 : 0.48), fill: COLOUR_EDGE[colour] ?? "#333",
    }, symbol));
  }
  const corner = cardCorner(card);
  const fs = w * (corner.length > 1 ? 0.2 : 0.24);
  g.append(s("text", {
    x: x + inset + w * 0.05, y: y + inset + fs, "font-family": FONT, "font-weight": "bold", "font-size": fs, fill: "#ffffff",
  }, corner));
  g.append(s("text", {
    x: x + w - inset - w * 0.05, y: y + hgt - inset - fs * 0.3, "text-anchor": "end", "font-family": FONT, "font-weight": "bold",
    "font-size": fs, fill: "#ffffff", transform: `rotate(180 ${x + w - inset - w * 0.05 - fs * 0.3} ${y + hgt - inset - fs * 0.65})`,
  }, corner));
  return g;
}

/** A card's back: dark red with an oval and the game's name. */
export function cardBack(x: number, y: number, w: number, hgt: number): SVGElement {
  const g = s("g", { "aria-hidden": "true" });
  g.append(s("rect", { x, y, width: w, height: hgt, rx: w * 0.14, fill: "#ffffff", stroke: "#3b3b46", "stroke-width": 1 }));
  const inset = Math.max(2, w * 0.07);
  g.append(s("rect", { x: x + inset, y: y + inset, width: w - 2 * inset, height: hgt - 2 * inset, rx: w * 0.1, fill: "#2b2b38" }));
  const cx = x + w / 2;
  const cy = y + hgt / 2;
  g.append(s("ellipse", { cx, cy, rx: w * 0.33, ry: hgt * 0.36, fill: "#d83a34", transform: `rotate(24 ${cx} ${cy})` }));
  g.append(s("text", {
    x: cx, y: cy + w * 0.07, "text-anchor": "middle", "font-family": FONT, "font-weight": "bold", "font-size": w * 0.22,
    fill: "#f2bd1d", transform: `rotate(-24 ${cx} ${cy})`,
  }, "SOLO"));
  return g;
}

// ---------------------------------------------------------------------------------------------
// Controls


function button(label: string, key: string, ctx: BoardContext, act: () => void, opts: { primary?: boolean; aria?: string } = {}): HTMLButtonElement {
  const b = h("button", {
    type: "button", class: opts.primary ? "primary" : "secondary", "data-target": key, "aria-label": opts.aria,
    disabled: ctx.busy, onclick: act,
  }, label);
  return b;
}

// ---------------------------------------------------------------------------------------------
// Words

function seatWord(ctx: BoardContext, seat: number): string {
  return seat === ctx.seat ? "You" : ctx.names(seat);
}

function lastMoveWords(ctx: BoardContext): string {
  const last = ctx.lastMove;
  if (!last || !last.move) return "";
  const who = last.seat === undefined ? "" : seatWord(ctx, last.seat);
  const play = parsePlay(last.move);
  if (play) {
    let text = `${who} played ${cardName(play.card)}`;
    if (play.colour) text += ` and named ${COLOUR_NAMES[play.colour].toLowerCase()}`;
    if (play.target !== undefined) text += `, swapping hands with ${seatWord(ctx, play.target).replace(/^You$/, "you")}`;
    if (play.call) text += ", calling Solo!";
    return text;
  }
  switch (last.move) {
    case "draw":
      return `${who} drew`;
    case "pass":
      return `${who} kept the drawn card`;
    case "resign":
      return `${who} resigned`;
    case "timeout":
      return `${who} ran out of time`;
    default:
      return `${who} ${last.move}`.trim();
  }
}

// ---------------------------------------------------------------------------------------------
// The board

function render(ctx: BoardContext): void {
  const view = ctx.view as View;
  const st = mine(ctx);
  const me = ctx.seat;
  const myTurn = me !== undefined && view.toMove === me && !view.finished;
  // out of turn, the table's LegalMoves for this seat are its jump-ins (S11): only plays of the
  // top card's twin at the version shown
  const legal = ctx.busy ? [] : myTurn ? ctx.legal : ctx.legal.filter((m) => parsePlay(m)?.card === view.top);
  // A pick that no longer leads to a legal move (the game moved on) is dropped.
  let picked = st.picked ?? [];
  if (picked.length && narrow(legal, steps, picked).next.size === 0) picked = st.picked = [];
  const playable = playableCards(legal);
  const pickedCard = picked[0]?.startsWith("card:") ? picked[0].slice(5) : undefined;

  const choose = (step: string) => {
    if (ctx.busy) return;
    const base = step.startsWith("card:") ? [] : picked;
    const result = advance(legal, [...base, step]);
    if (result.move) {
      st.picked = [];
      ctx.play(result.move);
    } else {
      st.picked = result.picked;
      st.focus = `choice:${result.choices[0]}`;
      ctx.redraw();
    }
  };

  // data-turn: "me" while this seat is to move, "other", or "over" (for tests and styling)
  const wrap = h("div", { class: "solo-board", "data-turn": view.finished ? "over" : myTurn ? "me" : "other" });
  wrap.style.maxWidth = "520px"; // the board's width (.board), words and buttons under it
  wrap.style.margin = "0 auto";
  const n = view.players || view.handSizes.length;

  // --- seats
  const cols = n <= 4 ? n : n <= 6 ? 3 : n <= 8 ? 4 : 5;
  const gap = 6;
  const chipW = (W - gap * (cols - 1)) / cols;
  const chipH = 60;
  const seatRows = Math.ceil(n / cols);
  const tableY = seatRows * (chipH + gap) + 8;
  const tableH = 150;
  const handY = tableY + tableH + 12;
  const hand = sortedHand(view.hand);
  const handRows = me === undefined ? 0 : Math.ceil(hand.length / PER_ROW);
  const height = me === undefined ? handY : handY + 22 + (handRows ? handRows * (CARD_H + 10) + 4 : 24);

  const svg = s("svg", {
    class: "board solo", viewBox: `0 -8 ${W} ${height + 8}`, role: "group", width: "100%",
    "aria-label": "Solo table: the seats, the draw pile, the discard pile and your hand",
    "font-family": FONT,
  });
  svg.append(s("rect", { x: 0, y: tableY - 4, width: W, height: tableH + 8, rx: 14, fill: "#1f6b45", stroke: "#124a2f", "stroke-width": 2 }));

  const lastSeat = ctx.lastMove?.seat;
  for (let seat = 0; seat < n; seat++) {
    const col = seat % cols;
    const row = Math.floor(seat / cols);
    const x = col * (chipW + gap);
    const y = row * (chipH + gap);
    const toMove = view.toMove === seat && !view.finished;
    const isMe = seat === me;
    const g = s("g", {
      role: "img",
      "aria-label": `${seatWord(ctx, seat)}${isMe ? "" : ` (seat ${seat})`}: ${view.handSizes[seat] ?? 0} cards, ${view.points[seat] ?? 0} points` +
        `${view.soloCalled[seat] ? ", called Solo" : ""}${toMove ? ", to move" : ""}${view.winners.includes(seat) && view.finished ? ", winner" : ""}`,
      "data-seat": seat,
    });
    g.append(s("rect", {
      x: x + 1, y: y + 1, width: chipW - 2, height: chipH - 2, rx: 8,
      fill: isMe ? "#eef4ff" : "#f7f7f2", stroke: toMove ? "#e0a100" : "#b9b9b0", "stroke-width": toMove ? 3 : 1,
    }));
    const name = seatWord(ctx, seat);
    const called = view.soloCalled[seat];
    const maxChars = Math.max(4, Math.floor((chipW - 16 - (toMove ? 12 : 0)) / 6.6));
    const shown = name.length > maxChars ? `${name.slice(0, maxChars - 1)}…` : name;
    // drawn shapes, not font glyphs (a font without them shows a box)
    if (toMove) g.append(s("path", { d: `M${x + 8},${y + 7} L${x + 16},${y + 12} L${x + 8},${y + 17} Z`, fill: "#e0a100" }));
    g.append(s("text", { x: x + (toMove ? 20 : 8), y: y + 16, "font-size": 11.5, "font-weight": "bold", fill: "#222" }, shown));
    // a small card back with the count
    g.append(cardBack(x + 8, y + 21, 14, 21));
    g.append(s("text", { x: x + 26, y: y + 36, "font-size": 13, "font-weight": "bold", fill: "#222" }, `${view.handSizes[seat] ?? 0}`));
    g.append(s("text", { x: x + 8, y: y + 54, "font-size": 10.5, fill: "#555" }, `${view.points[seat] ?? 0} points`));
    if (called) {
      // a sticker on the chip's top edge
      g.append(s("rect", { x: x + chipW - 38, y: y - 5, width: 34, height: 14, rx: 7, fill: "#d83a34", stroke: "#fff", "stroke-width": 1 }));
      g.append(s("text", { x: x + chipW - 21, y: y + 5.5, "font-size": 9, "font-weight": "bold", fill: "#fff", "text-anchor": "middle" }, "SOLO!"));
    } else if (view.finished && view.winners.includes(seat)) {
      const cx = x + chipW - 14;
      const star = Array.from({ length: 10 }, (_, i) => {
        const r = i % 2 ? 2.8 : 7;
        const a = (Math.PI / 5) * i - Math.PI / 2;
        return `${(cx + r * Math.cos(a)).toFixed(1)},${(y + 12 + r * Math.sin(a)).toFixed(1)}`;
      }).join(" ");
      g.append(s("polygon", { points: star, fill: "#c48a00" }));
    }
    if (view.lateCallSeat === seat) {
      g.append(s("rect", { x: x + chipW - 44, y: y - 5, width: 40, height: 14, rx: 7, fill: "#fff3cd", stroke: "#b3261e", "stroke-width": 1 }));
      g.append(s("text", { x: x + chipW - 24, y: y + 5.5, "font-size": 8.5, "text-anchor": "middle", fill: "#b3261e" }, "no call!"));
    }
    if (lastSeat === seat && ctx.lastMove?.move) {
      g.append(s("circle", { cx: x + chipW - 6, cy: y + chipH - 6, r: 3.5, fill: "#2f6fd6" }));
    }
    svg.append(g);
  }

  // --- the table: draw pile, discard pile, colour, direction, stack
  const pileX = 22;
  const pileY = tableY + 22;
  const bigW = 64;
  const bigH = 96;
  const drawMoves = legal.filter((m) => m === "draw");
  const pileGroup = s("g", {});
  for (let i = 2; i >= 0; i--) {
    if (view.drawPileSize > i * 10 || i === 0) pileGroup.append(cardBack(pileX + i * 2.5, pileY - i * 2.5, bigW, bigH));
  }
  if (view.drawPileSize === 0) {
    pileGroup.append(s("rect", { x: pileX, y: pileY, width: bigW, height: bigH, rx: 9, fill: "#1f6b45", stroke: "#a9d8bd", "stroke-dasharray": "4 3" }));
  }
  const drawLabel = view.pendingDraw > 0 ? `Take ${view.pendingDraw} cards` : "Draw a card";
  if (drawMoves.length && myTurn) {
    pileGroup.append(s("rect", { x: pileX - 4, y: pileY - 9, width: bigW + 12, height: bigH + 12, rx: 11, fill: "none", stroke: "#ffe27a", "stroke-width": 3 }));
    svgButton(pileGroup, `Draw pile, ${view.drawPileSize} cards: ${drawLabel.toLowerCase()}`, "draw", () => choose("draw"),
      s("rect", { x: pileX - 7, y: pileY - 12, width: bigW + 18, height: bigH + 18, rx: 13, fill: "none", stroke: "#ffffff", "stroke-width": 2.5, "stroke-dasharray": "5 3" }));
  } else {
    pileGroup.setAttribute("role", "img");
    pileGroup.setAttribute("aria-label", `Draw pile: ${view.drawPileSize} cards`);
  }
  svg.append(pileGroup);
  svg.append(s("text", { x: pileX + bigW / 2 + 2, y: pileY + bigH + 20, "font-size": 11, fill: "#eaf6ee", "text-anchor": "middle" }, `Draw pile ${view.drawPileSize}`));
  if (ctx.lastMove?.move === "draw") {
    svg.append(s("text", { x: pileX + bigW / 2 + 2, y: tableY + 12, "font-size": 10, fill: "#ffe27a", "text-anchor": "middle" }, `${seatWord(ctx, ctx.lastMove.seat ?? 0)} drew`));
  }

  // discard: the cards under the top fanned out a little
  const discX = 128;
  const discY = pileY;
  const under = view.discard.slice(Math.max(0, view.discard.length - 3), -1);
  under.forEach((card, i) => {
    const angle = (i - under.length) * 9;
    const g = cardFace(card, discX, discY, bigW, bigH);
    g.setAttribute("transform", `rotate(${angle} ${discX + bigW / 2} ${discY + bigH})`);
    g.setAttribute("opacity", "0.9");
    svg.append(g);
  });
  const colourInForce = view.freePlay ? "" : view.colour;
  if (colourInForce) {
    svg.append(s("rect", {
      x: discX - 6, y: discY - 6, width: bigW + 12, height: bigH + 12, rx: 12, fill: "none",
      stroke: COLOUR_FILL[colourInForce], "stroke-width": 5,
    }));
  }
  if (view.top) {
    const top = cardFace(view.top, discX, discY, bigW, bigH);
    const topGroup = s("g", {
      role: "img",
      "aria-label": `Discard pile top: ${cardName(view.top)}${view.topPlayedBy !== undefined ? `, played by ${seatWord(ctx, view.topPlayedBy)}` : ""}`,
      "data-top": view.top,
    }, top);
    svg.append(topGroup);
  }
  const lastPlay = ctx.lastMove ? parsePlay(ctx.lastMove.move) : undefined;
  if (lastPlay && ctx.lastMove) {
    const who = seatWord(ctx, ctx.lastMove.seat ?? 0);
    svg.append(s("rect", { x: discX - 2, y: tableY + 2, width: bigW + 4, height: 13, rx: 6.5, fill: "#2f6fd6" }));
    svg.append(s("text", { x: discX + bigW / 2, y: tableY + 11.5, "font-size": 8.5, fill: "#fff", "text-anchor": "middle", "font-weight": "bold" },
      `last: ${who.length > 10 ? `${who.slice(0, 9)}…` : who}`));
  }
  const colourText = view.freePlay ? "Free play: any card" : colourInForce ? `Colour: ${COLOUR_NAMES[colourInForce]}` : "";
  svg.append(s("text", { x: discX + bigW / 2, y: discY + bigH + 20, "font-size": 11, fill: "#eaf6ee", "text-anchor": "middle", "font-weight": "bold" }, colourText));

  // direction and stack, on the right
  const infoX = 232;
  const dirCx = infoX + 48;
  const dirCy = tableY + 44;
  const up = view.direction >= 0;
  const r = 22;
  svg.append(s("path", {
    d: `M${dirCx - r},${dirCy} A${r},${r} 0 1 ${up ? 1 : 0} ${dirCx},${dirCy + (up ? r : -r)}`,
    fill: "none", stroke: "#eaf6ee", "stroke-width": 3.5, transform: up ? "" : `scale(1,-1) translate(0 ${-2 * dirCy})`,
  }));
  // arrow head at the end of the arc
  const headY = dirCy + r;
  svg.append(s("path", {
    d: `M${dirCx - 1},${headY - 7} L${dirCx + 9},${headY} L${dirCx - 1},${headY + 7} Z`, fill: "#eaf6ee",
    transform: up ? "" : `scale(1,-1) translate(0 ${-2 * dirCy})`,
  }));
  svg.append(s("text", { x: dirCx, y: dirCy + 4, "font-size": 10, fill: "#eaf6ee", "text-anchor": "middle" }, up ? "+1" : "−1"));
  svg.append(s("text", { x: dirCx, y: dirCy + r + 22, "font-size": 10.5, fill: "#eaf6ee", "text-anchor": "middle" }, up ? "to higher seats" : "to lower seats"));
  if (view.pendingDraw > 0) {
    svg.append(s("circle", { cx: dirCx, cy: tableY + 116, r: 19, fill: "#d83a34", stroke: "#fff", "stroke-width": 2 }));
    svg.append(s("text", { x: dirCx, y: tableY + 122, "font-size": 16, "font-weight": "bold", fill: "#fff", "text-anchor": "middle" }, `+${view.pendingDraw}`));
    svg.append(s("text", { x: dirCx, y: tableY + 146, "font-size": 10, fill: "#ffe27a", "text-anchor": "middle" }, "draw stack"));
  } else {
    svg.append(s("text", { x: dirCx, y: tableY + 120, "font-size": 10.5, fill: "#eaf6ee", "text-anchor": "middle" }, `Round ${view.round}${view.mode === Mode.ROUNDS ? ` of ${view.rounds}` : ""}`));
  }
  svg.setAttribute("aria-description",
    `Play goes ${up ? "to higher" : "to lower"} seats. ${view.pendingDraw ? `Draw stack: ${view.pendingDraw} cards. ` : ""}${colourText}.`);

  // --- my hand
  if (me !== undefined) {
    svg.append(s("text", { x: 2, y: handY + 12, "font-size": 12, "font-weight": "bold", fill: "#222" },
      `Your hand (${view.hand.length})${view.drawnCard ? ` · you drew ${cardName(view.drawnCard)}` : ""}`));
    const jumpCard = !myTurn && playable.size ? view.top : undefined;
    let drawnMarked = false;
    hand.forEach(({ card }, i) => {
      const row = Math.floor(i / PER_ROW);
      const inRow = Math.min(PER_ROW, hand.length - row * PER_ROW);
      const rowW = (inRow - 1) * HAND_STEP + CARD_W;
      const x = (W - rowW) / 2 + (i % PER_ROW) * HAND_STEP;
      const canPlay = playable.has(card);
      const chosen = pickedCard === card && picked.length > 0 && !drawnMarked;
      const isDrawn = !drawnMarked && view.drawnCard === card;
      if (isDrawn) drawnMarked = true;
      const y = handY + 22 + row * (CARD_H + 10) + (canPlay ? 0 : 6) - (chosen ? 4 : 0);
      const g = s("g", { "data-card": card });
      g.append(cardFace(card, x, y, CARD_W, CARD_H));
      if (legal.length && !canPlay) {
        g.append(s("rect", { x, y, width: CARD_W, height: CARD_H, rx: 5.6, fill: "#ffffff", opacity: 0.55, "aria-hidden": "true" }));
      }
      if (isDrawn) {
        g.append(s("rect", { x: x + 2, y: y + CARD_H - 12, width: CARD_W - 4, height: 11, rx: 5, fill: "#222" }));
        g.append(s("text", { x: x + CARD_W / 2, y: y + CARD_H - 3.5, "font-size": 8, fill: "#fff", "text-anchor": "middle" }, "drawn"));
      }
      if (canPlay) {
        g.append(s("rect", {
          x: x - 2, y: y - 2, width: CARD_W + 4, height: CARD_H + 4, rx: 7, fill: "none",
          stroke: chosen ? "#2f6fd6" : "#e0a100", "stroke-width": chosen ? 3.5 : 2.5,
        }));
        const how = jumpCard === card ? "jump in" : "playable";
        svgButton(g, `${cardName(card)}, ${how}${chosen ? ", picked" : ""}`, `card:${card}`, () => choose(`card:${card}`),
          s("rect", { x: x - 5, y: y - 5, width: CARD_W + 10, height: CARD_H + 10, rx: 9, fill: "none", stroke: "#111", "stroke-width": 2, "stroke-dasharray": "4 2" }));
        if (chosen) g.setAttribute("aria-pressed", "true");
      } else {
        g.setAttribute("role", "img");
        g.setAttribute("aria-label", `${cardName(card)}${legal.length ? ", not playable now" : ""}`);
      }
      svg.append(g);
    });
    if (!hand.length) {
      svg.append(s("text", { x: W / 2, y: handY + 36, "font-size": 12, fill: "#555", "text-anchor": "middle" }, "no cards left"));
    }
  }
  wrap.append(svg);

  // --- words and buttons under the board
  const status = h("p", { class: "solo-status", role: "status" });
  const jumps = jumpIns(legal, myTurn);
  if (view.finished) {
    status.append(gameOverWords(ctx.status, view, (seat) => seatWord(ctx, seat)));
  } else if (myTurn) {
    if (view.drawnWaiting && view.drawnCard) status.append(`You drew ${cardName(view.drawnCard)}: play it or keep it.`);
    else if (view.pendingDraw) status.append(`Your turn: pass the stack on with a highlighted card, or take ${view.pendingDraw} cards.`);
    else status.append("Your turn: play a highlighted card or draw.");
  } else if (view.toMove !== undefined) {
    status.append(`${seatWord(ctx, view.toMove)} to move.${jumps.length ? " You can jump in!" : ""}`);
  }
  wrap.append(status);
  const lastWords = lastMoveWords(ctx);
  if (lastWords) wrap.append(h("p", { class: "last-move" }, `Last move: ${lastWords}`));

  const actions = h("div", { class: "solo-actions row", role: "group", "aria-label": "Solo actions" });
  if (picked.length && pickedCard) {
    const { choices } = advance(legal, picked);
    const kind = choices.length ? choiceKind(choices[0]) : "";
    const question =
      kind === "colour" ? `${cardName(pickedCard)}: name a colour` :
      kind === "target" ? `${cardName(pickedCard)}: swap hands with whom?` :
      kind === "call" ? `${cardName(pickedCard)} leaves you one card` : "";
    const box = h("div", { class: "solo-choice row", role: "group", "aria-label": question }, h("p", { class: "solo-question" }, question));
    box.style.flexBasis = "100%";
    (box.firstChild as HTMLElement).style.flexBasis = "100%";
    (box.firstChild as HTMLElement).style.margin = "0";
    (box.firstChild as HTMLElement).style.fontWeight = "600";
    for (const choice of choices) {
      const value = choiceValue(choice);
      let label = value;
      let aria: string | undefined;
      if (kind === "colour") {
        label = COLOUR_NAMES[value];
        aria = `Name ${label.toLowerCase()}`;
      } else if (kind === "target") {
        const seat = Number(value);
        label = `${seatWord(ctx, seat)} (${view.handSizes[seat] ?? 0} cards)`;
        aria = `Swap hands with ${seatWord(ctx, seat)}`;
      } else if (kind === "call") {
        label = value === "yes" ? "Play and call Solo!" : "Play without the call";
      }
      const b = button(label, `choice:${choice}`, ctx, () => choose(choice), { primary: value === "yes", aria });
      if (kind === "colour") {
        b.classList.add(`colour-${value}`);
        b.style.setProperty("border-left", `14px solid ${COLOUR_FILL[value]}`);
      }
      box.append(b);
    }
    box.append(button("Cancel", "cancel", ctx, () => { st.picked = []; ctx.redraw(); }));
    actions.append(box);
  }
  if (myTurn && legal.includes("draw")) {
    actions.append(button(drawLabel, "draw", ctx, () => choose("draw")));
  }
  if (myTurn && legal.includes("pass")) {
    actions.append(button(`Keep ${cardName(view.drawnCard)}`, "pass", ctx, () => choose("pass"), { aria: `Keep the drawn card (${cardName(view.drawnCard)}) and end your turn` }));
  }
  if (me !== undefined && !view.finished && !myTurn) {
    // S11: one button, live only while this seat holds the top card's twin (LegalMoves says so).
    const card = jumps.length ? parsePlay(jumps[0])?.card ?? view.top : view.top;
    const jump = button(jumps.length ? `Jump in with ${cardName(card)}!` : "Jump in", "jump", ctx, () => choose(`card:${card}`), {
      primary: jumps.length > 0,
      aria: jumps.length ? `Jump in with ${cardName(card)}` : "Jump in (not possible now)",
    });
    jump.disabled = ctx.busy || jumps.length === 0;
    jump.classList.add("jump-in");
    actions.append(jump);
    // PassJumpIn: no jump-in from me at this version; once every person at the table has
    // passed, the bots go on without waiting out the window (docs/rules/solo.md)
    const version = ctx.status.version;
    const passed = st.passed === version;
    const pass = button(passed ? "Passed" : "Pass", "pass-jump-in", ctx, () => {
      st.passed = version;
      st.passNote = undefined;
      ctx.redraw();
      soloClient.passJumpIn({ gameId: ctx.status.gameId, version }, { headers: headers() }).then(
        (reply) => {
          if (st.passed !== version) return;
          st.passNote = reply.windowEnded ? "" : "Waiting for the others at the table to pass.";
          ctx.redraw();
        },
        (e) => {
          if (st.passed === version) st.passNote = describeError(e);
        },
      );
    }, { aria: passed ? "Passed: no jump-in from you at this move" : "Pass: no jump-in from you at this move (the bots go on once everyone has passed)" });
    pass.disabled = ctx.busy || passed;
    actions.append(pass);
    if (passed && st.passNote) actions.append(h("span", { class: "muted", role: "status" }, st.passNote));
  }
  wrap.append(actions);

  const ended = roundEnded(ctx.events);
  if (ended) st.lastRound = roundWords(ended, (seat) => seatWord(ctx, seat));
  if (st.lastRound) wrap.append(h("p", { class: "solo-round" }, st.lastRound));

  ctx.root.append(wrap);
  const focus = st.focus;
  st.focus = undefined;
  if (focus) {
    // after the table has put the focus back where it was: on to the first choice
    queueMicrotask(() => (wrap.querySelector(`[data-target="${CSS.escape(focus)}"]`) as HTMLElement | null)?.focus());
  }
}

// ---------------------------------------------------------------------------------------------
// Events and results in words

type RoundEnded = Extract<Event["kind"], { case: "roundEnded" }>["value"];

function roundEnded(events: unknown[]): RoundEnded | undefined {
  for (const e of events as Event[]) if (e?.kind?.case === "roundEnded") return e.kind.value;
  return undefined;
}

function roundWords(r: RoundEnded, names: (seat: number) => string): string {
  const who = names(r.winner);
  let text = `Round ${r.round} is over: ${who} ${who === "You" ? "have" : "has"} no cards left.`;
  const lost = r.hands
    .map((hand, seat) => ({ seat, cards: hand.cards, penalty: r.penalties[seat] ?? 0 }))
    .filter((x) => x.penalty > 0)
    .map((x) => `${names(x.seat)} −${x.penalty} (${x.cards.map(cardName).join(", ")})`);
  if (lost.length) text += ` Points lost: ${lost.join("; ")}.`;
  return text;
}

function describeEvent(event: unknown, names: (seat: number) => string): string | undefined {
  const e = event as Event;
  switch (e.kind.case) {
    case "roundStarted":
      return `Round ${e.kind.value.round} begins: ${names(e.kind.value.startSeat)} starts on ${cardName(e.kind.value.top)}`;
    case "dealt":
      return `${names(e.kind.value.seat)} got ${e.kind.value.cards.length} cards`;
    case "played": {
      const p = e.kind.value;
      let text = `${names(p.seat)} ${p.jumpIn ? "jumped in with" : "played"} ${cardName(p.card)}`;
      if (p.colour) text += ` and named ${COLOUR_NAMES[p.colour]?.toLowerCase() ?? p.colour}`;
      if (p.target !== undefined) text += `, swapping hands with ${names(p.target)}`;
      if (p.solo) text += ", calling Solo!";
      return text;
    }
    case "drew": {
      const d = e.kind.value;
      const cards = d.count === 1 ? "1 card" : `${d.count} cards`;
      if (d.reason === DrawReason.STACK) return `${names(d.seat)} took the draw stack: ${cards}`;
      if (d.reason === DrawReason.PENALTY) return `${names(d.seat)} drew ${cards} for a missed Solo call`;
      return `${names(d.seat)} drew ${cards}`;
    }
    case "drewCards": {
      const cards = e.kind.value.cards;
      return cards.length ? `Drawn: ${cards.map(cardName).join(", ")}` : undefined;
    }
    case "reshuffled":
      return `The discard pile was shuffled into a new draw pile of ${e.kind.value.count} cards`;
    case "kept":
      return `${names(e.kind.value.seat)} kept the drawn card`;
    case "solo":
      return `${names(e.kind.value.seat)} called Solo`;
    case "skipped":
      return `${names(e.kind.value.seat)} misses a turn`;
    case "reversed":
      return `Play now goes to ${e.kind.value.direction >= 0 ? "higher" : "lower"} seats`;
    case "swapped": {
      const sw = e.kind.value;
      return sw.seats.length === 2 ? `${names(sw.seats[0])} and ${names(sw.seats[1])} swapped hands` : "Hands were swapped";
    }
    case "handsPassed":
      return `Every hand moved on to the next ${e.kind.value.direction >= 0 ? "higher" : "lower"} seat`;
    case "roundEnded":
      return roundWords(e.kind.value, names);
    case "resigned":
      return `${names(e.kind.value.seat)} resigned`;
    default:
      return undefined;
  }
}

/** The final points, best first: "bob 212, you 180, ann 150" (and who resigned). */
function pointsWords(status: GameStatus, view: View | undefined, names: (seat: number) => string): string {
  const result = status.result;
  const points = view?.points ?? [];
  const scores = result?.scores ?? {};
  const seats = Object.keys(scores).length ? Object.keys(scores).map(Number) : points.map((_, i) => i);
  const scoreOf = (seat: number) => scores[seat] ?? points[seat] ?? 0;
  seats.sort((a, b) => scoreOf(b) - scoreOf(a) || a - b);
  let text = seats.map((seat) => `${names(seat)} ${scoreOf(seat)}`).join(", ");
  const resigned = result?.detail?.resigned;
  if (typeof resigned === "number") text += ` (${names(resigned)} resigned)`;
  return text;
}

/** "Game over: bob wins with 212 points. Final points: bob 212, you 180." */
function gameOverWords(status: GameStatus, view: View, names: (seat: number) => string): string {
  const winners = status.result?.winners.length ? status.result.winners : view.winners;
  if (!winners.length) return "Game over, without a winner.";
  const who = winners.map(names);
  return `Game over: ${who.join(" and ")} won. Final points: ${pointsWords(status, view, names)}.`;
}

export const solo: GameModule = {
  id: "solo",
  title: "Solo",
  blurb: "Race to empty your hand by matching the discard pile; jump in out of turn with an exact copy.",
  service: SoloService,
  movesOutOfTurn: true,
  seats: { min: 2, max: 10, default: 4 },
  options: (seats) => create(GameOptionsSchema, { game: { case: "solo", value: create(OptionsSchema, { players: seats }) } }),
  render,
  describeEvent,
  describeResult: (status, view, names) => `Final points: ${pointsWords(status, view as View | undefined, names)}.`,
};
