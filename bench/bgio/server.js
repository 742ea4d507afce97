'use strict';
// boardgame.io's own Server (socket.io transport, in-memory storage) with the counter game, on
// 127.0.0.1 and a free port. Prints `PORT <port>` once it listens; stops on SIGTERM.
// Usage: NODE_PATH=.bench/bgio/node_modules BGIO_MOVES=200 node bench/bgio/server.js
const { Server } = require('boardgame.io/server');
const { CounterGame } = require('./game');

const server = Server({ games: [CounterGame], origins: ['http://127.0.0.1'] });
// Server.run takes a port only: listen on loopback, not on every interface.
const listen = server.app.listen;
server.app.listen = function (port, callback) {
  return listen.call(this, port, '127.0.0.1', callback);
};

server.run(0).then(({ appServer }) => {
  process.stdout.write(`PORT ${appServer.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
