// Buildscope's npm agent, loaded into every Node process with NODE_OPTIONS=--require=<this file>.
// In a package manager's own process (npm, npx, yarn, pnpm) it notes each lifecycle script the
// manager spawns (name, package, start, end, exit code) in a record file; in the other processes
// of a recorded build it notes the tests node's test runner runs there (node-tests.cjs).
// `buildscope run` names the file (BUILDSCOPE_JS_EVENTS) and makes the build itself. Without
// `buildscope run` (the zero-touch form for CI), the outermost package manager process owns the
// build: it names the file for the processes below it, and when it exits it prints the build's
// link and leaves the sending to a detached process, so the build never waits for the network.
// Plain CommonJS with no dependencies: it is loaded as it is, before anything else, everywhere.
// Any error here is swallowed: the agent must never break or fail a build.
'use strict';

// agents/agent-contract.json, the rules every agent shares: the build ID's alphabet and length,
// and the CI variables (this file only needs to know whether a CI runs it, to send before exiting).
const contractFile = () => require('node:path').join(__dirname, '..', '..', '..', 'agents', 'agent-contract.json');

/** Whether the environment is a CI's, by the contract's detection rules (contract.ts detectCi). */
function onCi(env, contract) {
  const set = (d) => {
    const v = String(env[d.variable] || '').trim();
    return v !== '' && (d.equals !== undefined ? v === d.equals : v.toLowerCase() !== 'false');
  };
  return contract.ci.providers.concat([contract.ci.generic]).some((p) => p.detect.some(set));
}

/** A build ID by the contract (contract.ts newBuildId): bytes that would favour a character are skipped. */
function newBuildId(contract) {
  const { alphabet, length } = contract.buildId;
  const limit = 256 - (256 % alphabet.length);
  let id = '';
  while (id.length < length) for (const b of require('node:crypto').randomBytes(length * 2)) if (b < limit && id.length < length) id += alphabet[b % alphabet.length];
  return id;
}

module.exports = { onCi, newBuildId, contractFile };

try {
  const manager = /(^|[\\/])(npm|npm-cli\.js|npx|npx-cli\.js|yarn|yarn\.js|yarn\.cjs|pnpm|pnpm\.cjs|pnpm\.js)$/;
  const script = process.argv[1] || '';
  if (!manager.test(script) && process.env.BUILDSCOPE_JS_EVENTS && process.env.BUILDSCOPE_DISABLE !== '1') {
    // Any other Node process of a recorded build may run node:test tests: note them in the record.
    require('./node-tests.cjs').install(process.env.BUILDSCOPE_JS_EVENTS, contractFile);
  }
  if (manager.test(script) && process.env.BUILDSCOPE_DISABLE !== '1') {
    const path = require('node:path');
    const fs = require('node:fs');
    const os = require('node:os');
    const crypto = require('node:crypto');
    const childProcess = require('node:child_process');
    let file = process.env.BUILDSCOPE_JS_EVENTS;
    let owner = false;
    // Queries (`npm --version`, `npm config get`, `npm view`, ...) and npx are not builds; their
    // lifecycle scripts, if any, are still noted when a build owns the record.
    const first = process.argv.slice(2).find((a) => !a.startsWith('-') || a === '-v' || a === '--version' || a === '-h' || a === '--help');
    const query = /(^|[\\/])npx(-cli\.js)?$/.test(script) || (first === undefined && !/yarn/.test(script)) ||
      ['-v', '--version', '-h', '--help', 'help', 'version', 'config', 'c', 'get', 'set', 'view', 'v', 'info', 'show', 'ls', 'list', 'll', 'la', 'bin', 'prefix', 'root', 'whoami', 'completion', 'outdated', 'search', 'ping', 'cache', 'doctor', 'why', 'explain', 'query', 'fund', 'audit', 'login', 'logout', 'adduser', 'token', 'owner', 'access', 'profile', 'team', 'org', 'dist-tag', 'deprecate', 'edit', 'docs', 'home', 'repo', 'bugs', 'find-dupes', 'pkg', 'sbom'].includes(first);
    if (!file && !query) {
      // Zero-touch: this is the outermost package manager process of a command.
      owner = true;
      file = path.join(os.tmpdir(), `buildscope-js-${process.pid}-${crypto.randomBytes(4).toString('hex')}.jsonl`);
      process.env.BUILDSCOPE_JS_EVENTS = file;
    }
    const record = (entry) => {
      try {
        // 0600: the record holds the command line, which is no business of other local users.
        fs.appendFileSync(file, JSON.stringify(entry) + '\n', { mode: 0o600 });
      } catch {
        // The record is best effort; the build goes on.
      }
    };
    if (owner) {
      record({ kind: 'command', argv: process.argv.slice(1), cwd: process.cwd(), t: Date.now(), node: process.version, pid: process.pid });
    }
    const originalSpawn = childProcess.spawn;
    let next = 0;
    childProcess.spawn = function spawn(command, args, options) {
      const child = originalSpawn.apply(this, arguments);
      try {
        const opts = Array.isArray(args) ? options : args;
        const env = (opts && opts.env) || {};
        const name = env.npm_lifecycle_event;
        if (name) {
          const id = `${process.pid}-${++next}`;
          record({ kind: 'start', id, name, package: env.npm_package_name || undefined, userAgent: env.npm_config_user_agent || undefined, t: Date.now() });
          child.once('exit', (code, signal) => record({ kind: 'end', id, code: code === null ? null : code, signal: signal || undefined, t: Date.now() }));
        }
      } catch {
        // Never in the way of the spawn itself.
      }
      return child;
    };
    if (owner) {
      process.once('exit', (code) => {
        try {
          record({ kind: 'exit', code, t: Date.now() });
          const finish = path.join(__dirname, '..', '..', '..', 'dist', 'agents', 'npm', 'finish.js');
          const contract = JSON.parse(fs.readFileSync(contractFile(), 'utf8'));
          const buildId = newBuildId(contract);
          let server = process.env.BUILDSCOPE_SERVER || '';
          const dir = (process.env.BUILDSCOPE_AGENT_DIR || '').trim() || path.join(process.env.HOME || os.homedir(), '.buildscope');
          try {
            // The same warning as every agent's (settings.ts configFileWarning): the file holds a key.
            const mode = fs.statSync(path.join(dir, 'agent.properties')).mode & 0o777;
            if ((mode & 0o077) !== 0 && process.platform !== 'win32') {
              process.stderr.write(`Buildscope: ${path.join(dir, 'agent.properties')} can be read by other users (mode ${mode.toString(8).padStart(4, '0')}); it holds an access key: chmod 600 it\n`);
            }
          } catch {
            // No agent configuration.
          }
          if (!server) {
            try {
              // Only for the link printed now; the sender reads the settings in full (settings.ts).
              const m = /^[ \t]*server[ \t]*[=: \t][ \t]*(\S+)[ \t]*$/m.exec(fs.readFileSync(path.join(dir, 'agent.properties'), 'utf8'));
              server = m ? m[1].replace(/^[=:]/, '') : '';
            } catch {
              // No agent configuration: the build is spooled by the sender.
            }
          }
          server = String(server).replace(/\/+$/, '');
          const senderEnv = Object.assign({}, process.env, { NODE_OPTIONS: '' });
          const ci = onCi(process.env, contract);
          const mode = (process.env.BUILDSCOPE_SEND || '').toLowerCase();
          if (mode === 'sync' || (mode !== 'background' && ci)) {
            // A CI machine may be torn down when the job's command exits: send now, bounded.
            const timeout = (Number(process.env.BUILDSCOPE_TIMEOUT_MS) > 0 ? Number(process.env.BUILDSCOPE_TIMEOUT_MS) : 5000) * 2 + 2000;
            childProcess.spawnSync(process.execPath, [finish, file, buildId], { stdio: 'ignore', env: senderEnv, timeout });
          } else {
            // Detached and unref'd: the package manager exits now; the sending happens after.
            const sender = originalSpawn(process.execPath, [finish, file, buildId], { detached: true, stdio: 'ignore', env: senderEnv });
            sender.unref();
          }
          if (server) process.stderr.write(`Buildscope: ${server}/builds/${buildId}\n`);
        } catch {
          // Never fail the build.
        }
      });
    }
  }
} catch {
  // Never fail the build.
}
