// Solo's moves (docs/rules/solo.md, Notation) as the clicks that make them: the card first, then
// the choices its notation needs, one kind at a time: the colour of a Wild (`:b`), the seat a
// Swap names (`@2`), and whether the play calls Solo (`!`). Pure functions, no DOM.
import { narrow } from "../moves";

export interface SoloPlay {
  move: string;
  card: string;
  colour: string;
  target: number | undefined;
  call: boolean;
}

const PLAY = /^play ([rgby](?:[1-9]|[SRDX])|W4|WX|W)(?::([rgby]))?(?:@(\d+))?(!)?$/;

/** A `play ...` move's parts, or undefined for draw, pass and anything else. */
export function parsePlay(move: string): SoloPlay | undefined {
  const found = PLAY.exec(move);
  if (!found) return undefined;
  return {
    move,
    card: found[1],
    colour: found[2] ?? "",
    target: found[3] === undefined ? undefined : Number(found[3]),
    call: found[4] === "!",
  };
}

/** The clicks that make a move: ["card:r7", "call:no"], ["card:W4", "colour:b", "call:yes"],
 * ["card:gX", "target:2", "call:no"]; ["draw"], ["pass"]. */
export function steps(move: string): string[] {
  const play = parsePlay(move);
  if (!play) return [move];
  const out = [`card:${play.card}`];
  if (play.colour) out.push(`colour:${play.colour}`);
  if (play.target !== undefined) out.push(`target:${play.target}`);
  out.push(play.call ? "call:yes" : "call:no");
  return out;
}

/** The cards that some legal move plays. */
export function playableCards(legal: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const move of legal) {
    const play = parsePlay(move);
    if (play) out.add(play.card);
  }
  return out;
}

export interface Advanced {
  /** The move the picks spell, once nothing is left to choose. */
  move?: string;
  /** The picks so far (choices with one option are taken at once). */
  picked: string[];
  /** The options of the next choice ("colour:r", "target:2", "call:yes"...), all of one kind. */
  choices: string[];
}

/** Follow the picks as far as they go alone: a choice with one option is no choice. */
export function advance(legal: readonly string[], picked: readonly string[]): Advanced {
  const chosen = [...picked];
  for (;;) {
    const { next, complete } = narrow(legal, steps, chosen);
    if (next.size === 0) return { move: complete, picked: chosen, choices: [] };
    if (next.size === 1 && complete === undefined) {
      chosen.push([...next][0]);
      continue;
    }
    return { picked: chosen, choices: [...next].sort(byChoice) };
  }
}

const CHOICE_ORDER = ["colour:r", "colour:g", "colour:b", "colour:y", "call:yes", "call:no"];

function byChoice(a: string, b: string): number {
  const ia = CHOICE_ORDER.indexOf(a);
  const ib = CHOICE_ORDER.indexOf(b);
  if (ia >= 0 || ib >= 0) return ia - ib;
  return Number(a.split(":")[1]) - Number(b.split(":")[1]);
}

/** The kind of a choice: "colour", "target" or "call". */
export function choiceKind(choice: string): string {
  return choice.split(":", 1)[0];
}

export function choiceValue(choice: string): string {
  return choice.slice(choice.indexOf(":") + 1);
}

/** The jump-ins among a seat's legal moves: its plays while another seat is to move (S11). */
export function jumpIns(legal: readonly string[], myTurn: boolean): string[] {
  if (myTurn) return [];
  return legal.filter((move) => parsePlay(move) !== undefined);
}
