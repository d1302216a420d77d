/** `npm run bench`: every benchmark, one after the other, each printing its own figures. */
import { runTurnBench } from './turn-bench.js';

await runTurnBench();
