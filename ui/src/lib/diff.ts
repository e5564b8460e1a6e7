// Which lines differ between two texts (longest common subsequence over lines), for Compare.

export interface DiffSides {
  /** For each line of `a`: true when it is not in the common part. */
  a: boolean[];
  b: boolean[];
}

export function lineDiff(aText: string, bText: string): DiffSides {
  const a = aText.split("\n");
  const b = bText.split("\n");
  // Beyond this size the table gets large; mark lines by plain position instead.
  if (a.length * b.length > 4_000_000) {
    return { a: a.map((l, i) => l !== b[i]), b: b.map((l, i) => l !== a[i]) };
  }
  const n = a.length;
  const m = b.length;
  const table: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    const row = table[i] as Uint32Array;
    const below = table[i + 1] as Uint32Array;
    for (let j = m - 1; j >= 0; j -= 1) {
      row[j] = a[i] === b[j] ? (below[j + 1] as number) + 1 : Math.max(below[j] as number, row[j + 1] as number);
    }
  }
  const outA = new Array<boolean>(n).fill(true);
  const outB = new Array<boolean>(m).fill(true);
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      outA[i] = false;
      outB[j] = false;
      i += 1;
      j += 1;
    } else if ((table[i + 1] as Uint32Array)[j]! >= (table[i] as Uint32Array)[j + 1]!) i += 1;
    else j += 1;
  }
  return { a: outA, b: outB };
}
