// Notifications in words, and where a notification stream resumes (pure: unit-tested).
import { NotificationKind, type Notification } from "./gen/tabletop/lobby/v1/lobby_pb";

/** What happened, in words; `titleOf` names a game kind ("esoloe": "e-SOLO-e"). */
export function describe(n: Notification, titleOf: (game: string) => string): string {
  const who = n.name || "A player";
  const aGame = (game: string) => {
    const title = titleOf(game);
    return `${/^[aeiou]/i.test(title) ? "an" : "a"} ${title}`;
  };
  switch (n.kind) {
    case NotificationKind.CHALLENGE_RECEIVED: return `${who} challenges you to ${aGame(n.game)} game.`;
    case NotificationKind.CHALLENGE_ACCEPTED: return `${who} accepted your ${titleOf(n.game)} challenge.`;
    case NotificationKind.CHALLENGE_DECLINED: return `${who} declined your ${titleOf(n.game)} challenge.`;
    case NotificationKind.CHALLENGE_EXPIRED: return `The ${titleOf(n.game)} challenge ${n.name ? `with ${n.name} ` : ""}expired unanswered.`;
    case NotificationKind.REMATCH_OFFERED: return `${who} offers you a rematch of ${titleOf(n.game)}.`;
    case NotificationKind.GAME_STARTED: return `${who} is playing ${aGame(n.game)} game.`;
    case NotificationKind.YOUR_TURN: return `Your turn in ${aGame(n.game || n.gameId.split("-", 1)[0])} game.`;
    default: return n.message || "Something happened.";
  }
}

/** Where to watch from: after the last id received; before any, after `since` (a moment before
 * the first stream opened), or "" (from now on) for the first stream. */
export function resumeAfter(lastId: string, since: string): string {
  return lastId || since;
}

/** A notification id two seconds before the time of a `Date` header (`now` when there is none). */
export function idBefore(dateHeader: string | null, now: number): string {
  const date = Date.parse(dateHeader ?? "");
  return `${Math.max(0, (Number.isNaN(date) ? now : date) - 2000)}-0`;
}

/** Whether notification id `a` comes after `b` (Redis stream ids, "ms-seq"; "" is before all). */
export function isAfter(a: string, b: string): boolean {
  if (!b) return true;
  const [am, as] = a.split("-").map((x) => BigInt(/^\d+$/.test(x) ? x : "0"));
  const [bm, bs] = b.split("-").map((x) => BigInt(/^\d+$/.test(x) ? x : "0"));
  return am > bm || (am === bm && (as ?? 0n) > (bs ?? 0n));
}
