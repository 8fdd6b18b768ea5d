// The one order of names in a comparison of two builds: by UTF-16 code units, as `Array.sort`
// orders strings, never by locale, so that the order is the same on every server and whichever
// build is A (compare.ts swaps only).

export const compareText = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
