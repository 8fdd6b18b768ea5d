// Build IDs: 13 characters of [0-9a-z] (about 67 bits), random, assigned when a line has none.

import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
let pool = Buffer.alloc(0);
let pos = 0;

export function newBuildId(): string {
  let id = '';
  while (id.length < 13) {
    if (pos >= pool.length) {
      pool = randomBytes(4096);
      pos = 0;
    }
    const b = pool[pos++]!;
    // 252 = 7 * 36: rejecting the top four byte values keeps every character equally likely.
    if (b < 252) id += ALPHABET[b % 36];
  }
  return id;
}
