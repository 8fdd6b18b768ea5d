// The command-line options of a benchmark script: `--name` flags and `--name value` options.

const argv = process.argv.slice(2);

/** Whether `--name` was given. */
export const flag = (name: string): boolean => argv.includes(name);

/** The value after `--name`, if given. */
export const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
