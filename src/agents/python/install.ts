// The pytest plugin ships in this package as plain Python (pylib/buildscope_pytest.py, standard
// library only). Two ways in: `pytest -p buildscope_pytest` with pylib/ on PYTHONPATH, or installed
// into a virtual environment as a tiny distribution whose `pytest11` entry point makes pytest load
// it on its own (no -p, no PYTHONPATH).

import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REDACTION_PATTERNS_FILE } from '../../store/ingest/redact.js';
import { packageRoot, packageVersion } from '../common-build.js';
import { AGENT_CONTRACT_FILE } from '../contract.js';

export const PYTHON_MODULE = 'buildscope_pytest';

/** The directory holding buildscope_pytest.py: what goes on PYTHONPATH. */
export function pythonPluginDir(): string {
  return join(packageRoot(), 'src', 'agents', 'python', 'pylib');
}

/** What `buildscope agent python` prints. */
export function pythonInstructions(server: string | undefined): string {
  const dir = pythonPluginDir();
  return [
    '# Record pytest sessions in Buildscope (pybuild builds). Either, for one run:',
    `PYTHONPATH=${dir}\${PYTHONPATH:+:$PYTHONPATH} pytest -p ${PYTHON_MODULE}`,
    '# or once per virtual environment (pytest then loads the plugin by itself):',
    'npx buildscope agent python --install [--venv DIR]   # DIR defaults to $VIRTUAL_ENV',
    '# Where builds go (or server=... and accessKey=... in ~/.buildscope/agent.properties):',
    `export BUILDSCOPE_SERVER=${server ?? 'http://localhost:5080'}`,
    'export BUILDSCOPE_ACCESS_KEY=<access key with the publishScan permission>',
    '# Optional: BUILDSCOPE_REDACT=user,hostname,ip  BUILDSCOPE_REDACT_VALUES=s1,s2  BUILDSCOPE_TAGS=a,b  BUILDSCOPE_VALUES="k=v;k2=v2"  BUILDSCOPE_DISABLE=1',
    '',
  ].join('\n');
}

export class InstallError extends Error {
  override readonly name = 'InstallError';
}

/**
 * Installs the plugin into a virtual environment: the module into its site-packages and a
 * `buildscope_pytest-<version>.dist-info` with a `pytest11` entry point. Returns site-packages.
 */
export function installIntoVenv(venv: string): string {
  const python = ['bin/python', 'bin/python3', 'Scripts/python.exe'].map((p) => join(venv, p)).find((p) => existsSync(p));
  if (python === undefined) throw new InstallError(`${venv} is not a virtual environment (no bin/python in it)`);
  let sitePackages: string;
  try {
    sitePackages = execFileSync(python, ['-c', "import sysconfig; print(sysconfig.get_paths()['purelib'])"], { encoding: 'utf8', timeout: 30_000 }).trim();
  } catch (e) {
    throw new InstallError(`cannot ask ${python} for its site-packages: ${(e as Error).message.split('\n')[0]}`);
  }
  mkdirSync(sitePackages, { recursive: true });
  copyFileSync(join(pythonPluginDir(), `${PYTHON_MODULE}.py`), join(sitePackages, `${PYTHON_MODULE}.py`));
  // The patterns and the contract every agent shares: the installed module finds them next to itself.
  copyFileSync(REDACTION_PATTERNS_FILE, join(sitePackages, `${PYTHON_MODULE}_redaction.json`));
  copyFileSync(AGENT_CONTRACT_FILE, join(sitePackages, `${PYTHON_MODULE}_contract.json`));
  const version = packageVersion();
  const distInfo = join(sitePackages, `${PYTHON_MODULE}-${version}.dist-info`);
  rmSync(distInfo, { recursive: true, force: true });
  mkdirSync(distInfo);
  writeFileSync(join(distInfo, 'METADATA'), `Metadata-Version: 2.1\nName: ${PYTHON_MODULE}\nVersion: ${version}\nSummary: Records pytest sessions in Buildscope\n`);
  writeFileSync(join(distInfo, 'entry_points.txt'), `[pytest11]\nbuildscope = ${PYTHON_MODULE}\n`);
  writeFileSync(join(distInfo, 'INSTALLER'), 'buildscope\n');
  writeFileSync(join(distInfo, 'RECORD'), `${PYTHON_MODULE}.py,,\n${PYTHON_MODULE}_redaction.json,,\n${PYTHON_MODULE}_contract.json,,\n${PYTHON_MODULE}-${version}.dist-info/METADATA,,\n${PYTHON_MODULE}-${version}.dist-info/entry_points.txt,,\n${PYTHON_MODULE}-${version}.dist-info/INSTALLER,,\n${PYTHON_MODULE}-${version}.dist-info/RECORD,,\n`);
  return sitePackages;
}
