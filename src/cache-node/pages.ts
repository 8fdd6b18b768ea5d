// Everything of the cache node that is not a cache entry: /ping, the health checks, the metrics,
// the status page and its JSON, each behind the access `uiAccess` gives.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { parseBasic, REALM } from './access.js';
import { clientOf, sendProblem } from './responses.js';
import type { NodeState } from './state.js';
import { renderPage } from './ui.js';

async function checkUi(node: NodeState, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  const ui = node.config.uiAccess;
  const challenge = { 'www-authenticate': `Basic realm="${REALM}-ui", charset="UTF-8"` };
  switch (ui.type) {
    case 'disabled':
      sendProblem(res, 404, 'The node UI is disabled (uiAccess: disabled)');
      return false;
    case 'open':
      return true;
    case 'generated':
    case 'secure': {
      const creds = parseBasic(req.headers.authorization);
      if (creds === null || creds === 'malformed') {
        sendProblem(res, 401, 'The node UI needs credentials', challenge);
        return false;
      }
      let ok: boolean;
      if (ui.type === 'generated') {
        const g = node.generated;
        ok = g !== null && creds.username === g.username && creds.password === g.password;
      } else {
        // A wrong username costs the same check as a wrong password (a decoy).
        const outcome = await node.uiChecker.check(req.headers.authorization!, creds, creds.username === ui.username ? ui.password : null, clientOf(req), () => !req.socket.destroyed);
        if (outcome.kind === 'wait') {
          sendProblem(res, 429, outcome.detail, { 'retry-after': String(outcome.retryAfterSeconds) });
          return false;
        }
        ok = outcome.kind === 'ok';
      }
      if (!ok) sendProblem(res, 401, 'Wrong username or password for the node UI', challenge);
      return ok;
    }
  }
}

function send(req: IncomingMessage, res: ServerResponse, contentType: string, body: string): void {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

export async function handlePage(node: NodeState, metrics: Registry, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendProblem(res, 404, `No resource at ${req.method} ${path}`);
    return;
  }
  switch (path) {
    case '/ping':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
      return;
    case '/health/live':
    case '/health/ready': {
      // Ready: the storage directory is writable (the node cannot store entries otherwise).
      const problem = path === '/health/ready' ? await node.store.checkWritable() : undefined;
      if (problem !== undefined) sendProblem(res, 503, `The storage directory is not writable: ${problem}`);
      else send(req, res, 'application/json', JSON.stringify({ status: path === '/health/live' ? 'live' : 'ready' }));
      return;
    }
    case '/metrics':
      // The same access as the status page it summarises.
      if (!(await checkUi(node, req, res))) return;
      await node.targetBytes().catch(() => undefined);
      send(req, res, metrics.contentType, await metrics.metrics());
      return;
    case '/status.json':
      if (!(await checkUi(node, req, res))) return;
      await node.targetBytes().catch(() => undefined);
      send(req, res, 'application/json', JSON.stringify(node.status()));
      return;
    case '/':
      if (!(await checkUi(node, req, res))) return;
      await node.targetBytes().catch(() => undefined);
      send(req, res, 'text/html; charset=utf-8', renderPage(node.status(), node.store, node.clock()));
      return;
    default:
      sendProblem(res, 404, `No resource at ${req.method} ${path}`);
  }
}
