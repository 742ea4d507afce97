// A finished game's result in words (who won, how, the scores): the table's and the replay's.
import type { GameStatus } from "./gen/tabletop/common/v1/common_pb";
import type { GameModule } from "./games/types";

export interface ResultInput {
  module: GameModule;
  /** The final status (its result). */
  status: GameStatus;
  /** The last view. */
  view: unknown;
  names: (seat: number) => string;
  /** The seat this page plays (undefined: watching, or a replay). */
  seat?: number;
  /** The last update's events (the table has them; a replay has none). */
  events?: unknown[];
  /** How it ended, as the archive says it ("win", "resignation", "timeout", ...). */
  end?: string;
}

const ENDS: Record<string, string> = {
  resignation: "by resignation",
  resign: "by resignation",
  timeout: "on time",
  aborted: "aborted",
  stopped: "stopped",
  abandoned: "abandoned",
};

export function resultWords(r: ResultInput): string {
  const result = r.status.result;
  const winners = result?.winners ?? [];
  let text: string;
  if (!result || (!winners.length && Object.keys(result.scores ?? {}).length === 0 && !result.detail)) {
    text = "The game ended without a result.";
  } else if (winners.length === 0) text = "A draw.";
  else if (r.seat !== undefined && winners.includes(r.seat)) text = winners.length > 1 ? `You won, with ${winners.filter((w) => w !== r.seat).map(r.names).join(", ")}.` : "You won!";
  else {
    const who = winners.map(r.names).join(" and ");
    text = `${who.charAt(0).toUpperCase()}${who.slice(1)} won.`;
    if (r.seat !== undefined) text += " You lost.";
  }
  const how = r.module.describeResult?.(r.status, r.view, r.names) ?? defaultHow(r);
  return how ? `${text} ${how}` : text;
}

function defaultHow(r: ResultInput): string {
  const parts: string[] = [];
  for (const event of r.events ?? []) {
    const line = r.module.describeEvent?.(event, r.names);
    if (line && /won|resign|draw|time/i.test(line)) parts.push(line);
  }
  if (!parts.length && r.end) {
    const detail = r.status.result?.detail as Record<string, unknown> | undefined;
    const methods = Array.isArray(detail?.methods) ? (detail!.methods as unknown[]).map(String) : [];
    if (methods.length) parts.push(`With ${methods.map((m) => (m === "two_sets" ? "two sets" : m === "colour" ? "four of a colour" : m === "symbol" || m === "symbols" ? "four symbols" : m.replace(/_/g, " "))).join(" and ")}`);
    else if (ENDS[r.end]) parts.push(`It ended ${ENDS[r.end]}`);
    else if (r.end !== "win") parts.push(`It ended: ${r.end.replace(/_/g, " ")}`);
  }
  const entries = Object.entries(r.status.result?.scores ?? {});
  if (entries.length) parts.push(`Scores: ${entries.map(([seat, score]) => `${r.names(Number(seat))} ${score}`).join(", ")}`);
  return parts.length ? `${parts.join(". ")}.` : "";
}
