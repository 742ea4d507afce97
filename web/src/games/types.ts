// The game-module interface: what the app asks of each game. The app (src/table.ts) owns the
// table: it logs in, calls GetView / LegalMoves / Play / Resign / Watch through the module's
// `service`, runs the clocks, names the seats and says the result. A module only draws its board
// and turns clicks into one of the legal moves.
//
// How a table uses a module:
//   1. `createClient(module.service, transport)`: every game service has the same methods
//      (GetView, LegalMoves, Play, Resign, Watch, TakeSeat) over tabletop.common.v1's requests.
//   2. After every update (a Watch message, or the answer to its own move) the table fetches
//      GetView for its seat and LegalMoves, then calls `render(ctx)` with them. `ctx.root` is the
//      board's element, emptied before each call: draw the board (SVG is preferred) into it.
//   3. `ctx.legal` are the seat's legal moves at the version shown (empty when it may not act, or
//      for a spectator; asked only while the seat is in to_act unless `movesOutOfTurn`);
//      highlight the targets they reach, and when a click (or Enter/Space on a focused target)
//      completes one of them call `ctx.play(move)` with that exact string. Never ask the player
//      to type notation. `ctx.state` survives between renders of the same table (e.g. a piece
//      picked but not yet moved); the module may keep anything in it.
//   4. Hidden information: draw only what `ctx.view` (the seat's own GetView) holds.
//   5. Every clickable thing is a real focusable control (a <button>, or an SVG element with
//      tabindex="0", role="button" and an aria-label naming the move or target) so the board can
//      be played with the keyboard; `ctx.lastMove` should be marked on the board.
//   6. Optional hooks: `options` (the GameOptions the lobby sends for a number of seats),
//      `describeEvent` (a move's events in words for the table's log), `describeResult` (the
//      game-specific part of the result, e.g. the score), `seatName` (e.g. "Dark"/"Light").
//
// Additive changes only: other modules are written against this file.
import type { DescService } from "@bufbuild/protobuf";
import type { GameStatus } from "../gen/tabletop/common/v1/common_pb";
import type { GameOptions } from "../gen/tabletop/lobby/v1/lobby_pb";

export type GameId = "esoloe" | "solo" | "solace" | "zoxso";

export interface LastMove {
  /** The seat that played it (unset for a table event). */
  seat?: number;
  /** The move's notation as the API gave it in the Watch envelope. */
  move: string;
  version: bigint;
}

export interface BoardContext {
  /** Where to draw: emptied by the table before every render. */
  root: HTMLElement;
  /** The game's GetViewResponse.view message for this seat (or the public view): cast it to the
   * module's own generated `View` type. */
  view: unknown;
  /** The game's status (seats, to_act, finished, result, clocks) at this view's version. */
  status: GameStatus;
  /** The seat this page plays, or undefined for a spectator. */
  seat: number | undefined;
  /** This seat's legal moves now (LegalMoves); empty when it may not act. */
  legal: string[];
  /** The last move played, to mark on the board. */
  lastMove: LastMove | undefined;
  /** The game's `events` of the last update (the module's generated Event messages). */
  events: unknown[];
  /** A seat's display name ("ann", "bot-greedy-1a2b", or the module's seatName). */
  names: (seat: number) => string;
  /** Send one of `legal` (exactly as given). The table re-renders when it is played. */
  play: (move: string) => void;
  /** Draw again with the same data (after a change of `state`, e.g. a piece picked). */
  redraw: () => void;
  /** The module's own memory for this table, kept between renders; starts as {}. */
  state: Record<string, unknown>;
  /** True while a move of this page is on its way: draw targets inactive. */
  busy: boolean;
}

export interface GameModule {
  id: GameId;
  /** The game's name as shown: "e-SOLO-e". */
  title: string;
  /** One line about the game, for the lobby. */
  blurb: string;
  /** The generated service descriptor (EsoloeService...). */
  service: DescService;
  /** True when a seat may have legal moves while not in the status's to_act (Solo's jump-ins,
   * which to_act never shows: they are secret): the table then asks LegalMoves for its seat
   * after every update, whoever is to move. */
  movesOutOfTurn?: boolean;
  /** Numbers of seats the lobby may ask for. */
  seats: { min: number; max: number; default: number };
  /** The options to send to PlayAgainstBots / FindMatch / challenges for a number of seats. */
  options?(seats: number): GameOptions;
  /** Draw the board (see above). */
  render(ctx: BoardContext): void;
  /** A seat's role in words when the game has one ("Dark", "Light"); else the player's name. */
  seatName?(seat: number): string | undefined;
  /** The events of one update in words for the table's log (one line each). */
  describeEvent?(event: unknown, names: (seat: number) => string): string | undefined;
  /** The game-specific part of the result in words (e.g. "by 3 points"), from the final
   * status and the last view. */
  describeResult?(status: GameStatus, view: unknown, names: (seat: number) => string): string;
}
