// A Node.js HTTP server (issue 32, rows 1, 3, 11).
//
//   node node_http.js answer       the server and a load generator (a child
//                                  process, `client` below) sending 2 requests
//                                  a second.  Truth: progress.
//   node node_http.js rest         the server alone, no client: the loop waits in
//                                  epoll_wait, libuv's pool at rest.  Truth: idle.
//   node node_http.js sync-sleep   the server and its load generator; from +2 s
//                                  the handler calls reloadModel(), a synchronous
//                                  sleep of an hour (Atomics.wait) on the event
//                                  loop: nothing is accepted or answered again
//                                  while clients keep connecting.  Truth: a hang
//                                  (hang-blocked), the loop thread's frame named.
//   node node_http.js client PORT  the load generator alone.
'use strict';
const http = require('http');
const { fork } = require('child_process');

const mode = process.argv[2] || 'answer';
const start = Date.now();

function reloadModel() {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 3600 * 1000);
}

if (mode === 'client') {
  process.title = 'loadgen';
  process.on('disconnect', () => process.exit(0));
  const port = Number(process.argv[3]);
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  let i = 0;
  setInterval(() => {
    http.get({ host: '127.0.0.1', port, path: `/generate?i=${i++}`, agent }, (res) => {
      res.resume();
    }).on('error', () => {});
  }, 500);
} else {
  const server = http.createServer((req, res) => {
    if (mode === 'sync-sleep' && Date.now() - start > 2000) reloadModel();
    res.end('x'.repeat(1000));
  });
  server.listen(0, '127.0.0.1', () => {
    if (mode !== 'rest') {
      const child = fork(__filename, ['client', String(server.address().port)]);
      process.on('exit', () => child.kill('SIGKILL'));
    }
  });
}
