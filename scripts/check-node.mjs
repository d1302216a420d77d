import { pathToFileURL } from 'node:url';

// Refuses a Node.js the service does not support, and names the command that brings one.
// npm runs it before `npm ci`, `npm start` and `npm test` (package.json's pre-scripts), and
// scripts/with-node asks it whether the machine's Node will do. Plain JavaScript that any
// Node since 12 runs, so the old Node it refuses can run it. Keep the rule equal to
// package.json's `engines.node` (test/house/node-version.test.ts checks both agree).

/** Whether a Node.js version (`22.19.0`) is one the service supports. */
export function isSupportedNode(version) {
  const [major, minor] = version.split('.').map(Number);
  return major === 22 ? minor >= 19 : major >= 24;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly && !isSupportedNode(process.versions.node)) {
  if (!process.argv.includes('--quiet')) {
    process.stderr.write(
      [
        `turn-runtime needs Node.js 22.19 or later on the 22 line, or 24 or later (tested on 24, 22 and 26);`,
        `this is ${process.version} (${process.execPath}).`,
        '',
        'scripts/with-node runs a command with a supported Node: the machine’s when it is one, otherwise',
        'the project’s own (the version in .node-version, installed from the npm registry into .node/):',
        '',
        '  scripts/with-node npm ci && scripts/with-node npm start',
        '',
      ].join('\n'),
    );
  }
  process.exit(1);
}
