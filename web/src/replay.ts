// An archived game stepped through (#/replay/<game>/<id>[/<move>]): GetArchivedGame for the seats,
// moves and result, GetArchivedView for the public view at each version, drawn by the game's own
// module (no legal moves, no seat). First/back/forward/last, the arrow keys and Home/End; the
// move list beside the board, the current move marked; the address keeps the move.
import { create, type DescMessage } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { lobby, headers, describeError } from "./api";
import { h, clear } from "./dom";
import { GameStatusSchema, type GameStatus } from "./gen/tabletop/common/v1/common_pb";
import type { ArchivedGame, ArchivedView } from "./gen/tabletop/lobby/v1/lobby_pb";
import type { BoardContext, GameModule } from "./games/types";
import { resultWords } from "./result";
import { playerLink, replayHash } from "./player";

/** The game's View message: the `view` field of its service's GetView answer. */
function viewSchema(module: GameModule): DescMessage | undefined {
  const getView = module.service.methods.find((m) => m.name === "GetView");
  const field = getView?.output.fields.find((f) => f.localName === "view");
  return field?.fieldKind === "message" ? field.message : undefined;
}

export class Replay {
  private abort = new AbortController();
  private game: ArchivedGame | undefined;
  private last = 0;
  private version = 0;
  private views = new Map<number, Promise<ArchivedView>>();
  private shown = 0;
  private state: Record<string, unknown> = {};
  private els: { board: HTMLElement; moves: HTMLOListElement; result: HTMLElement; players: HTMLElement; at: HTMLElement; controls: HTMLElement };
  private keys = (e: KeyboardEvent) => this.onKey(e);

  constructor(private root: HTMLElement, private module: GameModule, private gameId: string, private wanted: number | undefined) {
    clear(root);
    const button = (label: string, text: string, go: () => number) =>
      h("button", { type: "button", class: "secondary", "aria-label": label, onclick: () => void this.show(go()) }, text);
    this.els = {
      players: h("div", { class: "players", "aria-label": "Players" }),
      result: h("p", { class: "result-text replay-result", role: "status" }),
      at: h("p", { class: "turn-line", "aria-live": "polite" }),
      board: h("div", { class: "board-wrap", "data-version": "" }),
      moves: h("ol", { class: "log replay-moves", "aria-label": "Moves" }),
      controls: h("div", { class: "row replay-controls", role: "group", "aria-label": "Step through the game" },
        button("First position", "« First", () => 0),
        button("Back one move", "◀ Back", () => this.version - 1),
        button("Forward one move", "Forward ▶", () => this.version + 1),
        button("Last position", "Last »", () => this.last)),
    };
    root.append(h("section", { class: `table replay game-${module.id}`, "aria-label": `${module.title} replay` },
      h("h1", {}, `${module.title} replay`, h("span", { class: "game-id" }, ` ${gameId}`)),
      this.els.players, this.els.result, this.els.controls, this.els.at,
      h("div", { class: "replay-main" }, this.els.board, h("div", { class: "replay-side" }, h("h2", {}, "Moves"), this.els.moves)),
      h("p", {}, h("a", { class: "button secondary", href: "#/", "aria-label": "Back to the lobby" }, "Lobby"))));
    document.addEventListener("keydown", this.keys);
  }

  stop(): void {
    this.abort.abort();
    document.removeEventListener("keydown", this.keys);
  }

  private opts(): object {
    return { headers: headers(), signal: this.abort.signal };
  }

  async start(): Promise<void> {
    try {
      this.game = await lobby.getArchivedGame({ gameId: this.gameId }, this.opts());
    } catch (e) {
      this.els.at.textContent = `This game cannot be replayed: ${describeError(e)}`;
      return;
    }
    const g = this.game;
    this.last = g.moves.reduce((v, m) => Math.max(v, Number(m.version)), 0);
    g.seats.forEach((seat, i) => {
      const rating = seat.rating !== undefined ? ` ${seat.rating}${seat.ratingAfter !== undefined ? ` → ${seat.ratingAfter}` : ""}` : "";
      this.els.players.append(h("div", { class: `player seat${i}` }, h("span", { class: "swatch", "aria-hidden": "true" }),
        h("span", { class: "name" }, playerLink(seat.playerId, seat.name, this.names(i)), h("small", {}, rating))));
    });
    this.drawMoves();
    try {
      const final = await this.unpacked(this.last);
      this.els.result.textContent = resultWords({ module: this.module, status: this.status(this.last, final.av), view: final.view, names: this.names, end: g.end });
    } catch (e) {
      this.els.result.textContent = describeError(e);
    }
    const start = this.wanted === undefined ? this.last : this.wanted;
    await this.show(start);
  }

  private names = (seat: number): string => {
    const role = this.module.seatName?.(seat);
    const name = this.game?.seats[seat]?.name || `seat ${seat + 1}`;
    return role ? `${role} (${name})` : name;
  };

  private fetch(version: number): Promise<ArchivedView> {
    let p = this.views.get(version);
    if (!p) {
      p = lobby.getArchivedView({ gameId: this.gameId, version: BigInt(version) }, this.opts());
      p.catch(() => this.views.delete(version));
      this.views.set(version, p);
    }
    return p;
  }

  private async unpacked(version: number): Promise<{ av: ArchivedView; view: unknown }> {
    const av = await this.fetch(version);
    const schema = viewSchema(this.module);
    const view = av.view && schema ? anyUnpack(av.view, schema) : undefined;
    return { av, view };
  }

  private status(version: number, av: ArchivedView): GameStatus {
    const g = this.game!;
    return create(GameStatusSchema, {
      gameId: g.gameId, game: g.game, version: BigInt(version), toAct: av.toAct, finished: av.finished,
      result: av.finished ? g.result : undefined, rulesEdition: g.rulesEdition, rated: g.rated,
      seats: g.seats.map((s) => ({ index: s.index, playerId: s.playerId, name: s.name, bot: s.bot, rating: s.rating })),
    });
  }

  private moveText(i: number): string {
    const m = this.game!.moves[i];
    return m.seat !== undefined ? `${this.names(m.seat)}: ${m.move}` : m.move;
  }

  private drawMoves(): void {
    const list = this.els.moves;
    clear(list);
    list.append(h("li", { value: 0 }, h("button", { type: "button", class: "link", "data-version": 0, onclick: () => void this.show(0) }, "Start")));
    this.game!.moves.forEach((m, i) => {
      const v = Number(m.version);
      list.append(h("li", { value: v }, h("button", { type: "button", class: "link", "data-version": v, "aria-label": `Move ${v}: ${this.moveText(i)}`, onclick: () => void this.show(v) }, this.moveText(i))));
    });
  }

  async show(version: number): Promise<void> {
    if (!this.game) return;
    version = Math.max(0, Math.min(this.last, Math.round(version)));
    this.version = version;
    const mine = ++this.shown;
    let got;
    try {
      got = await this.unpacked(version);
    } catch (e) {
      if (mine === this.shown) this.els.at.textContent = describeError(e);
      return;
    }
    if (mine !== this.shown) return;
    const status = this.status(version, got.av);
    const moveIndex = this.game.moves.findIndex((m) => Number(m.version) === version);
    const m = moveIndex >= 0 ? this.game.moves[moveIndex] : undefined;
    const ctx: BoardContext = {
      root: this.els.board, view: got.view, status, seat: undefined, legal: [],
      lastMove: m ? { seat: m.seat, move: m.move, version: m.version } : undefined,
      events: [], names: this.names, play: () => undefined, redraw: () => this.redraw(ctx), state: this.state, busy: false,
    };
    this.redraw(ctx);
    this.els.at.textContent = version === 0 ? `The start (move 0 of ${this.last}).` : `Move ${version} of ${this.last}: ${this.moveText(moveIndex)}.`;
    for (const b of this.els.moves.querySelectorAll<HTMLElement>("button[data-version]")) {
      const current = Number(b.dataset.version) === version;
      b.classList.toggle("current", current);
      if (current) {
        b.setAttribute("aria-current", "step");
        b.scrollIntoView({ block: "nearest" });
      } else b.removeAttribute("aria-current");
    }
    const [first, back, forward, lastButton] = this.els.controls.querySelectorAll("button");
    first.disabled = back.disabled = version === 0;
    forward.disabled = lastButton.disabled = version === this.last;
    const hash = replayHash(this.module.id, this.gameId, version);
    if (location.hash !== hash) history.replaceState(null, "", hash);
    // the next position is likely wanted next
    if (version < this.last) void this.fetch(version + 1).catch(() => undefined);
  }

  private redraw(ctx: BoardContext): void {
    clear(this.els.board);
    this.module.render(ctx);
    this.els.board.setAttribute("data-version", String(ctx.status.version));
  }

  private onKey(e: KeyboardEvent): void {
    const target = e.target as HTMLElement | null;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
    const next = e.key === "ArrowLeft" || e.key === "ArrowUp" ? this.version - 1
      : e.key === "ArrowRight" || e.key === "ArrowDown" ? this.version + 1
      : e.key === "Home" ? 0 : e.key === "End" ? this.last : undefined;
    if (next === undefined || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    void this.show(next);
  }
}
