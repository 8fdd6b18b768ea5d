// Who may talk to the Build Event Service endpoint, decided before their messages are read.
//
// A call that carries `Authorization` (Bazel 5 and later, --bes_header) is authenticated from its
// metadata, in a gRPC server interceptor, before a byte of its body is read: a wrong key or a key
// without publishScan ends the call there. A call without it may still be Bazel 4, whose key can
// only come as a keyword inside the stream's first message; until that message has named a valid
// key, the call may send no message larger than `maxUnauthenticatedMessageBytes` (Bazel's first
// message is a small BuildStarted), so that anonymous callers cannot make the server buffer large
// messages. grpc-js fixes a call's largest message when the call starts and offers no setting per
// call; the interceptor lowers the limit on the call's own decoder (checked against each message's
// declared length before its body is buffered) and raises it again once the caller is known. The
// BES tests pin this behaviour of the grpc-js version in package-lock.json.

import * as grpc from '@grpc/grpc-js';
import type { Authenticator } from '../auth/authenticator.js';
import type { Principal } from '../auth/types.js';

export type Admission = { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly error: grpc.ServiceError };

/** The keyword Bazel 4 users pass the access key in: `--bes_keywords=buildscope_access_key=KEY`. */
export const ACCESS_KEY_KEYWORD = 'buildscope_access_key';

/**
 * Whether a credential lets its holder publish builds, as a gRPC status when it does not. `client`:
 * the caller's address, by which failed passwords are limited (src/auth/sign-in-limits.ts).
 */
export async function admitPublisher(authenticator: Authenticator, header: string | undefined, client: string | undefined): Promise<Admission> {
  const result = await authenticator.authenticate(header, client);
  switch (result.kind) {
    case 'authenticated':
      if (result.principal.permissions.has('publishScan')) return { ok: true, principal: result.principal };
      return { ok: false, error: status(grpc.status.PERMISSION_DENIED, "Publishing builds needs the permission 'publishScan'") };
    case 'anonymous':
      return {
        ok: false,
        error: status(
          grpc.status.UNAUTHENTICATED,
          `Authentication required: run Bazel with --bes_header=Authorization=Bearer\\ <access key> (Bazel 4: --bes_keywords=${ACCESS_KEY_KEYWORD}=<access key>)`,
        ),
      };
    case 'rejected':
      return { ok: false, error: status(grpc.status.UNAUTHENTICATED, `Authentication failed: ${result.reason}`) };
    default: {
      const never: never = result;
      throw new Error(`Unknown auth result ${JSON.stringify(never)}`);
    }
  }
}

/** The Authorization header of a call, if it sent one. */
export function authorizationOf(metadata: grpc.Metadata): string | undefined {
  const value = metadata.get('authorization')[0];
  return typeof value === 'string' ? value : value?.toString('utf8');
}

/** `Bearer KEY` from the keyword `user_keyword=buildscope_access_key=KEY` (Bazel prefixes user keywords). */
export function keywordCredential(keywords: readonly string[] | undefined): string | undefined {
  for (const k of keywords ?? []) {
    const m = /^(?:user_keyword=)?buildscope_access_key=(.+)$/.exec(k);
    if (m) return `Bearer ${m[1]}`;
  }
  return undefined;
}

export function status(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(details), { code, details, metadata: new grpc.Metadata() });
}

/** What the interceptor learned of a call, for its handler (keyed by the call's metadata object, which the handler receives). */
type Caller = { readonly kind: 'known'; readonly principal: Principal } | { readonly kind: 'pending'; readonly client: string | undefined; readonly admit: (principal: Principal) => void };

const callers = new WeakMap<grpc.Metadata, Caller>();

/**
 * The publisher of a call: known from its metadata, or established now from a credential of its
 * first message (which lifts the call's small message limit).
 */
export async function callerOf(authenticator: Authenticator, metadata: grpc.Metadata, firstMessageCredential: () => string | undefined): Promise<Admission> {
  const caller = callers.get(metadata);
  if (caller?.kind === 'known') return { ok: true, principal: caller.principal };
  const admission = await admitPublisher(authenticator, firstMessageCredential(), caller?.client);
  if (admission.ok) {
    caller?.admit(admission.principal);
    callers.set(metadata, { kind: 'known', principal: admission.principal });
  }
  return admission;
}

/** The grpc-js fields of a call's innermost object that hold its largest message (see the file's comment). */
interface MessageLimits {
  maxReceiveMessageSize?: number;
  decoder?: { maxReadMessageLength?: number };
}

/** The interceptor: refuses a call with a bad Authorization header before reading it, and caps the messages of a call without one. */
export function admissionInterceptor(authenticator: Authenticator, maxUnauthenticatedMessageBytes: number): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start(next) {
        next({
          onReceiveMetadata(metadata, pass) {
            const header = authorizationOf(metadata);
            const client = call.getConnectionInfo().remoteAddress;
            if (header === undefined) {
              const restore = capMessages(call as unknown as MessageLimits, maxUnauthenticatedMessageBytes);
              callers.set(metadata, { kind: 'pending', client, admit: restore });
              pass(metadata);
              return;
            }
            admitPublisher(authenticator, header, client).then(
              (admission) => {
                if (!admission.ok) {
                  call.sendStatus({ code: admission.error.code, details: admission.error.details });
                  return;
                }
                callers.set(metadata, { kind: 'known', principal: admission.principal });
                pass(metadata);
              },
              (e: unknown) => call.sendStatus({ code: grpc.status.UNAVAILABLE, details: `Credentials could not be checked: ${(e as Error).message}` }),
            );
          },
        });
      },
    });
}

/** Lowers the call's largest message to `bytes`; the returned function puts the server's limit back. */
function capMessages(call: MessageLimits, bytes: number): () => void {
  const decoder = call.decoder;
  if (decoder === undefined || typeof decoder.maxReadMessageLength !== 'number' || typeof call.maxReceiveMessageSize !== 'number') {
    // A grpc-js without these fields: the test of the cap fails, and the server's limit applies meanwhile.
    return () => undefined;
  }
  const decoded = decoder.maxReadMessageLength;
  const decompressed = call.maxReceiveMessageSize;
  decoder.maxReadMessageLength = Math.min(bytes, decoded === -1 ? bytes : decoded);
  call.maxReceiveMessageSize = Math.min(bytes, decompressed === -1 ? bytes : decompressed);
  return () => {
    decoder.maxReadMessageLength = decoded;
    call.maxReceiveMessageSize = decompressed;
  };
}
