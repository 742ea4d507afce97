// Turning clicks into a legal move. A module splits each legal move into the targets clicked in
// order (e-SOLO-e "c12" -> ["c", "12"]; ZoxSo "b2^B2-B5" -> ["b2", "B2", "B5"]); given what was
// clicked so far, `narrow` says which targets may come next and whether a move is complete.

export interface Narrowed {
  /** Targets that continue at least one legal move. */
  next: Set<string>;
  /** The legal move the picks spell exactly, if any (it may also continue: a longer move). */
  complete: string | undefined;
}

export function narrow(legal: readonly string[], steps: (move: string) => string[], picked: readonly string[]): Narrowed {
  const next = new Set<string>();
  let complete: string | undefined;
  for (const move of legal) {
    const path = steps(move);
    if (path.length < picked.length) continue;
    if (!picked.every((p, i) => path[i] === p)) continue;
    if (path.length === picked.length) complete = move;
    else next.add(path[picked.length]);
  }
  return { next, complete };
}

/** The move a click on `target` makes, or the new picks when it only narrows; picks reset when
 * the target continues nothing (a click elsewhere starts again from it). */
export function pick(
  legal: readonly string[],
  steps: (move: string) => string[],
  picked: readonly string[],
  target: string,
): { move?: string; picked: string[] } {
  let base = [...picked];
  if (!narrow(legal, steps, base).next.has(target)) {
    base = [];
    if (!narrow(legal, steps, base).next.has(target)) return { picked: [] };
  }
  const chosen = [...base, target];
  const after = narrow(legal, steps, chosen);
  if (after.complete !== undefined && after.next.size === 0) return { move: after.complete, picked: [] };
  return { picked: chosen };
}
