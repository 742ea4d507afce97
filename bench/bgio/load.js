'use strict';
// Keeps M matches of the counter game in play on a boardgame.io server, as players would: each
// match is created and joined through the Lobby API, then played by two socket.io clients (one
// per seat), and the next one starts when it ends. A move is timed from the `inc` call to the
// server's update reaching the client that moved.
// After WARMUP seconds it prints `START`, after SECONDS more `END` (the driver reads the
// processes' CPU then), then one JSON line: moves/s, p50/p99 ms, moves and seconds counted
// between START and END, the moves in each tenth of that window (`bins`) and every move's
// latency (ms, sorted).
// Usage: NODE_PATH=.bench/bgio/node_modules BGIO_MOVES=200 node bench/bgio/load.js \
//          http://127.0.0.1:PORT M WARMUP SECONDS
const { performance } = require('perf_hooks');
const { Client, LobbyClient } = require('boardgame.io/client');
const { SocketIO } = require('boardgame.io/multiplayer');
const { CounterGame, MOVES } = require('./game');

const [server, matches, warmup, seconds] = process.argv.slice(2);
const M = Number(matches);
const begin = performance.now();
const start = begin + Number(warmup) * 1000;
const end = start + Number(seconds) * 1000;
const MOVE_TIMEOUT_MS = 10000;

const lobby = new LobbyClient({ server });
const latencies = []; // ms, moves answered between START and END
const bins = new Array(10).fill(0); // moves answered in each tenth of the window
let stopping = false;

function fail(why) {
  process.stderr.write(`load: ${why}\n`);
  process.exit(1);
}

// Plays one match to its end (or until END): resolves when both clients have stopped.
async function playMatch() {
  const { matchID } = await lobby.createMatch(CounterGame.name, { numPlayers: 2 });
  const clients = [];
  for (const playerID of ['0', '1']) {
    const { playerCredentials } = await lobby.joinMatch(CounterGame.name, matchID, {
      playerID,
      playerName: `p${playerID}`,
    });
    clients.push(Client({
      game: CounterGame,
      multiplayer: SocketIO({ server, socketOpts: { transports: ['websocket'], forceNew: true } }),
      matchID,
      playerID,
      credentials: playerCredentials,
      debug: false,
    }));
  }
  return new Promise((resolve) => {
    let pending = null; // the move in flight: { client, stateID, t0, timer }
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      for (const client of clients) client.stop();
      resolve();
    };
    // Called on every update either client sees: confirm the move in flight, then let the
    // seat to move make the next one.
    const step = () => {
      if (done) return;
      if (pending) {
        const state = pending.client.getState();
        if (!state || state._stateID <= pending.stateID) return;
        const now = performance.now();
        clearTimeout(pending.timer);
        if (now >= start && now < end) {
          latencies.push(now - pending.t0);
          bins[Math.floor((10 * (now - start)) / (end - start))] += 1;
        }
        pending = null;
      }
      const states = clients.map((client) => client.getState());
      if (states.some((state) => !state)) return; // a client has not synced yet
      // (The last move's update may not carry ctx.gameover yet: the count says it.)
      if (states.some((state) => state.G.count >= MOVES) || stopping) return finish();
      const client = clients[Number(states[0].ctx.currentPlayer)];
      const state = client.getState();
      if (state.ctx.currentPlayer !== client.playerID) return; // its update is on the way
      pending = { client, stateID: state._stateID, t0: performance.now(), timer: null };
      pending.timer = setTimeout(() => fail('a move got no update in time'), MOVE_TIMEOUT_MS);
      client.moves.inc();
    };
    for (const client of clients) {
      client.subscribe(step);
      client.start();
    }
  });
}

async function slot() {
  while (!stopping) await playMatch();
}

setTimeout(() => process.stdout.write('START\n'), start - performance.now());
setTimeout(() => {
  process.stdout.write('END\n');
  stopping = true;
}, end - performance.now());
Promise.all(Array.from({ length: M }, slot)).then(() => {
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  const s = (end - start) / 1000;
  process.stdout.write(JSON.stringify({
    moves: latencies.length,
    seconds: s,
    moves_per_s: latencies.length / s,
    p50_ms: at(0.5),
    p99_ms: at(0.99),
    bins,
    latencies_ms: latencies.map((ms) => Math.round(ms * 1000) / 1000),
  }) + '\n', () => process.exit(0)); // exit once a pipe has taken it all
}, (error) => fail(error.stack || error));
