// Notifications on every page (docs/api.md, "Following, presence and notifications"): one
// WatchNotifications stream per page load, resumed after a drop from the last id received (no
// gap, no duplicate) and reopened with backoff; each notification is shown at once as a toast
// and in the list under the header's bell button, which counts the unread ones.
import * as api from "./api";
import { lobby, headers, describeError } from "./api";
import { h, s, clear } from "./dom";
import { gameModule, gameOfId } from "./games/index";
import { NotificationKind, type Notification } from "./gen/tabletop/lobby/v1/lobby_pb";
import { describe as describeIn, idBefore, isAfter, resumeAfter } from "./notify-text";

function titleOf(game: string): string {
  return gameModule(game)?.title ?? game;
}

function describe(n: Notification): string {
  return describeIn(n, titleOf);
}

export interface NotifyDeps {
  /** Answer a challenge as the lobby does (its table opens when it starts); true when done. */
  answer(challengeId: string, accept: boolean): Promise<boolean>;
}

/** Dispatched on window for each notification shown (the lobby's following list refreshes). */
export const NOTIFICATION_EVENT = "tabletop:notification";

const MAX_KEPT = 50;
const TOAST_MS = 10_000;

let deps: NotifyDeps | undefined;
let abort: AbortController | undefined;
let lastId = "";
/** An id a moment before the first stream opened: where a stream that dropped before anything
 * came resumes (a notification of the 30 s before the page loaded may come then, none is lost). */
let since = "";
const CLOCK_MARGIN_MS = 28_000;
const unread = new Set<string>(); // ids of the notifications not seen in the list yet
const shown: Notification[] = [];
const done = new Map<string, string>(); // challenge id → what was answered
let els: { button: HTMLButtonElement; count: HTMLElement; panel: HTMLElement; list: HTMLElement; toasts: HTMLElement } | undefined;

function tableHash(gameId: string): string {
  return `#/game/${gameOfId(gameId)}/${gameId}`;
}

/** The table or game being looked at now, from the address. */
function lookingAt(gameId: string): boolean {
  const parts = location.hash.replace(/^#\/?/, "").split("/");
  return (parts[0] === "game" || parts[0] === "watch") && decodeURIComponent(parts[2] ?? "") === gameId;
}

function actions(n: Notification): HTMLElement {
  const box = h("span", { class: "notify-actions" });
  const who = n.name || "the player";
  const answered = done.get(n.challengeId);
  const answer = async (accept: boolean) => {
    if (!deps || done.has(n.challengeId)) return;
    done.set(n.challengeId, accept ? "Accepted." : "Declined.");
    redraw();
    const ok = await deps.answer(n.challengeId, accept);
    if (!ok) done.set(n.challengeId, "Could not be answered.");
    redraw();
  };
  switch (n.kind) {
    case NotificationKind.CHALLENGE_RECEIVED:
      if (answered) box.append(h("span", { class: "muted" }, answered));
      else box.append(
        h("button", { type: "button", class: "small", "aria-label": `Accept the challenge from ${who}`, onclick: () => void answer(true) }, "Accept"),
        h("button", { type: "button", class: "small secondary", "aria-label": `Decline the challenge from ${who}`, onclick: () => void answer(false) }, "Decline"));
      break;
    case NotificationKind.REMATCH_OFFERED:
      if (answered) box.append(h("span", { class: "muted" }, answered));
      else box.append(h("button", { type: "button", class: "small", "aria-label": `Accept the rematch from ${who}`, onclick: () => void answer(true) }, "Accept"));
      break;
    case NotificationKind.GAME_STARTED:
      if (n.gameId) box.append(h("a", { class: "button small secondary", href: `#/watch/${n.game || gameOfId(n.gameId)}/${n.gameId}`, "aria-label": `Watch ${who} play ${titleOf(n.game)}` }, "Watch"));
      break;
    case NotificationKind.YOUR_TURN:
      if (n.gameId) box.append(h("a", { class: "button small secondary", href: tableHash(n.gameId), "aria-label": `Go to your ${titleOf(n.game || gameOfId(n.gameId))} table: your turn` }, "Go to the table"));
      break;
  }
  return box;
}

function item(n: Notification): HTMLElement {
  const time = n.time ? new Date(Number(n.time.seconds) * 1000) : new Date();
  return h("li", { class: `notification kind-${n.kind}`, "data-id": n.notificationId },
    h("span", { class: "notify-text" }, describe(n)), " ",
    h("time", { class: "muted", datetime: time.toISOString() }, time.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })), " ",
    actions(n));
}

function redraw(): void {
  if (!els) return;
  const active = document.activeElement;
  const focused = active && els.list.contains(active) ? [active.closest("li")?.dataset.id, active.getAttribute("aria-label")] : null;
  clear(els.list);
  for (const n of shown) els.list.append(item(n));
  if (!shown.length) els.list.append(h("li", { class: "muted" }, "No notification yet."));
  if (focused) {
    // the same control again, or (answered: gone) its notification's first control, or the list's
    const li = [...els.list.children].find((el) => (el as HTMLElement).dataset.id === focused[0]);
    const same = [...(li?.querySelectorAll<HTMLElement>("[aria-label]") ?? [])].find((el) => el.getAttribute("aria-label") === focused[1]);
    (same ?? els.panel.querySelector<HTMLElement>("button, a"))?.focus();
  }
  els.count.textContent = unread.size ? String(unread.size) : "";
  els.count.hidden = !unread.size;
  els.button.setAttribute("aria-label", `Notifications: ${unread.size} unread`);
  // a toast's buttons follow the answer too
  for (const toast of els.toasts.querySelectorAll<HTMLElement>(".notify-toast")) {
    const n = shown.find((x) => x.notificationId === toast.dataset.id);
    const old = toast.querySelector(".notify-actions");
    if (n && old && done.has(n.challengeId)) old.replaceWith(actions(n));
  }
}

function dismiss(toast: HTMLElement): void {
  const focused = toast.contains(document.activeElement);
  toast.remove();
  if (focused) els?.button.focus();
}

function showToast(n: Notification): void {
  if (!els) return;
  const toast = h("div", { class: "notify-toast", "data-id": n.notificationId, role: "group", "aria-label": "New notification" },
    h("span", { class: "notify-text" }, describe(n)), " ", actions(n),
    h("button", { type: "button", class: "small secondary close", "aria-label": "Dismiss this notification", onclick: () => dismiss(toast) }, "×"));
  els.toasts.append(toast);
  while (els.toasts.children.length > 3) els.toasts.firstElementChild?.remove();
  // stays while it has the pointer or the focus
  const later = () => window.setTimeout(() => {
    if (toast.matches(":hover") || toast.contains(document.activeElement)) later();
    else toast.remove();
  }, n.kind === NotificationKind.CHALLENGE_RECEIVED || n.kind === NotificationKind.REMATCH_OFFERED ? TOAST_MS * 2 : TOAST_MS);
  later();
}

function onNotification(n: Notification): void {
  if (n.kind === NotificationKind.YOUR_TURN && lookingAt(n.gameId)) return;
  shown.unshift(n);
  for (const old of shown.splice(MAX_KEPT)) unread.delete(old.notificationId);
  if (els && els.panel.hidden) unread.add(n.notificationId); // an open list is seen at once
  showToast(n);
  redraw();
  window.dispatchEvent(new CustomEvent(NOTIFICATION_EVENT, { detail: n }));
}

/** "Your turn" at the game now on screen is old news: gone from the list and the toasts. */
function forgetTurns(): void {
  if (!els) return;
  const stale = shown.filter((n) => n.kind === NotificationKind.YOUR_TURN && lookingAt(n.gameId));
  if (!stale.length) return;
  for (const n of stale) {
    shown.splice(shown.indexOf(n), 1);
    unread.delete(n.notificationId);
    els.toasts.querySelector(`[data-id="${CSS.escape(n.notificationId)}"]`)?.remove();
  }
  redraw();
}

function toggle(open?: boolean): void {
  if (!els) return;
  const show = open ?? els.panel.hidden;
  els.panel.hidden = !show;
  els.button.setAttribute("aria-expanded", String(show));
  if (show) {
    unread.clear();
    redraw();
    (els.panel.querySelector("button, a") as HTMLElement | null)?.focus();
  }
}

function bell(): SVGElement {
  return s("svg", { class: "bell", viewBox: "0 0 24 24", width: 18, height: 18, "aria-hidden": "true", focusable: "false" },
    s("path", { d: "M12 3a6 6 0 0 0-6 6v4l-2 3h16l-2-3V9a6 6 0 0 0-6-6z", fill: "currentColor" }),
    s("path", { d: "M9.5 18a2.5 2.5 0 0 0 5 0z", fill: "currentColor" }));
}

function mount(): void {
  if (els) return;
  const count = h("span", { class: "notify-count", "aria-hidden": "true", hidden: true });
  const button = h("button", {
    type: "button", id: "notify-button", class: "secondary small notify-button", "aria-label": "Notifications: 0 unread",
    "aria-expanded": "false", "aria-controls": "notify-panel", onclick: () => toggle(),
  }, bell(), h("span", { class: "notify-label" }, "Notifications"), count);
  const list = h("ul", { class: "list notify-list", "aria-label": "Notifications, newest first" });
  const panel = h("section", { id: "notify-panel", class: "notify-panel card", role: "region", "aria-label": "Notifications", hidden: true },
    h("div", { class: "row notify-head" },
      h("h2", {}, "Notifications"),
      h("button", { type: "button", class: "small secondary", "aria-label": "Close the notifications", onclick: () => { toggle(false); button.focus(); } }, "Close")),
    list);
  const toasts = h("div", { id: "notify-toasts", class: "notify-toasts", role: "status", "aria-live": "polite", "aria-label": "New notifications" });
  const wrap = h("div", { id: "notify", class: "notify" }, button, panel);
  const header = document.querySelector("header.top");
  const account = document.getElementById("account");
  if (header && account) header.insertBefore(wrap, account);
  else document.body.prepend(wrap);
  document.body.append(toasts);
  els = { button, count, panel, list, toasts };
  redraw();
}

function unmount(): void {
  document.getElementById("notify")?.remove();
  document.getElementById("notify-toasts")?.remove();
  els = undefined;
}

/** The stream: from now on at first, then after the last id received; reopened with backoff
 * (0.5 s doubling to 30 s; back to 0.5 s once a stream opened). */
async function loop(signal: AbortSignal): Promise<void> {
  let delay = 500;
  const onHeader = () => {
    delay = 500;
    if (els) els.button.dataset.stream = "open";
  };
  while (!signal.aborted && api.session()) {
    const after = resumeAfter(lastId, since); // the first stream: "" (from now on)
    // this browser's clock, with a margin for its difference with the server's
    if (!since) since = idBefore(null, Date.now() - CLOCK_MARGIN_MS);
    const opened = Date.now();
    if (els) els.button.dataset.stream = "watching";
    try {
      for await (const n of lobby.watchNotifications({ afterId: after }, { headers: headers(), signal, onHeader })) {
        delay = 500;
        if (n.notificationId) {
          if (!isAfter(n.notificationId, lastId)) continue; // had it already
          lastId = n.notificationId;
        }
        onNotification(n);
      }
    } catch (e) {
      if (signal.aborted) return;
      console.debug("notifications dropped:", describeError(e));
    }
    if (els) els.button.dataset.stream = "retrying"; // watched again after `delay`
    if (Date.now() - opened > 30_000) delay = 500; // it was open a while: a new drop
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 30_000);
  }
}

/** Start (once per page load and session) or stop, after the session changed. */
function sync(): void {
  const s = api.session();
  if (!s) {
    abort?.abort();
    abort = undefined;
    shown.length = 0;
    unread.clear();
    lastId = "";
    since = "";
    done.clear();
    unmount();
    return;
  }
  mount();
  if (abort && !abort.signal.aborted) return;
  abort = new AbortController();
  void loop(abort.signal);
}

/** A challenge answered elsewhere on the page (the lobby's list): its buttons here go. */
export function markAnswered(challengeId: string, accept: boolean): void {
  if (done.has(challengeId)) return;
  done.set(challengeId, accept ? "Accepted." : "Declined.");
  redraw();
}

/** Called once by the app; the stream follows the session from then on. */
export function initNotifications(with_: NotifyDeps): void {
  deps = with_;
  let player = api.session()?.playerId;
  api.onSession((s) => {
    if (s?.playerId !== player) {
      player = s?.playerId;
      abort?.abort();
      abort = undefined;
      shown.length = 0;
      unread.clear();
      lastId = "";
    since = "";
      done.clear();
    }
    sync();
  });
  window.addEventListener("hashchange", forgetTurns);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && els && !els.panel.hidden) {
      toggle(false);
      els.button.focus();
    }
  });
  document.addEventListener("click", (e) => {
    if (!els || els.panel.hidden) return;
    // the path as dispatched: a button redrawn by its own click is still inside
    const path = e.composedPath();
    if (!path.includes(els.panel) && !path.includes(els.button)) toggle(false);
  });
  void api.ready().then(() => sync());
}
