/** `npm run bench`: every benchmark, one after the other, each printing its own figures. */
import { runBrainRecallBench } from './brain-recall-bench.js';
import { runLoadBench } from './load-bench.js';
import { runToolSearchBench } from './tool-search-bench.js';
import { runTurnBench } from './turn-bench.js';
import { runWorkflowBench } from './workflow-bench.js';

await runTurnBench();
await runLoadBench();
await runToolSearchBench();
await runBrainRecallBench();
await runWorkflowBench();
