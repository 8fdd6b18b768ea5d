// `buildscope run`'s background sender: started detached when the wrapped command has ended and
// its build is in the spool (`node send-spooled.js BUILD_ID`, the settings in its environment).
// It sends that build, then other spooled ones (common-send.ts sendSpooled); what it cannot send
// stays in the spool for the next build or `buildscope agent flush`. Nobody waits for it.

import { pathToFileURL } from 'node:url';
import { agentSettings, sendSpooled } from '../common-send.js';
import { buildIdSource } from '../contract.js';

const [buildId] = process.argv.slice(2);
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && buildId !== undefined && new RegExp(`^${buildIdSource()}$`).test(buildId)) {
  sendSpooled(agentSettings(process.env), buildId).catch(() => undefined);
}
