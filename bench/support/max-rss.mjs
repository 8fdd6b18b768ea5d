// Preloaded (node --import) into a command the benchmark runs, to report that process's peak
// resident set size (every thread) at exit, in kilobytes, to the file BUILDSCOPE_MAX_RSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.BUILDSCOPE_MAX_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
