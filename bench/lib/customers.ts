import fs from 'node:fs';
import { finished } from 'node:stream/promises';

// The customers the import benchmarks write to an NDJSON file (bench/lists.ts, bench/imports.ts):
// the same rows in both, so their import times compare.

export interface BenchCustomer {
  remote_id: number;
  email: string;
  first_name: string;
  last_name: string;
  phone: string;
  birthday: string;
}

export const benchCustomer = (i: number): BenchCustomer => ({
  remote_id: i,
  email: `customer${i}@example.com`,
  first_name: `First${i % 997}`,
  last_name: `Last${i % 991}`,
  phone: `+1 555 ${String(i % 10_000).padStart(4, '0')}`,
  birthday: `1990-01-${String(1 + (i % 28)).padStart(2, '0')}`,
});

/** Customers 1 to `count`, one JSON object a line. */
export async function writeCustomers(file: string, count: number): Promise<void> {
  const out = fs.createWriteStream(file);
  for (let i = 1; i <= count; i += 10_000) {
    let chunk = '';
    for (let k = i; k < Math.min(count + 1, i + 10_000); k++) chunk += `${JSON.stringify(benchCustomer(k))}\n`;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  out.end();
  await finished(out);
}
