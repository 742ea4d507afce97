#!/usr/bin/env node
// A complete minimal tabletop client in Node.js, written from the protos alone (docs/api.md
// walks through it): log in as a guest, start a game against a bot, follow it with Watch, and
// on every version ask for our legal moves and play one of them, until the game ends. After the
// login, every call goes on one player session (tabletop.session.v1): one stream that carries
// the calls in and their answers and the game's updates out.
//
//   npm ci && node play.js [esoloe|solo|solace|zoxso] [--level random|greedy|strong|expert]
//                          [--options '{"players": 2, "mode": "MODE_ROUNDS", "rounds": 1}']
//
// The gateway's address comes from TABLETOP_GATEWAY (default 127.0.0.1:50050). With
// TABLETOP_CA set to a CA certificate file, the connection uses TLS (TABLETOP_SERVER_NAME: the
// name in the gateway's certificate, when it is not the address called).
'use strict';

const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobuf = require('protobufjs');

const PROTO_DIRS = [
  path.resolve(__dirname, '../../proto'),
  path.resolve(__dirname, '../../proto/third_party'),
];
const SERVICES = {
  esoloe: 'EsoloeService', solo: 'SoloService', solace: 'SolaceService', zoxso: 'ZoxsoService',
};

const args = process.argv.slice(2);
const game = args.find((a) => SERVICES[a]) || 'esoloe';
const levelAt = args.indexOf('--level');
const level = levelAt >= 0 ? args[levelAt + 1] : 'random';
const optionsAt = args.indexOf('--options');
const given = optionsAt >= 0 ? JSON.parse(args[optionsAt + 1]) : undefined;
// A program needs no time to react: in Solo, ask the bots not to wait for us after each move
// (the table's jump-in window, which gives a person 2.5 s by default; docs/api.md).
const options = game === 'solo'
  ? { solo: { jump_in_window_ms: 0, ...given } }
  : given && { [game]: given };
const target = process.env.TABLETOP_GATEWAY || '127.0.0.1:50050';

// Services and messages, from the same .proto files the server is built from. keepCase keeps
// the field names as the protos write them (game_id, not gameId); int64 fields as numbers.
const PROTOS = [
  `tabletop/${game}/v1/${game}.proto`,
  'tabletop/lobby/v1/lobby.proto',
  'tabletop/session/v1/session.proto',
];
const definition = protoLoader.loadSync(
  PROTOS,
  { includeDirs: PROTO_DIRS, keepCase: true, longs: Number, enums: String, defaults: true,
    oneofs: true },
);
const api = grpc.loadPackageDefinition(definition).tabletop;

// Error details: every refusal carries a google.rpc.Status in the `grpc-status-details-bin`
// trailer, holding a google.rpc.ErrorInfo whose `reason` never changes (docs/api.md, Errors).
const rpcTypes = new protobuf.Root();
rpcTypes.resolvePath = (origin, file) => {
  for (const dir of PROTO_DIRS) {
    const candidate = path.join(dir, file);
    if (fs.existsSync(candidate)) return candidate;
  }
  return protobuf.util.path.resolve(origin, file);
};
rpcTypes.loadSync(['google/rpc/status.proto', 'google/rpc/error_details.proto']);
const Status = rpcTypes.lookupType('google.rpc.Status');
const ErrorInfo = rpcTypes.lookupType('google.rpc.ErrorInfo');

function errorInfo(error) {
  const blobs = (error.metadata && error.metadata.get('grpc-status-details-bin')) || [];
  for (const blob of blobs) {
    for (const detail of Status.decode(blob).details) {
      if (detail.type_url.endsWith('/google.rpc.ErrorInfo')) {
        const info = ErrorInfo.decode(detail.value);
        return { reason: info.reason, metadata: info.metadata || {} };
      }
    }
  }
  return { reason: '', metadata: {} };
}

const credentials = process.env.TABLETOP_CA
  ? grpc.credentials.createSsl(fs.readFileSync(process.env.TABLETOP_CA))
  : grpc.credentials.createInsecure();
const channelOptions = process.env.TABLETOP_SERVER_NAME
  ? { 'grpc.ssl_target_name_override': process.env.TABLETOP_SERVER_NAME }
  : {};
const auth = new api.lobby.v1.AuthService(target, credentials, channelOptions);
const LOBBY = 'tabletop.lobby.v1.LobbyService';
const GAME = `tabletop.${game}.v1.${SERVICES[game]}`;

function unary(client, method, request, metadata) {
  return new Promise((resolve, reject) => {
    const deadline = new Date(Date.now() + 10_000);
    client[method](request, metadata || new grpc.Metadata(), { deadline }, (error, reply) =>
      (error ? reject(error) : resolve(reply)));
  });
}

// google.protobuf.Struct (a result's detail) as a plain object.
function plain(value) {
  if (value && value.fields) {
    return Object.fromEntries(Object.entries(value.fields).map(([k, v]) => [k, plain(v)]));
  }
  if (value && value.kind) {
    if (value.kind === 'structValue') return plain(value.structValue);
    if (value.kind === 'listValue') return (value.listValue.values || []).map(plain);
    if (value.kind === 'nullValue') return null;
    return value[value.kind];
  }
  return value;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A call, made again after each RATE_LIMITED refusal once the wait it names is over.
async function retrying(attempt) {
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      const { reason, metadata: info } = errorInfo(error);
      if (reason !== 'RATE_LIMITED') throw error;
      await sleep(Number(info.retry_after_ms || 100));
    }
  }
}

const call = (client, method, request) => retrying(() => unary(client, method, request));

// A player session: one stream to the gateway, opened with the token, on which each call is a
// message (its method's full name and its request's bytes, with an id of ours) and each answer
// or streamed update a message back with the same id (docs/api.md, Sessions).
class PlayerSession {
  constructor(token) {
    const metadata = new grpc.Metadata();
    metadata.add('authorization', `Bearer ${token}`);
    this.stream = new api.session.v1.SessionService(target, credentials, channelOptions)
      .Open(metadata);
    this.nextId = 1;
    this.calls = new Map(); // id -> function taking each response for that call
    this.stream.on('data', (response) => {
      const take = this.calls.get(Number(response.call_id));
      if (take) take(response);
    });
    this.stream.on('error', (error) => this.ended(error.code, error.details || error.message));
    this.stream.on('end', () => this.ended(grpc.status.UNAVAILABLE, 'the session ended'));
  }

  ended(code, details) { // every call waiting fails as a dropped call would
    for (const take of this.calls.values()) take({ done: true, code, details, trailers: [] });
    this.calls.clear();
  }

  start(service, method, request, take) {
    const id = this.nextId++;
    // The method's own (de)serializers, as a stub of its service would use them.
    const { requestSerialize, responseDeserialize } = definition[service][method];
    this.calls.set(id, (response) => {
      if (response.done) this.calls.delete(id);
      take(response, responseDeserialize);
    });
    this.stream.write({
      call: {
        call_id: id,
        method: `/${service}/${method}`,
        request: requestSerialize(request),
      },
    });
    return id;
  }

  call(service, method, request) {
    return new Promise((resolve, reject) => {
      this.start(service, method, request, (response, decode) => {
        if (response.code) reject(failure(response));
        else resolve(decode(response.response));
      });
    });
  }

  // A server-streaming call: `onMessage` for each message; resolves at its end.
  watch(service, method, request, onMessage) {
    return new Promise((resolve, reject) => {
      const id = this.start(service, method, request, (response, decode) => {
        if (!response.done) onMessage(decode(response.response), () => this.cancel(id));
        else if (response.code && response.code !== grpc.status.CANCELLED) reject(failure(response));
        else resolve();
      });
    });
  }

  cancel(id) { this.stream.write({ cancel: id }); }

  close() { this.stream.end(); this.stream.cancel(); }
}

// A failed call's response as the error a call of its own would fail with.
function failure(response) {
  const metadata = new grpc.Metadata();
  for (const { key, value } of response.trailers || []) {
    if (key.endsWith('-bin')) metadata.add(key, Buffer.from(value));
    else metadata.add(key, Buffer.from(value).toString());
  }
  return Object.assign(new Error(response.details), {
    code: response.code, details: response.details, metadata,
  });
}

// One call on the session (RATE_LIMITED waited out as for `call`).
const sessionCall = (session, service, method, request) =>
  retrying(() => session.call(service, method, request));

async function main() {
  const login = await call(auth, 'Login', { name: 'node-example' });
  let session = new PlayerSession(login.token);
  const started = await sessionCall(session, LOBBY, 'PlayAgainstBots', { game, level, options });
  const gameId = started.status.game_id;
  // An unset optional field (here: no seat, with watch_only) is absent from the object.
  const who = started.seat === undefined
    ? `watching ${level} bots`
    : `I am seat ${started.seat}, against ${level} bots`;
  console.log(`${game} game ${gameId}: ${who}`);

  let nextVersion = 0; // Watch resumes from here after a dropped stream: no gap, no duplicate
  let moves = 0;
  let finished = false;
  while (!finished) {
    let busy = Promise.resolve();
    let failed = null;
    try {
      await session.watch(GAME, 'Watch', { game_id: gameId, from_version: nextVersion },
        (update, stop) => {
          // One message per version, in order. Act on the newest only: answer updates one at
          // a time, skipping those that a newer one has already overtaken.
          busy = busy.then(async () => {
            const status = update.status;
            nextVersion = status.version + 1;
            if (status.finished) {
              finished = true;
              const result = status.result;
              const detail = JSON.stringify(plain(result.detail) || {});
              console.log(`game over after ${status.version} moves; winners: ` +
                `[${result.winners.join(', ')}]; detail ${detail}`);
              return;
            }
            // Your legal moves, asked at every version: in Solo a jump-in chance is private
            // (it shows that you hold a card), so no public status says you may act. An empty
            // list: not now.
            const legal = await sessionCall(session, GAME, 'LegalMoves', { game_id: gameId });
            if (legal.version !== status.version || legal.moves.length === 0) return;
            const move = legal.moves[crypto.randomInt(legal.moves.length)];
            try {
              await sessionCall(session, GAME, 'Play', {
                game_id: gameId,
                move,
                expected_version: legal.version, // refused (STALE_VERSION) if someone moved first
                request_id: crypto.randomUUID(), // a retried call is applied once
              });
              moves += 1;
              console.log(`version ${legal.version}: I played ${move}`);
            } catch (error) {
              const { reason } = errorInfo(error);
              if (reason !== 'STALE_VERSION' && reason !== 'NOT_YOUR_TURN') throw error;
              // someone (a Solo jump-in) was first: the next update says what happened
            }
          }).catch((error) => { failed = error; stop(); });
        });
      await busy;
    } catch (error) {
      if (error.code !== grpc.status.UNAVAILABLE) throw error;
      session.close(); // dropped: a new session, and the Watch again from nextVersion
      session = new PlayerSession(login.token);
      await sleep(200);
    }
    if (failed) throw failed;
  }
  session.close();
  console.log(`I played ${moves} moves`);
}

main().then(
  () => process.exit(0),
  (error) => {
    const { reason } = errorInfo(error);
    console.error(`failed: ${reason || error.code} ${error.details || error.message}`);
    process.exit(1);
  },
);
