// Solo's cards in words and colours (docs/rules/solo.md, S1): a colour r g b y then 1..9, S, R,
// D or X; the black jokers W, W4 and WX. Pure functions, no DOM.

export const COLOURS = ["r", "g", "b", "y"] as const;
export type ColourCode = (typeof COLOURS)[number];

export const COLOUR_NAMES: Record<string, string> = { r: "Red", g: "Green", b: "Blue", y: "Yellow" };

/** The card's face colour on the board (and a darker shade for its edge and the text on it). */
export const COLOUR_FILL: Record<string, string> = {
  r: "#d83a34",
  g: "#2e9e4f",
  b: "#2f6fd6",
  y: "#f2bd1d",
  k: "#23232b",
};
export const COLOUR_EDGE: Record<string, string> = {
  r: "#8f1f1b",
  g: "#1c6532",
  b: "#1b4591",
  y: "#a67c06",
  k: "#000000",
};

const RANK_NAMES: Record<string, string> = { S: "Skip", R: "Reverse", D: "Draw Two", X: "Swap" };
const JOKER_NAMES: Record<string, string> = { W: "Wild", W4: "Wild Draw Four", WX: "Swap-in-turn" };

/** "r" for "r7", "k" (black) for a joker. */
export function colourOf(card: string): string {
  return card in JOKER_NAMES ? "k" : card.slice(0, 1);
}

/** "7", "S", "W4"... */
export function rankOf(card: string): string {
  return card in JOKER_NAMES ? card : card.slice(1);
}

export function isJoker(card: string): boolean {
  return card in JOKER_NAMES;
}

/** "Red 7", "Blue Skip", "Wild Draw Four". */
export function cardName(card: string): string {
  if (!card) return "no card";
  const joker = JOKER_NAMES[card];
  if (joker) return joker;
  const colour = COLOUR_NAMES[card[0]] ?? card[0];
  const rank = card.slice(1);
  return `${colour} ${RANK_NAMES[rank] ?? rank}`;
}

/** What is printed in the card's middle: "7", "⊘" (skip), "⇄" (reverse), "+2", "⇋" (swap),
 * "W", "+4", "⇋" on black. */
export function cardSymbol(card: string): string {
  switch (rankOf(card)) {
    case "S":
      return "⊘";
    case "R":
      return "⇄";
    case "D":
      return "+2";
    case "X":
    case "WX":
      return "⇋";
    case "W":
      return "W";
    case "W4":
      return "+4";
    default:
      return rankOf(card);
  }
}

/** The corner index: "7", "S", "R", "+2", "X", "W", "+4", "WX". */
export function cardCorner(card: string): string {
  const rank = rankOf(card);
  if (rank === "D") return "+2";
  if (rank === "W4") return "+4";
  return rank;
}

const COLOUR_ORDER = "rgbyk";
const RANK_ORDER = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "S", "R", "D", "X", "W", "W4", "WX"];

/** Hand order for display: by colour (red, green, blue, yellow, then jokers), then rank. */
export function compareCards(a: string, b: string): number {
  const byColour = COLOUR_ORDER.indexOf(colourOf(a)) - COLOUR_ORDER.indexOf(colourOf(b));
  if (byColour) return byColour;
  return RANK_ORDER.indexOf(rankOf(a)) - RANK_ORDER.indexOf(rankOf(b));
}

/** The hand in display order, each card with its index in the hand as the API gave it. */
export function sortedHand(hand: readonly string[]): { card: string; index: number }[] {
  return hand.map((card, index) => ({ card, index })).sort((x, y) => compareCards(x.card, y.card) || x.index - y.index);
}
