const waiting: (() => void)[] = [];
let releasing = false;

/**
 * Resolves on a later turn of the event loop, one caller per turn, in order. Work that can
 * wait a few milliseconds but must not crowd out I/O goes through it: between any two callers
 * the loop polls its sockets again. Ending many cancelled turns is such work: when 200
 * clients leave at once, each departure must abort its turn's model request and tools at
 * once, and the storing and streaming of the turns' ends (a few milliseconds each) come after,
 * one at a time, instead of all running before the next departure is seen.
 */
export function onePerLoopTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    if (!releasing) {
      releasing = true;
      setImmediate(releaseNext);
    }
  });
}

function releaseNext(): void {
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(releaseNext);
  else releasing = false;
}
