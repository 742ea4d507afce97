// A player's page (#/player/<username>: ratings, a rating chart, recent games, each a link to its
// replay) and the leaders' page (#/leaders: each rated game's leaderboard, Solace's deal of the
// day and score tables).
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { lobby, headers, session, describeError } from "./api";
import { h, s, clear } from "./dom";
import { GAMES, gameModule } from "./games/index";
import { Outcome, type ArchivedSummary, type RatingInfo, type ScoreInfo } from "./gen/tabletop/lobby/v1/lobby_pb";

/** A player's name as a link to their page when it is an account's (its name is its username);
 * else the text alone. */
export function playerLink(playerId: string, name: string, text: string = name): HTMLElement | string {
  if (!playerId.startsWith("a-") || !name) return text;
  return h("a", { class: "player-link", href: playerHash(name), "aria-label": `${name}'s page` }, text);
}

export function playerHash(username: string): string {
  return `#/player/${encodeURIComponent(username)}`;
}

export function replayHash(game: string, gameId: string, move?: number): string {
  return `#/replay/${game}/${gameId}${move !== undefined ? `/${move}` : ""}`;
}

const RATED = GAMES.filter((g) => g.seats.max > 1);
const OUTCOME: Record<number, string> = { [Outcome.WIN]: "won", [Outcome.LOSS]: "lost", [Outcome.DRAW]: "draw", [Outcome.NONE]: "no result" };

function title(game: string): string {
  return gameModule(game)?.title ?? game;
}

function ratingWords(r: RatingInfo): string {
  const place = r.place !== undefined ? `, #${r.place} on the leaderboard` : "";
  return `${r.rating}${r.provisional ? " (provisional)" : ""}: ${r.games} rated ${r.games === 1 ? "game" : "games"}${place}`;
}

export async function playerPage(root: HTMLElement, username: string, signal: AbortSignal): Promise<void> {
  const opts = { headers: headers(), signal };
  const ratings = h("ul", { class: "list", id: "ratings", "aria-label": "Ratings" });
  const chart = h("div", { class: "chart", id: "rating-chart" });
  const games = h("ul", { class: "list", id: "recent-games", "aria-label": "Recent games" }, h("li", { class: "muted" }, "Loading…"));
  root.append(h("section", { class: "player-page", "aria-label": `${username}'s page` },
    h("h1", {}, username),
    h("div", { class: "lobby" },
      h("div", {},
        h("section", { class: "card", "aria-label": "Ratings" }, h("h2", {}, "Ratings"), ratings),
        h("section", { class: "card", "aria-label": "Rating over time" }, h("h2", {}, "Rating over time"), chart)),
      h("section", { class: "card", "aria-label": "Recent games" }, h("h2", {}, "Recent games"), games)),
    h("p", {}, h("a", { class: "button secondary", href: "#/leaders" }, "Leaders"), " ", h("a", { class: "button secondary", href: "#/", "aria-label": "Back to the lobby" }, "Lobby"))));
  let playerId = "";
  try {
    const infos = await Promise.all(RATED.map((m) => lobby.getRating({ game: m.id, username }, opts)));
    infos.forEach((r, i) => {
      playerId = r.playerId || playerId;
      ratings.append(h("li", { "data-game": RATED[i].id }, h("strong", {}, `${RATED[i].title}: `), ratingWords(r)));
    });
  } catch (e) {
    ratings.append(h("li", { class: "error" }, describeError(e)));
  }
  try {
    const reply = await lobby.listArchivedGames({ username, limit: 100 }, opts);
    clear(games);
    for (const g of reply.games.slice(0, 20)) games.append(gameItem(g, playerId, username));
    if (!reply.games.length) games.append(h("li", { class: "muted" }, "No finished game yet."));
    drawChart(chart, reply.games, playerId, username);
  } catch (e) {
    clear(games);
    games.append(h("li", { class: "error" }, describeError(e)));
  }
}

function mySeat(g: ArchivedSummary, playerId: string, username: string) {
  return g.seats.find((s) => (playerId && s.playerId === playerId) || s.name.toLowerCase() === username.toLowerCase());
}

function gameItem(g: ArchivedSummary, playerId: string, username: string): HTMLElement {
  const me = mySeat(g, playerId, username);
  const others = g.seats.filter((s) => s !== me).map((s) => s.name).join(", ");
  const when = g.finishedAt ? new Date(Number(timestampMs(g.finishedAt))).toISOString().slice(0, 16).replace("T", " ") : "";
  const how = g.end && g.end !== "win" ? ` (${g.end.replace(/_/g, " ")})` : "";
  const text = `${title(g.game)}${others ? ` vs ${others}` : ""}: ${OUTCOME[g.outcome] ?? "—"}${how}, ${g.moves} moves${g.rated ? ", rated" : ""}`;
  return h("li", {}, h("a", { href: replayHash(g.game, g.gameId), "aria-label": `Replay ${text}` }, text), h("small", { class: "muted" }, ` ${when}`));
}

/** The rating before and after each rated game (newest 50), a line per game, oldest left. */
function drawChart(root: HTMLElement, games: ArchivedSummary[], playerId: string, username: string): void {
  clear(root);
  const points = new Map<string, Array<{ before: number; after: number }>>();
  let count = 0;
  for (const g of games) {
    if (!g.rated || count >= 50) continue;
    const me = mySeat(g, playerId, username);
    if (me?.rating === undefined || me.ratingAfter === undefined) continue;
    count++;
    const list = points.get(g.game) ?? [];
    list.unshift({ before: me.rating, after: me.ratingAfter });
    points.set(g.game, list);
  }
  if (!count) {
    root.append(h("p", { class: "muted" }, "No rated games."));
    return;
  }
  const all = [...points.values()].flat().flatMap((p) => [p.before, p.after]);
  const lo = Math.min(...all) - 10, hi = Math.max(...all) + 10;
  const W = 320, H = 140, pad = 30;
  const svg = s("svg", { class: "rating-chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Rating over the last ${count} rated games` });
  svg.append(s("text", { x: 2, y: 12, class: "coord small" }, String(Math.round(hi))));
  svg.append(s("text", { x: 2, y: H - 4, class: "coord small" }, String(Math.round(lo))));
  let i = 0;
  for (const [game, list] of points) {
    const seq = [list[0].before, ...list.map((p) => p.after)];
    const x = (k: number) => pad + (k * (W - pad - 6)) / Math.max(1, seq.length - 1);
    const y = (v: number) => 6 + ((hi - v) * (H - 16)) / (hi - lo);
    svg.append(s("polyline", { class: `line seat${i}`, points: seq.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(" "), fill: "none" }));
    root.append(h("p", { class: `chip seat${i}` }, `${title(game)}: ${seq[0]} → ${seq[seq.length - 1]} over ${list.length} rated ${list.length === 1 ? "game" : "games"}`));
    i++;
  }
  root.prepend(svg);
}

function scoreRow(e: ScoreInfo, daily: boolean): HTMLElement {
  const score = daily ? e.score ?? e.best : e.best;
  return h("tr", {}, h("td", {}, e.place !== undefined ? String(e.place) : ""), h("td", {}, playerLink(e.playerId, e.name)), h("td", {}, String(score)),
    h("td", {}, daily ? "" : `${e.games} games, average ${e.average.toFixed(1)}`));
}

function table(caption: string, head: string[], rows: HTMLElement[], empty: string): HTMLElement {
  if (!rows.length) return h("div", {}, h("h3", {}, caption), h("p", { class: "muted" }, empty));
  return h("table", { class: "leaders", "aria-label": caption }, h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ...head.map((t) => h("th", {}, t)))), h("tbody", {}, ...rows));
}

export async function leadersPage(root: HTMLElement, signal: AbortSignal, go: (hash: string) => void): Promise<void> {
  const opts = { headers: headers(), signal };
  const boards = h("div", { class: "lobby" });
  const solace = h("section", { class: "card", "aria-label": "Solace: the deal of the day" }, h("h2", {}, "Solace: the deal of the day"));
  root.append(h("section", { class: "leaders-page", "aria-label": "Leaders" }, h("h1", {}, "Leaders"), boards, solace,
    h("p", {}, h("a", { class: "button secondary", href: "#/", "aria-label": "Back to the lobby" }, "Lobby"))));
  for (const m of RATED) {
    const card = h("section", { class: "card", "aria-label": `${m.title} leaderboard` }, h("h2", {}, m.title));
    boards.append(card);
    lobby.listLeaderboard({ game: m.id, limit: 10 }, opts).then(
      (reply) => card.append(table("The best rated", ["#", "player", "rating", "games"],
        reply.entries.map((e) => h("tr", {}, h("td", {}, String(e.place ?? "")), h("td", {}, playerLink(e.playerId, e.name)), h("td", {}, String(e.rating)), h("td", {}, String(e.games)))),
        "Nobody is established yet (a rating counts here once it is no longer provisional).")),
      (e) => card.append(h("p", { class: "error" }, describeError(e))));
  }
  const status = h("p", { class: "muted", role: "status" });
  const me = session();
  if (me && !me.guest) {
    try {
      const mine = await lobby.getScores({ game: "solace" }, opts);
      status.textContent = mine.today !== undefined ? `Your score on today's deal (${mine.day}): ${mine.today}.` : `You have not played today's deal (${mine.day}) yet.`;
      if (mine.games) status.textContent += ` Your best: ${mine.best} (${mine.games} games${mine.place !== undefined ? `, #${mine.place}` : ""}).`;
    } catch (e) {
      status.textContent = describeError(e);
    }
  }
  const play = h("button", { type: "button", "aria-label": "Play today's Solace deal", onclick: () => {
    lobby.playAgainstBots({ game: "solace", options: { game: { case: "solace", value: { dealOfTheDay: true } } } }, opts).then(
      (reply) => go(`#/game/solace/${reply.status!.gameId}`), (e) => { status.textContent = describeError(e); });
  } }, "Play today's deal");
  solace.append(status, h("div", { class: "row" }, play));
  try {
    const [today, best] = await Promise.all([
      lobby.listScoreTable({ game: "solace", day: "today", limit: 10 }, opts),
      lobby.listScoreTable({ game: "solace", limit: 10 }, opts),
    ]);
    solace.append(table(`Today's deal (${today.day})`, ["#", "player", "towers", ""], today.entries.map((e) => scoreRow(e, true)), "Nobody has played today's deal yet."));
    solace.append(table("Best scores of all time", ["#", "player", "towers", ""], best.entries.map((e) => scoreRow(e, false)), "No score yet."));
  } catch (e) {
    solace.append(h("p", { class: "error" }, describeError(e)));
  }
}
