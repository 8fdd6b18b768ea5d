// A fresh PostgreSQL database per test file, on the server started by the global setup.
//
//   const pg = await createTestDatabase();           // undefined when PostgreSQL is unavailable
//   describe.skipIf(!pgAvailable())('on PostgreSQL', ...)

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export function pgAvailable(): boolean {
  return inject('pgAdminUrl') !== '';
}

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase | undefined> {
  const admin = inject('pgAdminUrl');
  if (!admin) return undefined;
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
