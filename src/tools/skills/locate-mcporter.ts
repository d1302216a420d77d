import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CommandSandbox } from '../../sandbox/command-sandbox.js';
import type { SandboxAdditions } from '../../sandbox/sandbox-additions.js';
import { isJsonObject } from '../../json.js';
import { shellQuote } from './shell-quote.js';

/** Where the service's node_modules folder appears inside the sandbox. */
export const SANDBOX_NODE_MODULES = '/opt/turn-runtime/node_modules';

/** The mcporter CLI installed with the service. */
export interface McporterInstall {
  /** The CLI script on the host (`…/node_modules/mcporter/dist/cli.js`, `#!/usr/bin/env node`). */
  readonly cliPath: string;
  /**
   * What a bubblewrap sandbox needs to run it as `mcporter`: the node_modules folder that holds
   * it (and its dependencies) bound read-only, and a `mcporter` command that starts its CLI.
   */
  readonly sandboxAdditions: SandboxAdditions;
}

/**
 * The sandbox limits each process's address space (RLIMIT_AS), and Node's WebAssembly
 * reserves more than that for its guard regions: without this flag, anything that uses
 * WebAssembly (fetch, hence every Streamable HTTP server; tsx) dies with "Out of memory".
 * mcporter hands its environment to the stdio servers it starts, so they get the flag too.
 */
const WASM_FLAG = '--disable-wasm-trap-handler';

function launcherScript(cliInside: string): string {
  const flag = process.allowedNodeEnvironmentFlags.has(WASM_FLAG) ? [`export NODE_OPTIONS="${WASM_FLAG}\${NODE_OPTIONS:+ $NODE_OPTIONS}"`] : [];
  return ['#!/bin/sh', '# mcporter, installed with turn-runtime', ...flag, `exec node ${shellQuote(cliInside)} "$@"`, ''].join('\n');
}

/**
 * Finds the mcporter package the way Node would from this file: in the nearest `node_modules`
 * up the tree (the service's own dependency, /app/node_modules in the image). The package's
 * `exports` hide its package.json from `require.resolve`, hence the walk. Undefined when it is
 * not installed; skills then say their MCP tools are unavailable.
 */
export async function locateMcporter(options: { readonly from?: string } = {}): Promise<McporterInstall | undefined> {
  let folder = options.from ?? path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const nodeModules = path.join(folder, 'node_modules');
    const bin = await readBin(path.join(nodeModules, 'mcporter', 'package.json'));
    if (bin !== undefined) {
      const cliPath = path.join(nodeModules, 'mcporter', bin);
      const inside = path.posix.join(SANDBOX_NODE_MODULES, path.relative(nodeModules, cliPath).split(path.sep).join('/'));
      return {
        cliPath,
        sandboxAdditions: { readOnlyBinds: [{ source: nodeModules, target: SANDBOX_NODE_MODULES }], commands: [{ name: 'mcporter', script: launcherScript(inside) }] },
      };
    }
    const parent = path.dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
}

/**
 * The shell words that start mcporter from `run_command`: `mcporter` in a bubblewrap sandbox
 * (built with the install's additions; its launcher runs the `node` first on PATH, the
 * service's own), the service's Node and the CLI's host path when commands run on the bare
 * host, undefined when there is no sandbox or no mcporter.
 */
export function mcporterCommand(options: { readonly install: McporterInstall | undefined; readonly sandbox: CommandSandbox | undefined }): string | undefined {
  const { install, sandbox } = options;
  if (install === undefined || sandbox === undefined) return undefined;
  if (sandbox.kind === 'bubblewrap') return 'mcporter';
  // The bare host has the same address-space limit, and no launcher script to set the flag.
  return `${process.allowedNodeEnvironmentFlags.has(WASM_FLAG) ? `NODE_OPTIONS=${WASM_FLAG} ` : ''}${shellQuote(process.execPath)} ${shellQuote(install.cliPath)}`;
}

async function readBin(packageFile: string): Promise<string | undefined> {
  try {
    const manifest: unknown = JSON.parse(await readFile(packageFile, 'utf8'));
    if (!isJsonObject(manifest) || manifest['name'] !== 'mcporter') return undefined;
    const bin = manifest['bin'];
    const relative = typeof bin === 'string' ? bin : isJsonObject(bin) && typeof bin['mcporter'] === 'string' ? bin['mcporter'] : undefined;
    // A bin that climbs out of the package is not one we run.
    return relative !== undefined && !path.normalize(relative).startsWith('..') && !path.isAbsolute(relative) ? relative : undefined;
  } catch {
    return undefined;
  }
}
