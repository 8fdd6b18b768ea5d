// The zero-touch npm agent's sender: started detached by preload.cjs when the outermost package
// manager process exits (`node finish.js RECORD_FILE BUILD_ID`). It makes the build from the
// record file and sends it (or spools it), then removes the record. Nobody waits for it.

import { rmSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { AgentBuild } from '../common-build.js';
import { agentSettings, sendBuild } from '../common-send.js';
import { buildIdSource } from '../contract.js';
import { jsBuild, readRecord } from './js-build.js';

export async function finishRecorded(recordFile: string, buildId: string, env: NodeJS.ProcessEnv): Promise<AgentBuild | undefined> {
  const record = readRecord(recordFile);
  const command = record.find((r) => r.kind === 'command');
  const exit = record.find((r) => r.kind === 'exit');
  if (command?.kind !== 'command') return undefined;
  const build = jsBuild(
    buildId,
    {
      argv: command.argv,
      cwd: command.cwd,
      startedAt: command.t,
      finishedAt: exit?.t ?? Date.now(),
      exitCode: exit?.kind === 'exit' ? exit.code : 1,
      env,
    },
    record,
  );
  await sendBuild(agentSettings(env), build);
  rmSync(recordFile, { force: true });
  return build;
}

const [recordFile, buildId] = process.argv.slice(2);
const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && recordFile !== undefined && buildId !== undefined && new RegExp(`^${buildIdSource()}$`).test(buildId)) {
  finishRecorded(recordFile, buildId, process.env).catch(() => undefined);
}
