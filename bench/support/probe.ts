// An unrelated request timed without pause from a process of its own (the benchmark's process is
// busy with the load it makes), for a whole run: each sample is its end time and its latency, and
// the samples of a phase are those that ended while it ran.

import { spawn } from 'node:child_process';

const PROBE = `(async()=>{for(;;){const s=performance.now();await fetch(process.argv[1]).then(r=>r.arrayBuffer());const e=performance.now();process.stdout.write((performance.timeOrigin+e)+' '+(e-s)+'\\n')}})()`;

export interface Probe {
  /** The latencies (ms) of the requests that ended while `phase` ran. */
  during(phase: Promise<unknown>): Promise<number[]>;
  stop(): void;
}

export function startProbe(url: string): Probe {
  const child = spawn(process.execPath, ['-e', PROBE, url], { stdio: ['ignore', 'pipe', 'inherit'] });
  const samples: { at: number; ms: number }[] = [];
  let partial = '';
  child.stdout.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop()!;
    for (const l of lines) {
      const [at, ms] = l.split(' ').map(Number);
      samples.push({ at: at!, ms: ms! });
    }
  });
  const now = () => performance.timeOrigin + performance.now();
  return {
    async during(phase) {
      const from = now();
      await phase.catch(() => undefined);
      const to = now();
      return samples.filter((x) => x.at >= from && x.at <= to).map((x) => x.ms);
    },
    stop: () => void child.kill('SIGTERM'),
  };
}
