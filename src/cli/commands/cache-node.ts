// `buildscope cache-node`: run a build cache node, validate its configuration file, hash secrets
// for that file, and (on the server) create node credentials.

import type { Command } from 'commander';

function parsePort(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port: not a port number: ${v}`);
  return n;
}

async function readSecret(): Promise<string> {
  if (!process.stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    // One secret per input; a trailing newline (echo, here-strings) is not part of it.
    return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  }
  const ask = async (prompt: string): Promise<string> => {
    process.stderr.write(prompt);
    const stdin = process.stdin;
    stdin.setRawMode(true);
    stdin.resume();
    let text = '';
    return new Promise((resolve, reject) => {
      const onData = (buf: Buffer) => {
        for (const ch of buf.toString('utf8')) {
          if (ch === '\r' || ch === '\n') {
            stdin.off('data', onData);
            stdin.setRawMode(false);
            stdin.pause();
            process.stderr.write('\n');
            return resolve(text);
          }
          if (ch === '\u0003') {
            stdin.setRawMode(false);
            return reject(new Error('cancelled'));
          }
          if (ch === '\u007f') text = text.slice(0, -1);
          else text += ch;
        }
      };
      stdin.on('data', onData);
    });
  };
  const a = await ask('Secret: ');
  const b = await ask('Again: ');
  if (a !== b) throw new Error('The two entries differ');
  return a;
}

export function register(program: Command): void {
  const cmd = program
    .command('cache-node')
    .description("Run a build cache node (the HTTP build cache protocol, Bazel's HTTP cache and, with --grpc-port, its gRPC cache) configured by a version 4 configuration file")
    .enablePositionalOptions()
    .option('--config <file>', 'configuration file (JSON or YAML); changes are applied while the node runs')
    .option('--port <port>', 'port to listen on', parsePort, 5071)
    .option('--host <host>', 'address to listen on (0.0.0.0 for every interface)', '127.0.0.1')
    .option('--data <dir>', 'directory for cache entries (default ./.buildscope-cache-node)')
    .option('--grpc-port <port>', "also serve the Remote Execution API's cache over gRPC (Bazel's --remote_cache=grpc://...) on this port", parsePort)
    .action(async (opts: { config?: string; port: number; host: string; data?: string; grpcPort?: number }) => {
      if (!opts.config) {
        cmd.error('error: --config <file> is required (the smallest valid file is {"version": 4})');
      }
      const { startCacheNode } = await import('../../cache-node/server.js');
      const { closeOnSignals } = await import('./_signals.js');
      const { createLogger } = await import('../../log.js');
      const { DEFAULT_STOP_TIMEOUT_SECONDS } = await import('../../config.js');
      const signals = closeOnSignals(createLogger('cache-node'), DEFAULT_STOP_TIMEOUT_SECONDS);
      try {
        signals.attach(await startCacheNode({ configFile: opts.config!, dataDir: opts.data ?? './.buildscope-cache-node', port: opts.port, host: opts.host, grpcPort: opts.grpcPort }));
      } catch (err) {
        process.stderr.write(`${(err as Error).message}\n`);
        process.exit(1);
      }
    });

  cmd
    .command('validate <file>')
    .description('Check a configuration file; exits 0 when valid, 1 with every fault listed otherwise')
    .action(async (file: string) => {
      const { loadConfigFile, formatFaults, dotted } = await import('../../cache-node/config.js');
      const r = await loadConfigFile(file);
      if (r.ok) {
        process.stdout.write(`${file}: valid (version 4)\n`);
        // Hashed secrets not written by hash-secret are valid too; say how they will be verified.
        const secrets: [string, { readonly kind: string; readonly salt: Buffer }][] = [...r.config.users.values()].map((u) => [dotted(['cache', 'accessControl', 'users', u.name, 'password']), u.password]);
        if (r.config.uiAccess.type === 'secure') secrets.push(['uiAccess.password', r.config.uiAccess.password]);
        for (const [path, hashed] of secrets) {
          if (hashed.kind === 'salt') {
            process.stdout.write(`note: ${path}: the part after the colon is read as a ${hashed.salt.length}-byte salt, with scrypt N = 2^15, r = 8, p = 1 (it does not hold the parameters hash-secret writes)\n`);
          }
        }
        return;
      }
      process.stderr.write(`${file}: ${r.faults.length} fault${r.faults.length === 1 ? '' : 's'}\n${formatFaults(r.faults)}\n`);
      process.exitCode = 1;
    });

  cmd
    .command('hash-secret')
    .description('Read a secret (prompt, or standard input) and print its hashed secret string for the configuration file')
    .action(async () => {
      const secret = await readSecret();
      if (secret === '') {
        process.stderr.write('error: the secret is empty\n');
        process.exitCode = 1;
        return;
      }
      const { hashSecret } = await import('../../cache-node/secret.js');
      process.stdout.write(`${await hashSecret(secret)}\n`);
    });

  cmd
    .command('schema')
    .description('Print the JSON Schema of version 4 of the configuration file')
    .action(async () => {
      const { cacheNodeConfigSchema } = await import('../../cache-node/schema.js');
      process.stdout.write(`${JSON.stringify(cacheNodeConfigSchema, null, 2)}\n`);
    });

  cmd
    .command('credentials <name>')
    .description("Create (or replace) a cache node's registration key and secret in the server's database")
    .option('--config <file>', "the server's configuration file (for its database)")
    .option('--data <dir>', 'data directory of the embedded SQLite database')
    .option('--db <url>', 'postgres:// URL of the database (instead of --data)')
    .action(async (name: string, own: { config?: string; data?: string; db?: string }) => {
      // Options after the sub-command name may have been taken by the parent command (same
      // flags); both mean the server's database here.
      const opts = { ...(cmd.opts() as { config?: string; data?: string }), ...own };
      const { configFromCli } = await import('../../config.js');
      const { openDatabase } = await import('../../db/database.js');
      const { CacheRegistry } = await import('../../cache-registry/registry.js');
      let handle;
      try {
        handle = await openDatabase(configFromCli(opts).database);
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        process.exitCode = 1;
        return;
      }
      try {
        const registry = await CacheRegistry.open(handle);
        const c = await registry.createCredentials(name);
        process.stdout.write(
          `Cache node '${c.name}'\nkey:    ${c.key}\nsecret: ${c.secret}\n\n` +
            `In the node's configuration file:\n${JSON.stringify({ registration: { key: c.key, secret: c.secret, nodeAddress: 'http://THIS-NODE:5071', serverAddress: 'http://SERVER:5000' } }, null, 2)}\n` +
            'The secret is shown only now; running this again replaces the credentials.\n',
        );
      } catch (err) {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        process.exitCode = 1;
      } finally {
        await handle.close();
      }
    });
}
