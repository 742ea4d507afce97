// One game at one seat (or watched): GetView + LegalMoves after every update, the Watch stream
// (resumed from the last version after a drop), moves sent with Play, clocks, the result in words.
import { createClient, ConnectError, Code } from "@connectrpc/connect";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { EventEnvelope, GameStatus, LegalMovesResponse } from "./gen/tabletop/common/v1/common_pb";
import { TableEvent_Kind, Timeout } from "./gen/tabletop/common/v1/common_pb";
import { transport, headers, lobby, session, describeError } from "./api";
import { h, clear } from "./dom";
import { formatClock, remaining } from "./clock";
import { resultWords } from "./result";
import { playerLink } from "./player";
import type { BoardContext, GameModule, LastMove } from "./games/types";

interface Update {
  envelope?: EventEnvelope;
  status?: GameStatus;
  events: unknown[];
}

interface GameClient {
  getView(req: { gameId: string; public?: boolean }, opts: object): Promise<{ status?: GameStatus; seat?: number; view?: unknown }>;
  legalMoves(req: { gameId: string; seat?: number }, opts: object): Promise<LegalMovesResponse>;
  play(req: { gameId: string; move: string; expectedVersion?: bigint; requestId: string }, opts: object): Promise<{ status?: GameStatus; events: unknown[] }>;
  resign(req: { gameId: string; requestId: string }, opts: object): Promise<{ status?: GameStatus; events: unknown[] }>;
  watch(req: { gameId: string; fromVersion: bigint; public?: boolean }, opts: object): AsyncIterable<Update>;
}

function requestId(): string {
  return crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(16).slice(2)}`;
}

export class Table {
  private client: GameClient;
  private abort = new AbortController();
  private status: GameStatus | undefined;
  private view: unknown;
  private seat: number | undefined;
  private spectator = false;
  private legal: string[] = [];
  private lastMove: LastMove | undefined;
  private events: unknown[] = [];
  private state: Record<string, unknown> = {};
  private busy = false;
  private refreshing = 0;
  private ticker: number | undefined;
  private ratingText = "";
  private lastEnd: string | undefined;
  private archived = false;
  private els: {
    board: HTMLElement; players: HTMLElement; turn: HTMLElement; result: HTMLElement; log: HTMLElement; actions: HTMLElement;
  };

  constructor(private root: HTMLElement, private module: GameModule, private gameId: string, private watchOnly = false) {
    this.client = createClient(module.service, transport) as unknown as GameClient;
    clear(root);
    this.els = {
      players: h("div", { class: "players", "aria-label": "Players and clocks" }),
      turn: h("p", { class: "turn-line", role: "status", "aria-live": "polite" }),
      board: h("div", { class: "board-wrap", "data-version": "" }),
      result: h("div", { class: "result", role: "status", "aria-live": "polite", hidden: true }),
      actions: h("div", { class: "actions" }),
      log: h("ol", { class: "log", "aria-label": "Moves so far", "aria-live": "polite" }),
    };
    root.append(
      h("section", { class: `table game-${module.id}`, "aria-label": `${module.title} table` },
        h("h1", {}, module.title, h("span", { class: "game-id" }, ` ${gameId}`)),
        this.els.players, this.els.turn, this.els.result, this.els.board, this.els.actions,
        h("details", { class: "log-box" }, h("summary", {}, "Moves"), this.els.log)),
    );
    this.els.board.addEventListener("keydown", (e) => this.arrowKeys(e));
  }

  async start(): Promise<void> {
    try {
      await this.load();
    } catch (e) {
      this.els.turn.textContent = `This game cannot be shown: ${describeError(e)}`;
      return;
    }
    this.ticker = window.setInterval(() => this.drawClocks(), 200);
    void this.follow();
  }

  stop(): void {
    this.abort.abort();
    window.clearInterval(this.ticker);
  }

  private opts(): object {
    return { headers: headers(), signal: this.abort.signal };
  }

  private async load(): Promise<void> {
    let reply;
    if (!this.watchOnly) {
      try {
        reply = await this.client.getView({ gameId: this.gameId }, this.opts());
      } catch (e) {
        if (!(e instanceof ConnectError) || e.code === Code.Unauthenticated || e.code === Code.NotFound) throw e;
      }
    }
    if (!reply || reply.seat === undefined) {
      this.spectator = true;
      reply = await this.client.getView({ gameId: this.gameId, public: true }, this.opts());
    }
    this.seat = this.spectator ? undefined : reply.seat;
    this.view = reply.view;
    this.status = reply.status;
    this.legal = await this.fetchLegal();
    this.draw();
  }

  /** The seat's legal moves at `status`'s version (the view's), when the seat may act: in to_act,
   * or at any time in a game whose module has moves out of turn. An answer for another version
   * is dropped: the update that moved the game on asks again. */
  private async fetchLegal(status: GameStatus | undefined = this.status): Promise<string[]> {
    if (this.spectator || this.seat === undefined || !status || status.finished) return [];
    if (!this.module.movesOutOfTurn && !status.toAct.includes(this.seat)) return [];
    try {
      const reply = await this.client.legalMoves({ gameId: this.gameId, seat: this.seat }, this.opts());
      return reply.version === status.version ? reply.moves : [];
    } catch {
      return [];
    }
  }

  /** The view and legal moves again (after an update); only the newest answer is drawn. */
  private async refresh(): Promise<void> {
    const mine = ++this.refreshing;
    try {
      const reply = await this.client.getView({ gameId: this.gameId, public: this.spectator }, this.opts());
      const legal = await this.fetchLegal(reply.status);
      if (mine !== this.refreshing) return;
      if (this.status && reply.status && reply.status.version < this.status.version) return;
      this.view = reply.view;
      this.status = reply.status;
      this.legal = reply.status?.finished ? [] : legal;
      this.draw();
    } catch (e) {
      if (!this.abort.signal.aborted) this.toast(describeError(e));
    }
  }

  private async follow(): Promise<void> {
    let delay = 250;
    let first = true;
    while (!this.abort.signal.aborted && this.status && !this.status.finished) {
      try {
        // the first Watch replays the game so far (the moves' log, the last move marked);
        // after a drop it goes on from the version after the last one seen
        const from = first ? 1n : (this.status?.version ?? 0n) + 1n;
        first = false;
        for await (const update of this.client.watch({ gameId: this.gameId, fromVersion: from, public: this.spectator }, this.opts())) {
          delay = 250;
          this.onUpdate(update);
          if (update.status?.finished) break;
        }
      } catch (e) {
        if (this.abort.signal.aborted) return;
        if (e instanceof ConnectError && (e.code === Code.NotFound || e.code === Code.PermissionDenied)) {
          this.toast(describeError(e));
          return;
        }
      }
      if (this.status?.finished) break;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5000);
    }
    if (this.status?.finished) await this.finish();
  }

  private onUpdate(update: Update): void {
    const env = update.envelope;
    // the moves before the view's version (the stream starts at the first): the log and the last move
    if (update.status && this.status && update.status.version <= this.status.version && !update.status.finished) {
      if (env && env.version > (this.lastMove?.version ?? -1n)) {
        if (env.move && env.move !== "take_seat") this.lastMove = { seat: env.actor, move: env.move, version: env.version };
        this.logUpdate(update);
        if (env.version === this.status.version) {
          this.events = update.events;
          this.draw();
        }
      }
      return;
    }
    if (env) {
      if (env.move && env.move !== "take_seat") this.lastMove = { seat: env.actor, move: env.move, version: env.version };
      this.logUpdate(update);
    }
    this.events = update.events;
    const before = this.status;
    this.status = update.status ?? this.status;
    if (!before || !this.status || this.status.version !== before.version || this.status.finished) {
      this.state.picked = [];
      this.legal = [];
      void this.refresh();
    }
  }

  private names = (seat: number): string => {
    const role = this.module.seatName?.(seat);
    if (seat === this.seat) return role ? `you (${role})` : "you";
    const name = this.status?.seats[seat]?.name || `seat ${seat + 1}`;
    return role ? `${role} (${name})` : name;
  };

  private logUpdate(update: Update): void {
    const env = update.envelope!;
    const lines: string[] = [];
    const te = env.tableEvent;
    if (te && te.kind !== TableEvent_Kind.UNSPECIFIED) {
      lines.push(this.tableEventText(te.kind, te.seat, te.outcome));
    } else {
      for (const event of update.events) {
        const text = this.module.describeEvent?.(event, this.names);
        if (text) lines.push(text);
      }
      if (!lines.length && env.actor !== undefined && env.move) lines.push(`${this.names(env.actor)} played ${env.move}`);
    }
    if (lines.length) {
      this.els.log.append(h("li", {}, lines.join("; ")));
      while (this.els.log.children.length > 200) this.els.log.firstElementChild?.remove();
    }
  }

  private tableEventText(kind: TableEvent_Kind, seat: number | undefined, outcome: Timeout): string {
    const who = seat !== undefined ? this.names(seat) : "a player";
    switch (kind) {
      case TableEvent_Kind.ABORTED: return "Nobody moved in time: the game is aborted (no result, nobody loses).";
      case TableEvent_Kind.STOPPED: return "The game was stopped (no result, nobody loses).";
      case TableEvent_Kind.SEAT_TAKEN_BACK: return `${who} took the seat back from the bot.`;
      case TableEvent_Kind.TIMEOUT:
        return outcome === Timeout.BOT ? `${who} ran out of time; a bot plays that seat from now on.` : `${who} ran out of time and forfeits.`;
      default: return "";
    }
  }

  private play = (move: string): void => {
    if (this.busy || !this.status) return;
    this.busy = true;
    this.draw();
    const version = this.status.version;
    this.client.play({ gameId: this.gameId, move, expectedVersion: version, requestId: requestId() }, this.opts())
      .then((reply) => {
        this.busy = false;
        if (reply.status && this.status && reply.status.version > this.status.version) {
          this.events = reply.events;
          this.status = reply.status;
          this.legal = []; // those of the version before: the refresh asks again
          this.state.picked = [];
        }
        void this.refresh();
      })
      .catch((e) => {
        this.busy = false;
        this.toast(describeError(e));
        void this.refresh();
      });
  };

  private async resign(): Promise<void> {
    if (!window.confirm("Resign this game?")) return;
    try {
      const reply = await this.client.resign({ gameId: this.gameId, requestId: requestId() }, this.opts());
      if (reply.status) this.status = reply.status;
      void this.refresh();
    } catch (e) {
      this.toast(describeError(e));
    }
  }

  private draw(): void {
    if (!this.status) return;
    const status = this.status;
    const ctx: BoardContext = {
      root: this.els.board, view: this.view, status, seat: this.seat, legal: this.busy ? [] : this.legal,
      lastMove: this.lastMove, events: this.events, names: this.names, play: this.play,
      redraw: () => this.draw(), state: this.state, busy: this.busy,
    };
    const focused = document.activeElement?.getAttribute("data-target");
    clear(this.els.board);
    this.module.render(ctx);
    this.els.board.setAttribute("data-version", String(status.version));
    this.els.board.setAttribute("data-legal", String(ctx.legal.length));
    if (focused) (this.els.board.querySelector(`[data-target="${CSS.escape(focused)}"]`) as HTMLElement | SVGElement | null)?.focus();
    this.drawPlayers();
    this.drawTurn();
    this.drawActions();
    if (status.finished) void this.finish();
  }

  private drawPlayers(): void {
    const status = this.status!;
    clear(this.els.players);
    status.seats.forEach((seat, i) => {
      const acting = !status.finished && status.toAct.includes(i);
      const rating = seat.rating !== undefined ? ` ${seat.rating}${seat.provisional ? "?" : ""}` : "";
      this.els.players.append(h("div", { class: `player seat${i}${acting ? " acting" : ""}${i === this.seat ? " me" : ""}` },
        h("span", { class: "swatch", "aria-hidden": "true" }),
        h("span", { class: "name" }, playerLink(seat.playerId, seat.name, this.names(i)), h("small", {}, rating)),
        h("span", { class: "clock", "data-seat": i, "aria-label": `${this.names(i)}'s clock` })));
    });
    this.drawClocks();
  }

  private drawClocks(): void {
    const status = this.status;
    if (!status) return;
    const now = Date.now();
    for (const el of this.els.players.querySelectorAll<HTMLElement>(".clock")) {
      const seat = Number(el.dataset.seat);
      const clock = status.clocks.find((c) => c.seat === seat);
      let text = "";
      if (clock && !status.finished) {
        const running = clock.running;
        if (clock.remainingMs !== undefined) {
          const since = clock.since ? Number(timestampMs(clock.since)) : now;
          text = formatClock(remaining(Number(clock.remainingMs), since, running, now));
        } else if (clock.deadline && running) {
          text = formatClock(Number(timestampMs(clock.deadline)) - now);
        }
        el.classList.toggle("running", running);
      } else if (clock && clock.remainingMs !== undefined) {
        text = formatClock(Number(clock.remainingMs));
        el.classList.remove("running");
      }
      if (el.textContent !== text) el.textContent = text;
    }
  }

  private drawTurn(): void {
    const status = this.status!;
    let text: string;
    if (status.finished) text = "The game is over.";
    else if (this.busy) text = "Sending your move…";
    else if (this.spectator) text = `Watching: ${status.toAct.map(this.names).join(", ")} to move.`;
    else if (this.seat !== undefined && status.toAct.includes(this.seat)) {
      text = this.legal.length ? "Your turn: pick a highlighted target on the board." : "Your turn.";
    } else text = `Waiting for ${status.toAct.map(this.names).join(", ") || "the game"}…`;
    this.els.turn.textContent = text;
  }

  private drawActions(): void {
    const status = this.status!;
    clear(this.els.actions);
    if (!status.finished && !this.spectator && this.seat !== undefined) {
      this.els.actions.append(h("button", { type: "button", class: "secondary", "aria-label": "Resign this game", onclick: () => void this.resign() }, "Resign"));
    }
    this.els.actions.append(h("a", { class: "button secondary", href: "#/", "aria-label": "Back to the lobby" }, "Lobby"));
  }

  private resultText(): string {
    return resultWords({ module: this.module, status: this.status!, view: this.view, names: this.names, seat: this.seat, events: this.events });
  }

  private async finish(): Promise<void> {
    const status = this.status!;
    const key = String(status.version);
    if (this.lastEnd === key) return;
    this.lastEnd = key;
    window.clearInterval(this.ticker);
    this.drawClocks();
    const show = () => {
      clear(this.els.result);
      this.els.result.hidden = false;
      this.els.result.append(h("p", { class: "result-text" }, this.resultText()));
      if (this.ratingText) this.els.result.append(h("p", { class: "rating" }, this.ratingText));
      if (this.archived) this.els.result.append(h("p", {}, h("a", { class: "button secondary replay-link", href: `#/replay/${this.module.id}/${this.gameId}`, "aria-label": "Replay this game" }, "Replay")));
    };
    show();
    void this.whenArchived(show);
    if (!status.rated) return;
    // counted a moment after the end (the ratings consumer): asked again for up to a minute
    for (let i = 0; i < 60 && !this.abort.signal.aborted; i++) {
      try {
        const change = await lobby.getRatingChange({ gameId: this.gameId }, this.opts());
        if (change.counted) {
          const me = session()?.playerId;
          this.ratingText = change.changes.map((c) => {
            const diff = c.after - c.before;
            const who = c.playerId === me ? "Your rating" : `${this.names(c.seat)}'s rating`;
            return `${who}: ${c.before} → ${c.after} (${diff >= 0 ? "+" : ""}${diff})`;
          }).join("; ");
          show();
          return;
        }
      } catch {
        return;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /** The "Replay" link once the archiver has the game (a moment after its end; asked for up to
   * a minute). */
  private async whenArchived(show: () => void): Promise<void> {
    for (let i = 0; i < 60 && !this.abort.signal.aborted && !this.archived; i++) {
      try {
        await lobby.getArchivedGame({ gameId: this.gameId }, this.opts());
        this.archived = true;
        show();
        return;
      } catch {
        // not archived yet
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /** Arrow keys move the focus between the board's targets; Enter/Space press them. */
  private arrowKeys(e: KeyboardEvent): void {
    if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(e.key)) return;
    const targets = [...this.els.board.querySelectorAll<HTMLElement>("[data-target]")];
    if (!targets.length) return;
    const i = targets.indexOf(document.activeElement as HTMLElement);
    const step = e.key === "ArrowLeft" || e.key === "ArrowUp" ? -1 : 1;
    const next = targets[(i + step + targets.length) % targets.length] ?? targets[0];
    next.focus();
    e.preventDefault();
  }

  private toast(text: string): void {
    const el = document.getElementById("toast");
    if (!el) return;
    el.textContent = text;
    el.classList.add("show");
    window.setTimeout(() => el.classList.remove("show"), 4000);
  }
}
