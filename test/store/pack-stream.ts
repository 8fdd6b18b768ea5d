// A pack stream as a statement over test_packs selects it (StoreLayout.packStream), made here
// from its definition for the tests of the folds: per build its seq and start (-1: none) as 8-byte
// integers, the lengths of its runs and failures as 4-byte ones, all big-endian, then the two
// packs (runs null: the stream without them).

export type StreamedBuild = readonly [seq: number, start: number | null, runs: Buffer | null, failures: Buffer | null];

export function packStreamOf(builds: readonly StreamedBuild[]): Buffer {
  return Buffer.concat(
    builds.flatMap(([seq, start, runs, failures]) => {
      const header = Buffer.alloc(24);
      header.writeBigUInt64BE(BigInt(seq), 0);
      header.writeBigInt64BE(BigInt(start ?? -1), 8);
      header.writeUInt32BE(runs?.length ?? 0, 16);
      header.writeUInt32BE(failures?.length ?? 0, 20);
      return [header, runs ?? Buffer.alloc(0), failures ?? Buffer.alloc(0)];
    }),
  );
}
