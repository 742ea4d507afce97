// Solace's moves (docs/rules/solace.md, L6) as two clicks, the space a piece or tower leaves, then
// the space it goes to; and the board in words. Pure functions, no DOM: they read the view's
// spaces structurally (name, row, state, nest, tower), as the generated messages have them.

/** Colour and SpaceState as the API numbers them (tabletop.solace.v1). */
export const BLACK = 1;
export const CLEAR = 2;
export const NEST = 1;
export const OPEN = 2;
export const PROMOTED = 3;

export interface PieceLike {
  colour: number;
  size: number;
  hidden: boolean;
}

export interface SpaceLike {
  name: string;
  row: number;
  state: number;
  nest: readonly PieceLike[];
  tower: readonly PieceLike[];
}

const MOVE = /^([BC][1-5])-([BC][1-5])$/;

/** "B2-B4" as ["B2", "B4"]; undefined for "stop" and anything else. */
export function parseMove(move: string): [string, string] | undefined {
  const found = MOVE.exec(move);
  return found ? [found[1], found[2]] : undefined;
}

/** The clicks of a move: ["B2", "B4"]; ["stop"]. */
export function solaceSteps(move: string): string[] {
  return parseMove(move) ?? [move];
}

/** Spaces some legal move starts from, in space order. */
export function sources(legal: readonly string[]): string[] {
  const out: string[] = [];
  for (const move of legal) {
    const parsed = parseMove(move);
    if (parsed && !out.includes(parsed[0])) out.push(parsed[0]);
  }
  return out;
}

/** Where a legal move from `from` may go. */
export function targets(legal: readonly string[], from: string): string[] {
  const out: string[] = [];
  for (const move of legal) {
    const parsed = parseMove(move);
    if (parsed && parsed[0] === from && !out.includes(parsed[1])) out.push(parsed[1]);
  }
  return out;
}

/** What a move from `from` to `to` is in this position: "foundation", "build" or "promotion". */
export function moveKind(spaces: readonly SpaceLike[], from: string, to: string): "foundation" | "build" | "promotion" | "" {
  const source = spaces.find((sp) => sp.name === from);
  const target = spaces.find((sp) => sp.name === to);
  if (!source || !target) return "";
  if (target.state === OPEN) return "promotion";
  if (target.tower.length) return "build";
  if (source.nest.length === 3 && source.tower.length === 0) return "foundation";
  return "build";
}

export function colourWord(colour: number): string {
  return colour === BLACK ? "black" : colour === CLEAR ? "clear" : "unseen";
}

/** A piece in words: "black 3"; "a hidden 2" (its colour is not known: L4). */
export function pieceWords(piece: PieceLike): string {
  return piece.hidden ? `a hidden ${piece.size}` : `${colourWord(piece.colour)} ${piece.size}`;
}

/** The pieces one sees of a nest, outer to inner: everything up to the first hidden piece. */
export function visibleNest(nest: readonly PieceLike[]): PieceLike[] {
  const out: PieceLike[] = [];
  for (const piece of nest) {
    if (piece.hidden) break;
    out.push(piece);
  }
  return out;
}

/** A space in words: "B2: nest of black 3, sealed (2 pieces unseen inside); tower black 3 2". */
export function spaceWords(space: SpaceLike): string {
  if (space.state === OPEN) return `${space.name}: open`;
  const tower = space.tower.map((p) => p.size).join("-");
  const towerColour = space.tower.length ? colourWord(space.tower[0].colour) : "";
  if (space.state === PROMOTED) return `${space.name}: promoted ${towerColour} tower ${tower}`;
  const seen = visibleNest(space.nest);
  const unseen = space.nest.length - seen.length;
  let text = `${space.name}: nest of ${seen.map(pieceWords).join(" over ") || "nothing"}`;
  if (unseen) text += `, sealed (${unseen === 1 ? "1 piece" : `${unseen} pieces`} unseen inside)`;
  if (space.tower.length) text += `; ${towerColour} tower ${tower} on it${space.tower.length === 3 ? " (full)" : ""}`;
  return text;
}
