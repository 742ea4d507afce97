'use strict';
// The game both scripts load: two players take turns, each move `inc` adds one to a counter,
// and the game ends after MOVES moves (env BGIO_MOVES). `client: false`: a client never runs a
// move itself, so what it sees after a move is the server's update; turn.maxMoves = 1 ends the
// turn with the move (no endTurn round trip).
const MOVES = Number(process.env.BGIO_MOVES || 200);

const CounterGame = {
  name: 'counter',
  minPlayers: 2,
  maxPlayers: 2,
  setup: () => ({ count: 0 }),
  turn: { minMoves: 1, maxMoves: 1 },
  moves: {
    inc: { move: ({ G }) => ({ count: G.count + 1 }), client: false },
  },
  endIf: ({ G }) => (G.count >= MOVES ? { draw: true } : undefined),
};

module.exports = { CounterGame, MOVES };
