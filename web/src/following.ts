// The lobby's "Following" card (accounts only): follow a player by username, the players you
// follow (online or not, a Watch link while they play a public game, Unfollow), how many follow
// you and "Refuse followers". Refreshed every few seconds while the lobby is open, and at once
// on a notification.
import * as api from "./api";
import { lobby, headers, describeError } from "./api";
import { h, clear } from "./dom";
import { gameModule, gameOfId } from "./games/index";
import { AcceptFrom, type FollowedPlayer } from "./gen/tabletop/lobby/v1/lobby_pb";
import { NOTIFICATION_EVENT } from "./notify";

const REFRESH_MS = 3000;

/** The card; it stops refreshing when `signal` aborts (the page changed). */
export function followingCard(signal: AbortSignal): HTMLElement {
  const s = api.session();
  if (!s || s.guest) {
    return h("section", { class: "card following", "aria-label": "Following" },
      h("h2", {}, "Following"),
      h("p", { class: "muted" }, "Register an account to follow players and see when they are online or playing (guests can neither follow nor be followed)."));
  }
  const opts = () => ({ headers: headers(), signal });
  const name = h("input", { id: "follow-name", autocomplete: "off", maxlength: 32, "aria-label": "Username to follow", placeholder: "Their username" });
  const status = h("p", { class: "muted", role: "status", "aria-live": "polite" });
  const list = h("ul", { id: "following", class: "list", "aria-label": "Players you follow" }, h("li", { class: "muted" }, "Loading…"));
  const followers = h("p", { class: "muted followers", "aria-live": "polite" });
  const refuse = h("input", { type: "checkbox", id: "refuse-followers", "aria-label": "Refuse followers" });
  let players: FollowedPlayer[] = [];
  let loading = false;
  let drawn = "";

  /** The list again when it changed, the focus kept on the same control. */
  const draw = () => {
    const key = JSON.stringify(players.map((p) => [p.playerId, p.name, p.online, p.game, p.gameId]));
    if (key === drawn) return;
    drawn = key;
    const focused = list.contains(document.activeElement) ? document.activeElement?.getAttribute("aria-label") : null;
    clear(list);
    for (const p of players) {
      const title = gameModule(p.game)?.title ?? p.game;
      list.append(h("li", { class: "followed", "data-online": String(p.online) },
        h("span", { class: `dot ${p.online ? "on" : "off"}`, "aria-hidden": "true" }), " ",
        h("strong", {}, p.name), " ",
        h("span", { class: "muted presence" }, p.online ? "online" : "offline"), " ",
        p.gameId ? h("a", { class: "button small secondary", href: `#/watch/${p.game || gameOfId(p.gameId)}/${p.gameId}`, "aria-label": `Watch ${p.name}'s ${title} game now` }, "Watch") : null, " ",
        h("button", { type: "button", class: "small secondary", "aria-label": `Unfollow ${p.name}`, onclick: () => void unfollow(p) }, "Unfollow")));
    }
    if (!players.length) list.append(h("li", { class: "muted" }, "You follow nobody yet."));
    if (focused) ([...list.querySelectorAll<HTMLElement>("[aria-label]")].find((el) => el.getAttribute("aria-label") === focused) ?? name).focus();
  };

  const load = async () => {
    if (loading || signal.aborted) return;
    loading = true;
    try {
      const [following, by] = await Promise.all([lobby.listFollowing({}, opts()), lobby.listFollowers({}, opts())]);
      players = following.players;
      draw();
      const n = by.followers.length;
      const text = `${n} ${n === 1 ? "player follows" : "players follow"} you.`;
      if (followers.textContent !== text) followers.textContent = text;
    } catch (e) {
      if (!signal.aborted) status.textContent = describeError(e);
    } finally {
      loading = false;
    }
  };

  const follow = async () => {
    const who = name.value.trim();
    if (!who) return;
    try {
      const p = await lobby.followPlayer({ username: who }, opts());
      status.textContent = `You follow ${p.name}.`;
      name.value = "";
      players = [...players.filter((x) => x.playerId !== p.playerId), p].sort((a, b) => a.name.localeCompare(b.name));
      draw();
    } catch (e) {
      status.textContent = describeError(e);
    }
  };

  const unfollow = async (p: FollowedPlayer) => {
    try {
      await lobby.unfollowPlayer({ playerId: p.playerId }, opts());
      status.textContent = `You no longer follow ${p.name}.`;
      players = players.filter((x) => x.playerId !== p.playerId);
      draw();
    } catch (e) {
      status.textContent = describeError(e);
    }
  };

  refuse.addEventListener("change", () => {
    const nobody = refuse.checked;
    lobby.setFollowSetting({ acceptFrom: nobody ? AcceptFrom.NOBODY : AcceptFrom.EVERYONE }, opts())
      .then((setting) => {
        refuse.checked = setting.acceptFrom === AcceptFrom.NOBODY;
        status.textContent = refuse.checked ? "Nobody may follow you now (those who did no longer do)." : "Anyone may follow you again.";
        void load();
      })
      .catch((e) => {
        refuse.checked = !nobody;
        status.textContent = describeError(e);
      });
  });
  lobby.getFollowSetting({}, opts())
    .then((setting) => { refuse.checked = setting.acceptFrom === AcceptFrom.NOBODY; })
    .catch(() => undefined);

  const onNotification = () => void load();
  window.addEventListener(NOTIFICATION_EVENT, onNotification);
  signal.addEventListener("abort", () => window.removeEventListener(NOTIFICATION_EVENT, onNotification));
  const tick = async () => {
    while (!signal.aborted) {
      await load();
      await new Promise((r) => setTimeout(r, REFRESH_MS));
    }
  };
  void tick();

  return h("section", { class: "card following", "aria-label": "Following" },
    h("h2", {}, "Following"),
    h("form", { class: "row", onsubmit: (e: Event) => { e.preventDefault(); void follow(); } },
      name, h("button", { type: "submit", "aria-label": "Follow this player" }, "Follow")),
    status,
    list,
    h("div", { class: "row" }, followers,
      h("label", { class: "check", for: refuse.id }, refuse, " Refuse followers")));
}
