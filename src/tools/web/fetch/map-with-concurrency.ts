/** Maps items through an async function, at most `limit` at a time, keeping input order. */
export async function mapWithConcurrency<T, R>(options: {
  readonly items: readonly T[];
  readonly limit: number;
  readonly run: (item: T, index: number) => Promise<R>;
}): Promise<R[]> {
  const { items, run } = options;
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await run(items[index] as T, index);
    }
  };
  const workers = Array.from({ length: Math.min(Math.max(1, options.limit), items.length) }, worker);
  await Promise.all(workers);
  return results;
}
