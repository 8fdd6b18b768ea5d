// `buildscope attestation verify FILE [--key PEM]...`: verifies a DSSE envelope offline and says
// precisely why one fails. `buildscope attestation put FILE ...`: puts an envelope made by another
// tool (a vulnerability scanner, another signer) into an attestation store, beside ours.

import type { Command } from 'commander';
import { fail as failWith } from './_fail.js';

// Annotated so that calls narrow types like a function declaration returning never.
const fail: (message: string, code?: number) => never = (message, code = 2) => failWith('attestation', message, code);

const collect = (v: string, acc: string[]) => [...acc, v];

export function register(program: Command): void {
  const cmd = program.command('attestation').description('Verify attestations and put attestations of other tools into a store');

  cmd
    .command('verify <files...>')
    .description('Verify DSSE envelopes (in-toto statements) offline; exit 0 when all are valid, 1 with the reasons when not')
    .option('--key <pem>', 'trusted public key (PEM); repeatable; default: the keys of the data directory', collect, [] as string[])
    .option('--sha256 <digest>', 'also require a subject with this sha256 digest')
    .option('--data <dir>', 'data directory whose provenance keys to trust when no --key is given (default ./.buildscope)')
    .option('--config <file>', 'YAML configuration file (its `provenance` section)')
    .option('--json', 'print one JSON object per file')
    .action(async (files: string[], opts: { key: string[]; sha256?: string; data?: string; config?: string; json?: boolean }) => {
      const { readFileSync } = await import('node:fs');
      const { publicKeyFromPem, loadVerificationKeys } = await import('../../provenance/keys.js');
      const { errorLine } = await import('./_fail.js');
      const { verifyAttestation, FAILURE_LABELS } = await import('../../provenance/verify.js');
      const { subjectHasSha256 } = await import('../../provenance/statement.js');
      let keys;
      try {
        if (opts.key.length > 0) {
          keys = opts.key.map((k) => {
            const pem = readFileSync(k);
            try {
              return publicKeyFromPem(pem, k);
            } catch {
              throw new Error(`${k} is not a PEM public key, certificate or private key`);
            }
          });
        } else {
          const { cliConfig } = await import('./_config.js');
          const { parseProvenanceConfig } = await import('../../provenance/config.js');
          const { DEFAULT_DATA_DIR } = await import('../../db/database.js');
          const config = cliConfig('attestation', opts);
          // Read-only: a data directory without keys is an error here, never a reason to make a key.
          keys = loadVerificationKeys(parseProvenanceConfig(config.provenance, config.database.data ?? DEFAULT_DATA_DIR).keys);
        }
      } catch (e) {
        fail(`cannot load the keys: ${errorLine(e)}`);
      }
      let failed = 0;
      for (const file of files) {
        const prefix = files.length > 1 ? `${file}: ` : '';
        const report = (ok: boolean, reason: string, message: string, extra: Record<string, unknown> = {}) => {
          if (!ok) failed++;
          if (opts.json) process.stdout.write(`${JSON.stringify({ file, ok, reason, message, ...extra })}\n`);
          else process.stdout.write(ok ? `${prefix}OK: ${message}\n` : `${prefix}FAILED (${reason}): ${message}\n`);
        };
        let text: string;
        try {
          text = readFileSync(file, 'utf8');
        } catch (e) {
          report(false, 'unreadable', `cannot read ${errorLine(e)}`, { code: 'unreadable' });
          continue;
        }
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch (e) {
          report(false, FAILURE_LABELS['malformed-envelope'], `${file} cannot be read as JSON: ${(e as Error).message}`, { code: 'malformed-envelope' });
          continue;
        }
        const v = verifyAttestation(json, keys);
        if (!v.ok) {
          report(false, FAILURE_LABELS[v.reason], v.message, { code: v.reason });
          continue;
        }
        if (opts.sha256 !== undefined && !subjectHasSha256(v.statement, opts.sha256)) {
          report(false, 'subject mismatch', `no subject has sha256 ${opts.sha256}`, { code: 'subject-mismatch' });
          continue;
        }
        const subjects = v.statement.subject.map((s) => s.name ?? JSON.stringify(s.digest)).join(', ');
        report(true, '', `signed by ${v.keyids.join(', ')}; predicate ${v.statement.predicateType}; subject ${subjects}`, {
          keyids: v.keyids,
          predicateType: v.statement.predicateType,
        });
      }
      process.exit(failed > 0 ? 1 : 0);
    });

  cmd
    .command('put <file>')
    .description('Put a DSSE envelope made by another tool into an attestation store (layout: docs/provenance.md)')
    .requiredOption('--type <type>', 'package type, e.g. oci or jvmpkg')
    .option('--namespace <namespace>', 'package namespace (omit when the package has none)')
    .requiredOption('--name <name>', 'package name')
    .requiredOption('--package-version <version>', 'package version')
    .option('--sha256 <digest>', 'package sha256 (default: the sha256 of the statement subject)')
    .option('--store <instance>', 'store instance, obj:<name> or repo:<name> (default: the first configured)')
    .option('--data <dir>', 'data directory (default ./.buildscope)')
    .option('--config <file>', 'YAML configuration file (its `provenance` section)')
    .action(async (file: string, opts: { type: string; namespace?: string; name: string; packageVersion: string; sha256?: string; store?: string; data?: string; config?: string }) => {
      const { readFileSync } = await import('node:fs');
      const { cliConfig } = await import('./_config.js');
      const { parseProvenanceConfig } = await import('../../provenance/config.js');
      const { DEFAULT_DATA_DIR } = await import('../../db/database.js');
      const { parseEnvelope } = await import('../../provenance/dsse.js');
      const { decodeBase64 } = await import('../../provenance/base64.js');
      const { checkPackageAddress, SHA256 } = await import('../../provenance/package.js');
      const { openStore } = await import('../../provenance/open.js');
      const { attestationUri, envelopeId } = await import('../../provenance/service.js');
      const bytes = (() => {
        try {
          return readFileSync(file);
        } catch (e) {
          fail(`cannot read ${file}: ${(e as Error).message}`);
        }
      })();
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch (e) {
        fail(`${file} is not JSON: ${(e as Error).message}`);
      }
      const parsed = parseEnvelope(json);
      if (!parsed.ok) fail(`${file} is not a DSSE envelope: ${parsed.message}`);
      let sha256 = opts.sha256?.toLowerCase();
      if (sha256 === undefined) {
        // Only to find the digest: trust is decided when the service evaluates.
        const payload = decodeBase64(parsed.envelope.payload);
        try {
          const statement = JSON.parse(payload?.toString('utf8') ?? '') as { subject?: { digest?: { sha256?: string } }[] };
          const digests = [...new Set((statement.subject ?? []).map((s) => s.digest?.sha256?.toLowerCase()).filter((d): d is string => d !== undefined))];
          if (digests.length !== 1) fail('the statement does not name exactly one sha256 subject digest: give --sha256');
          sha256 = digests[0];
        } catch {
          fail('cannot read the statement subject: give --sha256');
        }
      }
      if (sha256 === undefined || !SHA256.test(sha256)) fail('--sha256 must be 64 hex characters');
      const pkg = { type: opts.type, ...(opts.namespace !== undefined ? { namespace: opts.namespace } : {}), name: opts.name, version: opts.packageVersion };
      const problem = checkPackageAddress(pkg);
      if (problem) fail(problem);
      const config = cliConfig('attestation', opts);
      const p = parseProvenanceConfig(config.provenance, config.database.data ?? DEFAULT_DATA_DIR);
      const storeConfig = opts.store === undefined ? p.stores[0] : p.stores.find((s) => s.instance === opts.store);
      if (!storeConfig) fail(`no store ${opts.store} is configured (configured: ${p.stores.map((s) => s.instance).join(', ')})`);
      const store = openStore(storeConfig);
      const id = envelopeId(bytes);
      const location = { pkg, digestType: 'sha256', digest: sha256 };
      try {
        await store.put(location, id, bytes);
      } catch (e) {
        fail((e as Error).message, 1);
      }
      process.stdout.write(`${attestationUri(pkg, 'sha256', sha256, store.instance, id)}\n`);
    });
}
