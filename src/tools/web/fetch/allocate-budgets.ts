/**
 * Splits `total` characters between texts of the given lengths: each gets an equal share,
 * and what a short text does not need is shared among the longer ones (water-filling).
 * Returns one budget per text, in input order.
 */
export function allocateBudgets(lengths: readonly number[], total: number): number[] {
  const budgets = new Array<number>(lengths.length).fill(0);
  const order = lengths.map((length, index) => ({ length, index })).sort((left, right) => left.length - right.length);
  let remaining = total;
  for (const [position, { length, index }] of order.entries()) {
    const share = Math.floor(remaining / (order.length - position));
    const given = Math.min(length, share);
    budgets[index] = given;
    remaining -= given;
  }
  return budgets;
}
