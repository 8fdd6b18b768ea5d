// The direction of dependencies of docs/architecture.md, as rules in .dependency-cruiser.cjs:
// query -> sql -> store -> services -> faces, no cycles, browser bundles (the web app, the playground
// and what they share in ui/) without server code and without each other.

import { createRequire } from 'node:module';
import { cruise, type IConfiguration } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

describe('layers', () => {
  it('no module imports against the direction of the layers, and there are no cycles', async () => {
    const config = require('../../.dependency-cruiser.cjs') as IConfiguration;
    const result = await cruise(['src', 'web/src', 'playground/src', 'ui'], { ...config.options, ruleSet: { forbidden: config.forbidden ?? [] }, validate: true, outputType: 'err' });
    const output = typeof result.output === 'string' ? result.output : JSON.stringify(result.output);
    expect(result.exitCode, output).toBe(0);
  }, 120_000);
});
