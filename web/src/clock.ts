// Clocks: what is left of a seat's time, and how to show it.

/** "1:05", "12:00", "0:09.4" under ten seconds, "1:02:03" past an hour; never negative. */
export function formatClock(ms: number): string {
  const clamped = Math.max(0, ms);
  if (clamped < 10_000) return `0:0${(Math.floor(clamped / 100) / 10).toFixed(1)}`;
  const total = Math.floor(clamped / 1000);
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}

/** What is left now of a clock that had `remainingMs` at `sinceMs` (and runs if `running`). */
export function remaining(remainingMs: number, sinceMs: number, running: boolean, nowMs: number): number {
  return Math.max(0, running ? remainingMs - Math.max(0, nowMs - sinceMs) : remainingMs);
}
