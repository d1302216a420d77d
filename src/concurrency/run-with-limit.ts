/** Runs `task` for each item with at most `limit` running at once; results keep input order. */
export async function runWithLimit<TItem, TResult>(options: {
  readonly items: readonly TItem[];
  readonly limit: number;
  readonly task: (item: TItem, index: number) => Promise<TResult>;
}): Promise<TResult[]> {
  const { items, limit, task } = options;
  const results = new Array<TResult>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await task(items[index] as TItem, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
