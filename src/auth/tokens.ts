// Access tokens: short-lived HS256 JWTs (jose) carrying the user, permissions and projects.
// Issued for the configured public hostname (`iss` and `aud`): a server whose hostname changed
// refuses every token issued before. The signing secret is shared by all server processes (in the
// database by default), so any process verifies what another issued.

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { SigningKeys } from '../config.js';
import type { DatabaseHandle } from '../db/database.js';
import { bindingClaim, parseBindingClaim } from './binding.js';
import { isPermission, type CredentialBinding, type Permission } from './types.js';

export interface TokenClaims {
  readonly user: string;
  readonly permissions: readonly Permission[];
  /** null: no project-level restriction. */
  readonly projects: readonly string[] | null;
  /** Epoch ms. */
  readonly expiresAt: number;
  /** The credential the token stands on (claim `cred`): a session's token and the tokens made with it. */
  readonly binding?: CredentialBinding;
}

export type TokenCheck = { readonly ok: true; readonly claims: TokenClaims } | { readonly ok: false; readonly reason: string };

const ALGORITHM = 'HS256';
const SIGNING_KEY_FILE = 'token-signing.key';

export async function loadSigningSecret(handle: DatabaseHandle, location: SigningKeys): Promise<Uint8Array> {
  switch (location.kind) {
    case 'database': {
      // Several processes may start at once: the first insert wins, everyone reads the winner.
      await handle.db
        .insertInto('auth_signing_key')
        .values({ id: 'token', secret: randomBytes(32).toString('base64'), created_at: Date.now() })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      const r = await handle.db.selectFrom('auth_signing_key').select('secret').where('id', '=', 'token').executeTakeFirstOrThrow();
      return Buffer.from(r['secret'] as string, 'base64');
    }
    case 'directory': {
      const dir = resolve(location.path);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = join(dir, SIGNING_KEY_FILE);
      try {
        writeFileSync(file, randomBytes(32).toString('base64') + '\n', { flag: 'wx', mode: 0o600 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
      if (secret.length < 32) throw new Error(`${file}: the signing key must hold at least 32 bytes (base64)`);
      return secret;
    }
    default: {
      const never: never = location;
      throw new Error(`Unknown signing key location ${JSON.stringify(never)}`);
    }
  }
}

export class TokenService {
  /** The secret imported once as a WebCrypto key: jose would otherwise import the raw bytes on every sign and verify. */
  private keyPromise: Promise<CryptoKey> | undefined;

  constructor(
    private readonly secret: Uint8Array,
    /** The server's public hostname; tokens are bound to it. */
    private readonly hostname: string,
    private readonly clock: () => number = Date.now,
  ) {}

  private key(): Promise<CryptoKey> {
    this.keyPromise ??= globalThis.crypto.subtle.importKey('raw', new Uint8Array(this.secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    return this.keyPromise;
  }

  async issue(claims: TokenClaims): Promise<string> {
    const now = this.clock();
    const payload: Record<string, unknown> = { perm: claims.permissions };
    if (claims.projects !== null) payload['proj'] = claims.projects;
    if (claims.binding !== undefined) payload['cred'] = bindingClaim(claims.binding);
    return new SignJWT(payload)
      .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
      .setSubject(claims.user)
      .setIssuer(this.hostname)
      .setAudience(this.hostname)
      .setIssuedAt(Math.floor(now / 1000))
      // JWT times are in seconds: round down, so that a token never outlives its credential.
      .setExpirationTime(Math.floor(claims.expiresAt / 1000))
      .setJti(randomBytes(12).toString('base64url'))
      .sign(await this.key());
  }

  async verify(token: string): Promise<TokenCheck> {
    try {
      const { payload } = await jwtVerify(token, await this.key(), {
        algorithms: [ALGORITHM],
        issuer: this.hostname,
        audience: this.hostname,
        currentDate: new Date(this.clock()),
        clockTolerance: 0,
        requiredClaims: ['sub', 'exp', 'perm'],
      });
      const perm = payload['perm'];
      const proj = payload['proj'];
      if (!Array.isArray(perm) || !perm.every((p) => typeof p === 'string' && isPermission(p))) return { ok: false, reason: 'malformed access token' };
      if (proj !== undefined && (!Array.isArray(proj) || !proj.every((p) => typeof p === 'string'))) return { ok: false, reason: 'malformed access token' };
      const binding = payload['cred'] === undefined ? undefined : parseBindingClaim(payload['cred']);
      if (payload['cred'] !== undefined && binding === undefined) return { ok: false, reason: 'malformed access token' };
      return {
        ok: true,
        claims: {
          user: payload.sub!,
          permissions: perm as Permission[],
          projects: proj === undefined ? null : (proj as string[]),
          expiresAt: payload.exp! * 1000,
          ...(binding !== undefined ? { binding } : {}),
        },
      };
    } catch (e) {
      if (e instanceof joseErrors.JWTExpired) return { ok: false, reason: 'access token expired' };
      if (e instanceof joseErrors.JWTClaimValidationFailed && (e.claim === 'iss' || e.claim === 'aud')) {
        return { ok: false, reason: 'access token was issued for another server hostname' };
      }
      return { ok: false, reason: 'invalid access token' };
    }
  }
}
