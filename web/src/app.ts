// The app: log in (guest or account), the lobby (games against bots, matchmaking, challenges,
// invites, open tables, live games, your games) and the tables, by URL hash:
//   #/                      the lobby
//   #/game/<game>/<id>      a table (your seat, or watching when you have none)
//   #/watch/<game>/<id>     watching a game
//   #/replay/<game>/<id>[/<move>]  an archived game stepped through (replay.ts)
//   #/player/<username>     a player's ratings and games; #/leaders the leaderboards (player.ts)
import { create } from "@bufbuild/protobuf";
import * as api from "./api";
import { lobby, headers, describeError } from "./api";
import { h, clear } from "./dom";
import { GAMES, LEVELS, gameModule, gameOfId } from "./games/index";
import type { GameModule } from "./games/types";
import { Table } from "./table";
import { Replay } from "./replay";
import { leadersPage, playerHash, playerLink, playerPage } from "./player";
import { initNotifications, markAnswered } from "./notify";
import { followingCard } from "./following";
import { BotFill, ChallengeState, ChallengeKind, TicketState, type Challenge } from "./gen/tabletop/lobby/v1/lobby_pb";
import { GameOptionsSchema } from "./gen/tabletop/lobby/v1/lobby_pb";

const main = document.getElementById("main")!;
let table: Table | Replay | undefined;
let pageAbort = new AbortController();
let challengesAbort: AbortController | undefined;
const challenges = new Map<string, Challenge>();
const handledStarts = new Set<string>();
/** Challenges this page made, answered or joined: their game opens when it starts. */
const acted = new Set<string>();
/** Challenges accepted on this page: their game opens even from another table. */
const accepted = new Set<string>();

function toast(text: string): void {
  const el = document.getElementById("toast")!;
  el.textContent = text;
  el.classList.add("show");
  window.setTimeout(() => el.classList.remove("show"), 5000);
}

function opts(): { headers: Record<string, string>; signal: AbortSignal } {
  return { headers: headers(), signal: pageAbort.signal };
}

function go(hash: string): void {
  if (location.hash === hash) void route();
  else location.hash = hash;
}

function tableHash(gameId: string): string {
  return `#/game/${gameOfId(gameId)}/${gameId}`;
}

function drawAccount(): void {
  const who = document.getElementById("who")!;
  const nav = document.getElementById("account")!;
  clear(nav);
  const s = api.session();
  who.textContent = s ? `${s.name}${s.guest ? " (guest)" : ""}` : "";
  if (s) nav.append(h("button", { type: "button", class: "secondary small", "aria-label": "Log out", onclick: () => void logOut() }, "Log out"));
}

async function logOut(): Promise<void> {
  challengesAbort?.abort();
  await api.logout();
  go("#/");
}

async function route(): Promise<void> {
  pageAbort.abort();
  pageAbort = new AbortController();
  table?.stop();
  table = undefined;
  clear(main);
  drawAccount();
  const s = await api.ready();
  drawAccount();
  if (!s) {
    loginPage();
    return;
  }
  const parts = location.hash.replace(/^#\/?/, "").split("/");
  // WatchChallenges on the lobby only (below): a browser holds at most six HTTP/1.1
  // connections to a site and every stream keeps one; elsewhere the notifications tell
  challengesAbort?.abort();
  if ((parts[0] === "game" || parts[0] === "watch") && parts[2]) {
    const module = gameModule(parts[1]);
    if (!module) {
      main.append(h("p", {}, `No such game: ${parts[1]}`));
      return;
    }
    table = new Table(main, module, decodeURIComponent(parts[2]), parts[0] === "watch");
    await table.start();
    return;
  }
  if (parts[0] === "replay" && parts[2]) {
    const module = gameModule(parts[1]);
    if (!module) {
      main.append(h("p", {}, `No such game: ${parts[1]}`));
      return;
    }
    const move = parts[3] !== undefined && /^\d+$/.test(parts[3]) ? Number(parts[3]) : undefined;
    table = new Replay(main, module, decodeURIComponent(parts[2]), move);
    await table.start();
    return;
  }
  if (parts[0] === "player" && parts[1]) {
    await playerPage(main, decodeURIComponent(parts[1]), pageAbort.signal);
    return;
  }
  if (parts[0] === "leaders") {
    await leadersPage(main, pageAbort.signal, go);
    return;
  }
  watchChallenges();
  lobbyPage();
}

// ---------------------------------------------------------------------------------------------
// Logging in

function loginPage(): void {
  const guestName = h("input", { id: "guest-name", name: "name", autocomplete: "nickname", maxlength: 32, required: true, "aria-label": "Your name", placeholder: "Your name" });
  const user = h("input", { id: "username", name: "username", autocomplete: "username", maxlength: 32, required: true, "aria-label": "Username", placeholder: "Username" });
  const pass = h("input", { id: "password", name: "password", type: "password", autocomplete: "current-password", required: true, "aria-label": "Password", placeholder: "Password" });
  const error = h("p", { class: "error", role: "alert" });
  const attempt = async (what: () => Promise<unknown>) => {
    error.textContent = "";
    try {
      await what();
      await route();
    } catch (e) {
      error.textContent = describeError(e);
    }
  };
  main.append(
    h("section", { class: "login" },
      h("h1", {}, "Play e-SOLO-e, ZoxSo, Solo and Solace"),
      h("form", { class: "card", "aria-label": "Play as a guest", onsubmit: (e: Event) => { e.preventDefault(); void attempt(() => api.guestLogin(guestName.value.trim())); } },
        h("h2", {}, "Play as a guest"),
        h("p", { class: "muted" }, "A name is all it takes; your games stay in this browser."),
        h("div", { class: "row" }, guestName, h("button", { type: "submit", "aria-label": "Play as a guest" }, "Play"))),
      h("form", { class: "card", "aria-label": "Account", onsubmit: (e: Event) => { e.preventDefault(); void attempt(() => api.accountLogin(user.value.trim(), pass.value)); } },
        h("h2", {}, "Your account"),
        h("div", { class: "stack" }, user, pass),
        h("div", { class: "row" },
          h("button", { type: "submit", "aria-label": "Log in" }, "Log in"),
          h("button", { type: "button", class: "secondary", "aria-label": "Register a new account", onclick: () => void attempt(() => api.register(user.value.trim(), pass.value)) }, "Register"))),
      error));
  guestName.focus();
}

// ---------------------------------------------------------------------------------------------
// The lobby

function select(label: string, id: string, values: Array<[string, string]>, chosen?: string): HTMLSelectElement {
  const el = h("select", { id, "aria-label": label });
  for (const [value, text] of values) el.append(h("option", { value, selected: value === chosen }, text));
  return el;
}

/** "a Solo", "an e-SOLO-e". */
function aTitle(module: GameModule): string {
  return `${/^[aeiou]/i.test(module.title) ? "an" : "a"} ${module.title}`;
}

/** A "Rated" checkbox, for an account's session only (a guest plays casual games); null for a
 * guest. */
function ratedBox(id: string, label: string): HTMLInputElement | null {
  if (api.session()?.guest ?? true) return null;
  return h("input", { type: "checkbox", id, "aria-label": label });
}

function labelled(box: HTMLInputElement | null, text: string): HTMLElement | null {
  return box ? h("label", { class: "check", for: box.id }, box, ` ${text}`) : null;
}

function optionsFor(module: GameModule, seats: number) {
  return module.options?.(seats) ?? create(GameOptionsSchema, {});
}

function lobbyPage(): void {
  const games = h("section", { class: "games", "aria-label": "Games" }, h("h2", {}, "Play"));
  for (const module of GAMES) games.append(gameCard(module));
  const mine = h("section", { class: "card mine", "aria-label": "Your games" }, h("h2", {}, "Your games"), h("ul", { id: "my-games", class: "list" }, h("li", { class: "muted" }, "Loading…")));
  const friends = friendsCard();
  const following = followingCard(pageAbort.signal);
  const open = h("section", { class: "card", "aria-label": "Open tables" }, h("h2", {}, "Open tables"), h("ul", { id: "open-tables", class: "list" }));
  const live = h("section", { class: "card", "aria-label": "Live games" }, h("h2", {}, "Watch live games"), h("ul", { id: "live-games", class: "list" }));
  const me = api.session();
  const pages = h("nav", { class: "row pages", "aria-label": "Pages" },
    h("a", { href: "#/leaders" }, "Leaders and the deal of the day"),
    me && !me.guest ? h("a", { href: playerHash(me.name), "aria-label": "Your page" }, "Your page: ratings and games") : null);
  main.append(pages, h("div", { class: "lobby" }, games, h("div", { class: "side" }, mine, friends, following, open, live)));
  void loadMine();
  void loadOpenTables();
  void loadLive();
}

function gameCard(module: GameModule): HTMLElement {
  const seatValues: Array<[string, string]> = [];
  for (let n = module.seats.min; n <= module.seats.max; n++) seatValues.push([String(n), `${n} ${n === 1 ? "player" : "players"}`]);
  const seats = select(`${module.title}: players`, `seats-${module.id}`, seatValues, String(module.seats.default));
  const level = select(`${module.title}: bot level`, `level-${module.id}`, LEVELS.map((l) => [l, `${l} bots`]), "greedy");
  const status = h("p", { class: "muted ticket", role: "status", "aria-live": "polite" });
  const multi = module.seats.max > 1;
  // rated: the game's standard options and time control, accounts only (docs/ratings.md)
  const ratedInput = multi ? ratedBox(`rated-${module.id}`, `Rated ${module.title} game`) : null;
  const rated = () => ratedInput?.checked ?? false;
  const n = () => Number(seats.value);
  const run = async (what: () => Promise<void>) => {
    try {
      await what();
    } catch (e) {
      status.textContent = describeError(e);
    }
  };
  const bots = () => run(async () => {
    status.textContent = "Setting up the table…";
    const reply = await lobby.playAgainstBots({ game: module.id, options: optionsFor(module, n()), level: level.value, rated: rated() }, opts());
    go(tableHash(reply.status!.gameId));
  });
  const match = () => run(async () => {
    const ticket = await lobby.findMatch({ game: module.id, options: optionsFor(module, n()), seats: n(), bots: BotFill.AFTER, botsAfterSeconds: 60, level: level.value, rated: rated() }, opts());
    status.textContent = "Looking for players… (bots fill the table after a minute)";
    const cancel = h("button", { type: "button", class: "secondary small", "aria-label": `Stop looking for ${aTitle(module)} game`, onclick: () => void lobby.cancelTicket({ ticketId: ticket.ticketId }, opts()).catch(() => undefined) }, "Cancel");
    status.append(" ", cancel);
    for await (const t of lobby.watchTicket({ ticketId: ticket.ticketId }, opts())) {
      if (t.state === TicketState.MATCHED && t.gameId) {
        go(tableHash(t.gameId));
        return;
      }
      if (t.state === TicketState.CANCELLED || t.state === TicketState.EXPIRED) {
        status.textContent = t.state === TicketState.CANCELLED ? "Stopped looking." : "Nobody came in time.";
        return;
      }
    }
  });
  const openTable = () => run(async () => {
    const c = await lobby.openTable({ game: module.id, options: optionsFor(module, n()), seats: n(), rated: rated() }, opts());
    acted.add(c.challengeId);
    challenges.set(c.challengeId, c);
    status.textContent = "Your table is open: it starts when it is full.";
    void loadOpenTables();
  });
  const invite = () => run(async () => {
    const c = await lobby.createInvite({ game: module.id, options: optionsFor(module, n()), seats: n(), rated: rated() }, opts());
    acted.add(c.challengeId);
    challenges.set(c.challengeId, c);
    clear(status);
    status.append("Invite code: ", h("strong", { class: "code", "aria-label": "Invite code" }, c.code), " — give it to your friends; the game starts when the table is full.");
  });
  return h("article", { class: `card game game-${module.id}`, "aria-label": module.title },
    h("h3", {}, module.title),
    h("p", { class: "muted" }, module.blurb),
    h("div", { class: "row" }, module.seats.min !== module.seats.max ? seats : null, level, labelled(ratedInput, "Rated")),
    h("div", { class: "row buttons" },
      h("button", { type: "button", "aria-label": `Play ${module.title} against bots`, onclick: () => void bots() }, "Play bots"),
      multi ? h("button", { type: "button", class: "secondary", "aria-label": `Find ${aTitle(module)} match`, onclick: () => void match() }, "Find match") : null,
      multi ? h("button", { type: "button", class: "secondary", "aria-label": `Open ${aTitle(module)} table`, onclick: () => void openTable() }, "Open table") : null,
      multi ? h("button", { type: "button", class: "secondary", "aria-label": `Invite friends to ${module.title}`, onclick: () => void invite() }, "Invite") : null),
    status);
}

async function loadMine(): Promise<void> {
  const list = document.getElementById("my-games");
  if (!list) return;
  try {
    const reply = await lobby.listGames({ liveOnly: true }, opts());
    clear(list);
    const me = api.session()?.playerId;
    for (const g of reply.games) {
      const st = g.status!;
      const module = gameModule(st.game);
      const others = st.seats.filter((s) => s.playerId !== me).map((s) => s.name).join(", ");
      const mySeat = st.seats.findIndex((s) => s.playerId === me);
      const turn = st.toAct.includes(mySeat) ? " — your turn" : "";
      list.append(h("li", {}, h("a", { href: tableHash(st.gameId), "aria-label": `Back to your ${module?.title ?? st.game} game against ${others}` }, `${module?.title ?? st.game} vs ${others || "—"}${turn}`)));
    }
    if (!reply.games.length) list.append(h("li", { class: "muted" }, "No game in progress."));
  } catch (e) {
    clear(list);
    list.append(h("li", { class: "error" }, describeError(e)));
  }
}

async function loadOpenTables(): Promise<void> {
  const list = document.getElementById("open-tables");
  if (!list) return;
  try {
    const reply = await lobby.listOpenTables({ limit: 20 }, opts());
    clear(list);
    const me = api.session()?.playerId;
    for (const t of reply.tables) {
      const module = gameModule(t.game);
      const who = t.players.map((p) => p.name).join(", ");
      const whoLinks = t.players.flatMap((p, i) => [i ? ", " : "", playerLink(p.playerId, p.name)]);
      const seated = t.players.some((p) => p.playerId === me);
      const join = seated ? h("span", { class: "muted" }, " (yours: waiting)") : h("button", { type: "button", class: "small", "aria-label": `Join ${who}'s ${module?.title ?? t.game} table`, onclick: () => void joinTable(t.challengeId) }, "Join");
      list.append(h("li", {}, `${module?.title ?? t.game}: `, ...whoLinks, ` (${t.players.length}/${t.seats}) `, join));
    }
    if (!reply.tables.length) list.append(h("li", { class: "muted" }, "No open table: open one above."));
  } catch (e) {
    clear(list);
    list.append(h("li", { class: "error" }, describeError(e)));
  }
}

async function joinTable(id: string): Promise<void> {
  try {
    acted.add(id);
    const c = await lobby.joinTable({ challengeId: id }, opts());
    onChallenge(c);
  } catch (e) {
    toast(describeError(e));
  }
}

async function loadLive(): Promise<void> {
  const list = document.getElementById("live-games");
  if (!list) return;
  try {
    const reply = await lobby.listLiveGames({ limit: 20 }, opts());
    clear(list);
    for (const g of reply.games) {
      const st = g.status!;
      const module = gameModule(st.game);
      const names = st.seats.map((s) => s.name).join(" vs ");
      const rating = g.rating !== undefined ? ` (${g.rating})` : "";
      const players = st.seats.flatMap((s, i) => [i ? " vs " : "", playerLink(s.playerId, s.name)]);
      list.append(h("li", {}, h("a", { href: `#/watch/${st.game}/${st.gameId}`, "aria-label": `Watch ${module?.title ?? st.game}: ${names}` }, `${module?.title ?? st.game}${rating}`), ": ", ...players));
    }
    if (!reply.games.length) list.append(h("li", { class: "muted" }, "No game being played right now."));
  } catch (e) {
    clear(list);
    list.append(h("li", { class: "error" }, describeError(e)));
  }
}

// ---------------------------------------------------------------------------------------------
// Challenges and invites

function friendsCard(): HTMLElement {
  const name = h("input", { id: "challenge-name", autocomplete: "off", maxlength: 32, "aria-label": "Player to challenge", placeholder: "Their username" });
  const game = select("Game of the challenge", "challenge-game", GAMES.filter((g) => g.seats.max > 1).map((g) => [g.id, g.title]));
  const code = h("input", { id: "invite-code", autocomplete: "off", "aria-label": "Invite code", placeholder: "Invite code" });
  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" });
  const ratedInput = ratedBox("challenge-rated", "Rated challenge");
  const challenge = async () => {
    try {
      const module = gameModule(game.value)!;
      const c = await lobby.challengePlayer({ username: name.value.trim(), game: module.id, options: optionsFor(module, 2), rated: ratedInput?.checked ?? false }, opts());
      acted.add(c.challengeId);
      challenges.set(c.challengeId, c);
      status.textContent = `Challenge sent to ${name.value.trim()}: waiting for an answer…`;
    } catch (e) {
      status.textContent = describeError(e);
    }
  };
  const join = async () => {
    try {
      const c = await lobby.joinInvite({ code: code.value.trim() }, opts());
      acted.add(c.challengeId);
      status.textContent = "You have a seat: the game starts when the table is full.";
      onChallenge(c);
    } catch (e) {
      status.textContent = describeError(e);
    }
  };
  return h("section", { class: "card", "aria-label": "Play with friends" },
    h("h2", {}, "Play with friends"),
    h("form", { class: "row", onsubmit: (e: Event) => { e.preventDefault(); void challenge(); } },
      name, game, labelled(ratedInput, "Rated"), h("button", { type: "submit", "aria-label": "Challenge this player" }, "Challenge")),
    h("form", { class: "row", onsubmit: (e: Event) => { e.preventDefault(); void join(); } },
      code, h("button", { type: "submit", "aria-label": "Join with this invite code" }, "Join")),
    status,
    h("ul", { id: "challenges", class: "list", "aria-label": "Challenges to you" }));
}

function drawChallenges(): void {
  const list = document.getElementById("challenges");
  if (!list) return;
  clear(list);
  const me = api.session()?.playerId;
  for (const c of challenges.values()) {
    if (c.state !== ChallengeState.OPEN || c.kind !== ChallengeKind.CHALLENGE) continue;
    const from = c.players.find((p) => p.joined && p.playerId !== me);
    const toMe = c.players.some((p) => p.playerId === me && !p.joined);
    if (!toMe || !from) continue;
    const title = gameModule(c.game)?.title ?? c.game;
    list.append(h("li", { class: "challenge" }, playerLink(from.playerId, from.name), ` challenges you to ${c.rated ? "a rated game of " : ""}${title} `,
      h("button", { type: "button", class: "small", "aria-label": `Accept ${from.name}'s challenge`, onclick: () => void answer(c.challengeId, true) }, "Accept"),
      h("button", { type: "button", class: "small secondary", "aria-label": `Decline ${from.name}'s challenge`, onclick: () => void answer(c.challengeId, false) }, "Decline")));
  }
}

async function answer(id: string, accept: boolean): Promise<boolean> {
  acted.add(id);
  if (accept) accepted.add(id);
  try {
    onChallenge(await lobby.answerChallenge({ challengeId: id, accept }, { headers: headers() }));
    markAnswered(id, accept);
    return true;
  } catch (e) {
    toast(describeError(e));
    return false;
  }
}

function onChallenge(c: Challenge): void {
  const before = challenges.get(c.challengeId);
  challenges.set(c.challengeId, c);
  const me = api.session()?.playerId;
  const mine = c.players.some((p) => p.playerId === me && p.joined);
  if (c.state === ChallengeState.STARTED && c.gameId && mine && !handledStarts.has(c.challengeId)) {
    handledStarts.add(c.challengeId);
    // a game that started before this page knew of it is in "Your games"; a new one opens
    const fresh = before?.state === ChallengeState.OPEN || acted.has(c.challengeId);
    if (fresh && (!location.hash.startsWith("#/game/") || accepted.has(c.challengeId))) go(tableHash(c.gameId));
    else if (fresh) toast(`Your ${gameModule(c.game)?.title ?? c.game} game has started.`);
  }
  drawChallenges();
}

function watchChallenges(): void {
  if (challengesAbort && !challengesAbort.signal.aborted) return;
  challengesAbort = new AbortController();
  const signal = challengesAbort.signal;
  const loop = async () => {
    let delay = 500;
    while (!signal.aborted && api.session()) {
      try {
        for await (const c of lobby.watchChallenges({}, { headers: headers(), signal })) {
          delay = 500;
          onChallenge(c);
        }
      } catch {
        // dropped: watch again
      }
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 10_000);
    }
  };
  void loop();
}

api.onSession((s) => {
  drawAccount();
  if (!s) {
    challengesAbort?.abort();
    challenges.clear();
  }
});
window.addEventListener("hashchange", () => void route());
initNotifications({ answer });
void route();
