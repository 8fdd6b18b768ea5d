// Password hashing: the right password verifies, anything else does not — including the right
// password with zero bytes appended, which scrypt's HMAC key padding would otherwise accept.

import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../src/auth/password.js';

describe('password hashes', () => {
  it('verify the right password only', async () => {
    const stored = await hashPassword('alice-pw');
    expect(await verifyPassword('alice-pw', stored)).toBe(true);
    expect(await verifyPassword('alice-pw\0', stored)).toBe(false);
    expect(await verifyPassword('alice-pw\0\0', stored)).toBe(false);
    expect(await verifyPassword('alice-p', stored)).toBe(false);
    expect(await verifyPassword('Alice-pw', stored)).toBe(false);
    expect(await verifyPassword('alice-pw', 'not-a-hash')).toBe(false);
  });

  it('salt every hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
  });
});
